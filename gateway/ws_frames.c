/* ws_frames.c — the frame-header watch (ws_frames.h). A frame header is 2 bytes, then 0, 2 or 8
 * bytes of extended length, then the 4-byte mask key every client frame must carry. */
#include "ws_frames.h"

void
ws_frames_init(ws_frames_t *f, uint64_t max_message)
{
    *f = (ws_frames_t){.max_message = max_message, .phase = WSF_HANDSHAKE};
}

static void
fail(ws_frames_t *f, uint16_t code, const char *reason)
{
    f->phase = WSF_FAILED;
    f->code = code;
    f->reason = reason;
}

/* Header bytes needed once the first two are known. */
static uint8_t
header_len(const uint8_t *hdr)
{
    uint8_t len7 = hdr[1] & 0x7F;
    return (uint8_t)(2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + 4);
}

/* Judges the second header byte: returns false (and fails f) if the frame is refused. */
static bool
check_second_byte(ws_frames_t *f)
{
    bool control = f->hdr[0] & 0x08;
    if (!(f->hdr[1] & 0x80)) {
        fail(f, WS_CLOSE_PROTOCOL_ERROR, "client frames must be masked");
        return false;
    }
    if (control && (f->hdr[1] & 0x7F) > 125) {
        fail(f, WS_CLOSE_PROTOCOL_ERROR, "control frame over 125 bytes");
        return false;
    }
    return true;
}

/* Judges a whole header: the payload length against the message bound. */
static bool
check_length(ws_frames_t *f)
{
    uint8_t len7 = f->hdr[1] & 0x7F;
    uint64_t len = len7;
    if (len7 == 126) {
        len = (uint64_t)f->hdr[2] << 8 | f->hdr[3];
    } else if (len7 == 127) {
        len = 0;
        for (int i = 2; i < 10; i++)
            len = len << 8 | f->hdr[i];
        /* A set top bit is malformed as well as too big: 1009 tells the client what matters. */
    }
    uint8_t opcode = f->hdr[0] & 0x0F;
    if (!(opcode & 0x08)) {
        /* Text or binary start a message, a continuation adds to it; a wrong sequence is
         * lws' to refuse (1002), the sum only has to stay within the bound. */
        uint64_t before = opcode == 0 ? f->msg_len : 0;
        if (len > f->max_message || before + len > f->max_message) {
            fail(f, WS_CLOSE_TOO_BIG, "message too big");
            return false;
        }
        f->msg_len = before + len;
    }
    f->left = len;
    return true;
}

size_t
ws_frames_scan(ws_frames_t *f, const uint8_t *p, size_t n)
{
    size_t i = 0;
    size_t frame_start = 0; /* where the current header began in p (0 if in an earlier call) */
    while (i < n) {
        switch (f->phase) {
        case WSF_FAILED: return 0;
        case WSF_HANDSHAKE: {
            /* The client may not send frames before the response, but may send them right
             * behind the request, in the same read. */
            static const char end[] = "\r\n\r\n", upg[] = "\nupgrade:";
            uint8_t c = p[i++];
            if (c == (uint8_t)end[f->crlf])
                f->crlf++;
            else
                f->crlf = c == '\r' ? 1 : 0;
            uint8_t lc = c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
            if (lc == (uint8_t)upg[f->upg])
                f->upg++;
            else
                f->upg = lc == '\n' ? 1 : 0;
            if (f->upg == sizeof upg - 1) {
                f->upgrade = true;
                f->upg = 0;
            }
            if (f->crlf == 4)
                f->phase = f->upgrade ? WSF_HEADER : WSF_PLAIN;
            break;
        }
        case WSF_PLAIN: return n;
        case WSF_HEADER:
            if (f->hdr_len == 0)
                frame_start = i;
            f->hdr[f->hdr_len++] = p[i++];
            if (f->hdr_len == 2 && !check_second_byte(f))
                return frame_start;
            if (f->hdr_len >= 2 && f->hdr_len == header_len(f->hdr)) {
                f->hdr_len = 0;
                if (!check_length(f))
                    return frame_start;
                if (f->left)
                    f->phase = WSF_PAYLOAD;
            }
            break;
        case WSF_PAYLOAD: {
            uint64_t take = n - i < f->left ? n - i : f->left;
            i += (size_t)take;
            f->left -= take;
            if (!f->left)
                f->phase = WSF_HEADER;
            break;
        }
        }
    }
    return n;
}
