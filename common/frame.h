/* frame.h — the executor protocol's frame codec: pure functions over bytes, no I/O.
 *
 * Wire format (all integers big-endian), see docs/protocol.md:
 *   0  u32 payload length
 *   4  u8  type     (frame_type_t)
 *   5  u8  flags    (FRAME_FLAG_*)
 *   6  u16 reserved (0)
 *   8  u32 channel  (0 = the connection itself)
 *  12  payload: JSON text for HELLO/OPEN/JSON/CLOSE/ERROR, raw bytes for DATA,
 *      u32 byte count for CREDIT, empty for EOF, opaque for PING/PONG. */
#ifndef SP_FRAME_H
#define SP_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define FRAME_HEADER_LEN     12
#define FRAME_MAX_PAYLOAD    (1u << 20) /* default limit; a bigger frame is refused and skipped */
#define FRAME_DATA_CHUNK     (256u * 1024) /* most a sender puts in one DATA frame */
#define FRAME_DEFAULT_WINDOW (256u * 1024) /* initial credit per channel and direction */

typedef enum {
    FRAME_HELLO = 1,  /* s->c on connect: version, limits; c->s: token (TCP) */
    FRAME_OPEN = 2,   /* c->s: open a channel with a JSON request */
    FRAME_DATA = 3,   /* raw bytes (output, stdin, file chunks) */
    FRAME_JSON = 4,   /* a JSON message on an open channel */
    FRAME_CREDIT = 5, /* grant the peer N more DATA bytes on the channel */
    FRAME_EOF = 6,    /* no more DATA in this direction */
    FRAME_CLOSE = 7,  /* s->c: channel finished with its JSON result; c->s: detach/cancel */
    FRAME_ERROR = 8,  /* s->c: protocol-level error, JSON {code, message} */
    FRAME_PING = 9,
    FRAME_PONG = 10,
    FRAME_TYPE_MAX = FRAME_PONG,
} frame_type_t;

#define FRAME_FLAG_STDERR 0x01 /* DATA: bytes belong to stderr */

typedef struct {
    uint32_t len;
    uint8_t type;
    uint8_t flags;
    uint32_t channel;
    const uint8_t *payload; /* borrowed from the input buffer */
} frame_t;

/* Writes a 12-byte header into out. */
void frame_encode_header(uint8_t out[FRAME_HEADER_LEN], uint8_t type, uint8_t flags,
                         uint32_t channel, uint32_t len);

/* Decodes one frame from buf[0..n).
 * Returns the frame's total size (> 0) with *f filled, 0 when more bytes are needed,
 * or < 0 when the frame is invalid (-ERR_PROTO) or too big (-ERR_TOO_BIG). On a negative
 * return f->len/type/channel still describe the header, so the caller can reply and skip
 * FRAME_HEADER_LEN + f->len bytes to stay in sync. */
int frame_decode(const uint8_t *buf, size_t n, uint32_t max_payload, frame_t *f, err_t *err);

const char *frame_type_name(uint8_t type);

static inline uint32_t
frame_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void
frame_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

#endif
