/* ring.c — offset-addressed byte ring. */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

void
ring_init(ring_t *r, size_t cap)
{
    r->data = NULL; /* allocated on first write: idle processes cost nothing */
    r->cap = cap;
    r->start = r->end = 0;
}

void
ring_free(ring_t *r)
{
    free(r->data);
    r->data = NULL;
}

const char *
ring_peek(const ring_t *r, uint64_t off, size_t *n)
{
    if (off < r->start || off >= r->end || !r->data) {
        *n = 0;
        return NULL;
    }
    size_t pos = (size_t)(off % r->cap);
    size_t avail = (size_t)(r->end - off);
    *n = r->cap - pos < avail ? r->cap - pos : avail;
    return r->data + pos;
}

char *
ring_reserve(ring_t *r, size_t *n)
{
    if (!r->data)
        r->data = xmalloc(r->cap);
    size_t pos = (size_t)(r->end % r->cap);
    if (*n > r->cap - pos)
        *n = r->cap - pos;
    return r->data + pos;
}

void
ring_commit(ring_t *r, size_t n)
{
    r->end += n;
    if (r->end - r->start > r->cap)
        r->start = r->end - r->cap;
}
