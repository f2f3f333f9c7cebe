/* term_ring.h — a terminal's output numbered by byte offset: the last `max` bytes, kept so a
 * client that lost its connection can take the terminal back from the offset it has (docs/api.md,
 * "Re-attaching"). Offsets count every byte the terminal ever produced; the ring holds
 * [start, end). Memory grows with use, up to max. */
#ifndef SP_TERM_RING_H
#define SP_TERM_RING_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *data;
    size_t cap, max;     /* allocated, and the bound */
    uint64_t start, end; /* offsets held: [start, end) */
} term_ring_t;

void term_ring_init(term_ring_t *r, size_t max);
/* Appends n bytes; past max the oldest are dropped (start moves up). */
void term_ring_append(term_ring_t *r, const void *p, size_t n);
/* The bytes from offset off on that lie together in memory (fewer than end - off at the wrap):
 * *p and their count; 0 when off is outside [start, end). */
size_t term_ring_peek(const term_ring_t *r, uint64_t off, const uint8_t **p);
void term_ring_free(term_ring_t *r);

#endif
