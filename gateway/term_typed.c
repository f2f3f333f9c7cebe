/* term_typed.c — see term_typed.h. */
#include "term_typed.h"

#include <stdio.h>
#include <string.h>

/* Hands out n bytes from p in pieces of at most TERM_TYPED_MAX. */
static void
emit_pieces(const char *origin, const uint8_t *p, size_t n, term_typed_emit_fn emit, void *ud)
{
    while (n) {
        size_t k = n > TERM_TYPED_MAX ? TERM_TYPED_MAX : n;
        emit(ud, origin, p, k);
        p += k;
        n -= k;
    }
}

void
term_typed_flush(term_typed_t *t, term_typed_emit_fn emit, void *ud)
{
    if (!t->held.len)
        return;
    emit_pieces(t->origin, (const uint8_t *)t->held.data, t->held.len, emit, ud);
    buf_clear(&t->held);
}

/* One past the last CR or LF in p[0..n), 0 when there is none. */
static size_t
after_last_line_end(const uint8_t *p, size_t n)
{
    for (size_t i = n; i > 0; i--)
        if (p[i - 1] == '\r' || p[i - 1] == '\n')
            return i;
    return 0;
}

void
term_typed_feed(term_typed_t *t, const char *origin, const uint8_t *p, size_t n,
                term_typed_emit_fn emit, void *ud)
{
    if (!n)
        return;
    if (t->held.len && strcmp(t->origin, origin) != 0)
        term_typed_flush(t, emit, ud);
    snprintf(t->origin, sizeof t->origin, "%s", origin);
    size_t lines = after_last_line_end(p, n);
    if (lines) {
        /* the held start of the line and this message's lines: one piece when they fit */
        buf_append(&t->held, p, lines);
        term_typed_flush(t, emit, ud);
        p += lines;
        n -= lines;
    }
    buf_append(&t->held, p, n);
    if (t->held.len >= TERM_TYPED_MAX)
        term_typed_flush(t, emit, ud);
}

void
term_typed_free(term_typed_t *t)
{
    buf_free(&t->held);
}
