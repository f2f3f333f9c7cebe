/* fuzz_envd_wire.c — gateway/envd_wire on arbitrary bytes: a stream request's envelope is taken
 * only when its length is exactly what came (the message then lies inside the input, its flags
 * not compressed), a client stream's envelopes one after another lie inside it, and the user of an
 * Authorization header is a NUL-free name shorter than the room given, only from a Basic header. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "envd_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t flags = 0;
    const uint8_t *msg = NULL;
    size_t len = 0;
    char why[160];
    if (envd_envelope_parse(data, size, &flags, &msg, &len, why, sizeof why) == 0) {
        if (msg != data + ENVD_HEAD_LEN || len != size - ENVD_HEAD_LEN || (flags & 0x01) ||
            len > ENVD_MSG_MAX)
            abort();
    } else if (!memchr(why, '\0', sizeof why)) {
        abort();
    }
    /* a client stream: every message inside the input, the offset only moving forward */
    size_t off = 0, prev = 0;
    int rc;
    while ((rc = envd_envelope_next(data, size, &off, &flags, &msg, &len, why, sizeof why)) == 1) {
        if (off <= prev || off > size || msg < data || msg + len > data + size || (flags & 0x01))
            abort();
        prev = off;
    }
    if (rc == -1 && !memchr(why, '\0', sizeof why))
        abort();
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    char user[32];
    memset(user, 'x', sizeof user);
    if (envd_basic_user(text, user, sizeof user) == 0) {
        size_t ul = strnlen(user, sizeof user);
        if (ul >= sizeof user || (text[0] && strncasecmp(text, "Basic ", 6) != 0))
            abort();
    }
    free(text);
    return 0;
}
