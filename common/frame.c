/* frame.c — executor protocol frame codec. Pure; fuzzed by tests/fuzz/fuzz_frame.c. */
#include "frame.h"

void
frame_encode_header(uint8_t out[FRAME_HEADER_LEN], uint8_t type, uint8_t flags, uint32_t channel,
                    uint32_t len)
{
    frame_put_u32(out, len);
    out[4] = type;
    out[5] = flags;
    out[6] = 0;
    out[7] = 0;
    frame_put_u32(out + 8, channel);
}

int
frame_decode(const uint8_t *buf, size_t n, uint32_t max_payload, frame_t *f, err_t *err)
{
    if (n < FRAME_HEADER_LEN)
        return 0;
    f->len = frame_get_u32(buf);
    f->type = buf[4];
    f->flags = buf[5];
    f->channel = frame_get_u32(buf + 8);
    f->payload = NULL;
    if (f->len > max_payload)
        return err_set(err, ERR_TOO_BIG, "frame payload of %u bytes exceeds the limit of %u",
                       f->len, max_payload);
    if (f->type == 0 || f->type > FRAME_TYPE_MAX)
        return err_set(err, ERR_PROTO, "unknown frame type %u", f->type);
    if (buf[6] != 0 || buf[7] != 0)
        return err_set(err, ERR_PROTO, "reserved header bytes must be zero");
    if (f->type == FRAME_CREDIT && f->len != 4)
        return err_set(err, ERR_PROTO, "CREDIT frame must carry exactly 4 bytes");
    if (n - FRAME_HEADER_LEN < f->len)
        return 0;
    f->payload = buf + FRAME_HEADER_LEN;
    return (int)(FRAME_HEADER_LEN + f->len);
}

const char *
frame_type_name(uint8_t type)
{
    static const char *const names[] = {
        [FRAME_HELLO] = "HELLO", [FRAME_OPEN] = "OPEN",     [FRAME_DATA] = "DATA",
        [FRAME_JSON] = "JSON",   [FRAME_CREDIT] = "CREDIT", [FRAME_EOF] = "EOF",
        [FRAME_CLOSE] = "CLOSE", [FRAME_ERROR] = "ERROR",   [FRAME_PING] = "PING",
        [FRAME_PONG] = "PONG",
    };
    if (type == 0 || type > FRAME_TYPE_MAX)
        return "UNKNOWN";
    return names[type];
}
