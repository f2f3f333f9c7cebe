/* term_ring.c — byte offset o lives at data[o % cap]; growing re-lays the held bytes out for
 * the new cap. */
#include "term_ring.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define TERM_RING_MIN (16 * 1024)

void
term_ring_init(term_ring_t *r, size_t max)
{
    *r = (term_ring_t){.max = max < TERM_RING_MIN ? TERM_RING_MIN : max};
}

static void
copy_out(const term_ring_t *r, uint64_t off, uint8_t *dst, size_t n)
{
    while (n) {
        const uint8_t *p = NULL;
        size_t k = term_ring_peek(r, off, &p);
        if (!k)
            return; /* callers copy only [start, end) */
        if (k > n)
            k = n;
        memcpy(dst, p, k);
        dst += k;
        off += k;
        n -= k;
    }
}

/* Room for `need` bytes in all (at most max). */
static void
grow(term_ring_t *r, size_t need)
{
    if (need <= r->cap || r->cap == r->max)
        return;
    size_t cap = r->cap ? r->cap : TERM_RING_MIN;
    while (cap < need && cap < r->max)
        cap *= 2;
    if (cap > r->max)
        cap = r->max;
    uint8_t *d = xmalloc(cap);
    size_t held = (size_t)(r->end - r->start);
    if (held) {
        /* place the held bytes where offset % cap says */
        uint8_t *tmp = xmalloc(held);
        copy_out(r, r->start, tmp, held);
        size_t at = (size_t)(r->start % cap), first = cap - at < held ? cap - at : held;
        memcpy(d + at, tmp, first);
        memcpy(d, tmp + first, held - first);
        free(tmp);
    }
    free(r->data);
    r->data = d;
    r->cap = cap;
}

void
term_ring_append(term_ring_t *r, const void *p, size_t n)
{
    const uint8_t *b = p;
    if (n > r->max) { /* only the last max bytes can stay */
        r->start = r->end + (n - r->max);
        r->end = r->start;
        b += n - r->max;
        n = r->max;
    }
    grow(r, (size_t)(r->end - r->start) + n);
    while (n) {
        size_t at = (size_t)(r->end % r->cap), k = r->cap - at < n ? r->cap - at : n;
        memcpy(r->data + at, b, k);
        r->end += k;
        b += k;
        n -= k;
    }
    if (r->end - r->start > r->cap)
        r->start = r->end - r->cap;
}

size_t
term_ring_peek(const term_ring_t *r, uint64_t off, const uint8_t **p)
{
    if (off < r->start || off >= r->end || !r->cap)
        return 0;
    size_t at = (size_t)(off % r->cap), k = r->cap - at;
    if (k > r->end - off)
        k = (size_t)(r->end - off);
    *p = r->data + at;
    return k;
}

void
term_ring_free(term_ring_t *r)
{
    free(r->data);
    *r = (term_ring_t){.max = r->max};
}
