/* fuzz_jupyter_wire.c — the Jupyter wire decoder (plugins/jupyter/wire.c) over arbitrary
 * frames: what a kernel sends the helper (a kernel runs the agent's code, so its messages are
 * untrusted) must never crash it. Input: frames as [len_lo len_hi bytes...]; the first input
 * byte says whether the frames are signed with the test key first (so the JSON decoding past
 * the signature check is reached too). A message that decodes has the three objects. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/jupyter/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KEY        "fuzz-key"
#define MAX_FRAMES 16

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool sign = data[0] & 1;
    data++;
    size--;
    jw_frame_t f[MAX_FRAMES + 2];
    size_t n = 0;
    if (sign) {
        f[n++] = (jw_frame_t){JW_DELIM, strlen(JW_DELIM)};
        f[n++] = (jw_frame_t){"", 0}; /* the signature, filled below */
    }
    while (size >= 2 && n < MAX_FRAMES + 2) {
        size_t len = (size_t)data[0] | (size_t)data[1] << 8;
        data += 2;
        size -= 2;
        if (len > size)
            len = size;
        f[n++] = (jw_frame_t){len ? (const void *)data : "", len};
        data += len;
        size -= len;
    }
    char sig[65];
    if (sign && n >= 6) {
        jw_sign(KEY, &f[2], sig);
        f[1] = (jw_frame_t){sig, strlen(sig)};
    }
    jw_msg_t m;
    err_t err = {0};
    if (jw_parse(KEY, f, n, &m, &err) == 0) {
        if (!m.header || !m.parent || !m.content || !m.msg_type || !m.parent_id)
            __builtin_trap();
        jw_msg_free(&m);
    } else if (!err.msg[0]) {
        __builtin_trap(); /* a refusal always says why */
    }
    return 0;
}
