/* fuzz_frame.c — frame_decode over arbitrary bytes, and json_parse of every JSON payload.
 * Walks the input frame by frame as a receiver would: decode, skip invalid frames of a sane
 * size, stop at an oversized one or at a partial frame. */
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "json_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t off = 0;
    while (off < size) {
        frame_t f;
        err_t e;
        int r = frame_decode(data + off, size - off, 64 * 1024, &f, &e);
        if (r == 0 || r == -ERR_TOO_BIG)
            break;
        if (r < 0) {
            off += FRAME_HEADER_LEN + (size_t)f.len;
            continue;
        }
        if ((size_t)r != FRAME_HEADER_LEN + (size_t)f.len ||
            f.payload != data + off + FRAME_HEADER_LEN)
            __builtin_trap();
        switch (f.type) {
        case FRAME_HELLO:
        case FRAME_OPEN:
        case FRAME_JSON:
        case FRAME_CLOSE:
        case FRAME_ERROR: {
            json_object *o = json_parse((const char *)f.payload, f.len, &e);
            if (o) {
                size_t len;
                json_text(o, &len);
            }
            json_object_put(o);
            break;
        }
        case FRAME_CREDIT: (void)frame_get_u32(f.payload); break;
        default: break;
        }
        (void)frame_type_name(f.type);
        off += (size_t)r;
    }
    return 0;
}
