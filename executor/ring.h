/* ring.h — a byte ring that remembers absolute offsets: the last `cap` bytes of a stream stay
 * readable by offset, so a client can re-attach and continue from where it was. */
#ifndef SP_RING_H
#define SP_RING_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *data;
    size_t cap;
    uint64_t start; /* absolute offset of the oldest retained byte */
    uint64_t end;   /* absolute offset one past the newest byte */
} ring_t;

void ring_init(ring_t *r, size_t cap);
void ring_free(ring_t *r);
/* Zero-copy append: a pointer to the contiguous space at the end (up to *n bytes, possibly
 * overwriting the oldest bytes), then ring_commit with what was written there. */
char *ring_reserve(ring_t *r, size_t *n);
void ring_commit(ring_t *r, size_t n);
/* Contiguous bytes available at absolute offset off (off clamped to start by the caller):
 * returns a pointer and sets *n (0 when off == end). */
const char *ring_peek(const ring_t *r, uint64_t off, size_t *n);

#endif
