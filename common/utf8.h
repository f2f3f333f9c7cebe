/* utf8.h — strict, incremental UTF-8 validation (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF), fed in pieces that may split a character anywhere: a WebSocket text
 * message arrives in fragments, and RFC 6455 wants it refused as soon as it cannot be UTF-8.
 * Pure, no allocation. */
#ifndef SP_UTF8_H
#define SP_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the check stands between pieces. Zero-initialised = at the start of a text. */
typedef struct {
    uint8_t need;   /* continuation bytes still owed by the current character */
    uint8_t lo, hi; /* the range the next continuation byte must fall in */
} utf8_state_t;

/* Checks p[0..n) as the next piece of the text. Returns 0, or -1 at the first byte that no
 * valid UTF-8 text can contain there (the state is then meaningless). */
int utf8_feed(utf8_state_t *st, const uint8_t *p, size_t n);

/* True when the text fed so far ends on a whole character (a valid text must, at its end). */
bool utf8_complete(const utf8_state_t *st);

#endif
