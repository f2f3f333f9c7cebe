/* buf.c — growable byte buffer. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

char *
buf_reserve(buf_t *b, size_t n)
{
    if (b->cap - b->len < n + 1 || !b->data) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap - b->len < n + 1)
            cap *= 2;
        b->data = xrealloc(b->data, cap);
        b->cap = cap;
    }
    return b->data + b->len;
}

void
buf_advance(buf_t *b, size_t n)
{
    b->len += n;
    b->data[b->len] = '\0';
}

void
buf_append(buf_t *b, const void *p, size_t n)
{
    if (n == 0) /* p may be NULL then; memcpy(.., NULL, 0) is still undefined */
        return;
    memcpy(buf_reserve(b, n), p, n);
    buf_advance(b, n);
}

void
buf_puts(buf_t *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

void
buf_printf(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    char *p = buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf_advance(b, (size_t)n);
}

void
buf_consume(buf_t *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
    } else {
        memmove(b->data, b->data + n, b->len - n);
        b->len -= n;
    }
    if (b->data)
        b->data[b->len] = '\0';
}

void
buf_clear(buf_t *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void
buf_free(buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *
buf_steal(buf_t *b)
{
    char *p = b->data ? b->data : xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}
