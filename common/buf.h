/* buf.h — binary-safe growable byte buffer (sds-like): reserve space, read into it, advance.
 * Data is always NUL-terminated past len for convenience; len counts only real bytes. */
#ifndef SP_BUF_H
#define SP_BUF_H

#include <stddef.h>

typedef struct {
    char *data;
    size_t len;
    size_t cap;
} buf_t;

/* clang-format off */
#define BUF_INIT {NULL, 0, 0}
/* clang-format on */

/* Ensures at least n free bytes after len; returns pointer to them. */
char *buf_reserve(buf_t *b, size_t n);
/* Marks n reserved bytes as filled. */
void buf_advance(buf_t *b, size_t n);
void buf_append(buf_t *b, const void *p, size_t n);
void buf_puts(buf_t *b, const char *s);
void buf_printf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drops the first n bytes. */
void buf_consume(buf_t *b, size_t n);
void buf_clear(buf_t *b);
void buf_free(buf_t *b);
/* Takes the data out (caller frees); b is left empty. Never NULL. */
char *buf_steal(buf_t *b);

#endif
