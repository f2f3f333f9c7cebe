/* envd_wire.c — the pure pieces of envd's Connect wire (envd_wire.h). */
#include "envd_wire.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base64.h"

int
envd_envelope_parse(const uint8_t *p, size_t n, uint8_t *flags, const uint8_t **msg, size_t *len,
                    char *why, size_t cap)
{
    if (n < ENVD_HEAD_LEN) {
        snprintf(why, cap, "a stream's request is one enveloped message: %zu bytes is too short",
                 n);
        return -1;
    }
    uint32_t l = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
    if (p[0] & 0x01) {
        snprintf(why, cap,
                 "compressed messages are not accepted (send no Connect-Content-Encoding)");
        return -1;
    }
    if (l > ENVD_MSG_MAX) {
        snprintf(why, cap, "message of %u bytes: the limit is %u", l, ENVD_MSG_MAX);
        return -1;
    }
    if ((size_t)l != n - ENVD_HEAD_LEN) {
        snprintf(why, cap, "the envelope says %u bytes, the body holds %zu", l, n - ENVD_HEAD_LEN);
        return -1;
    }
    *flags = p[0];
    *msg = p + ENVD_HEAD_LEN;
    *len = l;
    return 0;
}

int
envd_envelope_next(const uint8_t *p, size_t n, size_t *off, uint8_t *flags, const uint8_t **msg,
                   size_t *len, char *why, size_t cap)
{
    if (*off >= n)
        return 0;
    size_t left = n - *off;
    const uint8_t *e = p + *off;
    if (left < ENVD_HEAD_LEN) {
        snprintf(why, cap, "an envelope cut short: %zu bytes of its 5-byte head", left);
        return -1;
    }
    uint32_t l = (uint32_t)e[1] << 24 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 8 | e[4];
    if (e[0] & 0x01) {
        snprintf(why, cap,
                 "compressed messages are not accepted (send no Connect-Content-Encoding)");
        return -1;
    }
    if (l > ENVD_MSG_MAX || l > left - ENVD_HEAD_LEN) {
        snprintf(why, cap, "an envelope says %u bytes, %zu follow it", l, left - ENVD_HEAD_LEN);
        return -1;
    }
    *flags = e[0];
    *msg = e + ENVD_HEAD_LEN;
    *len = l;
    *off += ENVD_HEAD_LEN + l;
    return 1;
}

int
envd_basic_user(const char *authorization, char *out, size_t cap)
{
    out[0] = '\0';
    if (!authorization[0])
        return 0;
    if (strncasecmp(authorization, "Basic ", 6) != 0)
        return -1;
    const char *b = authorization + 6;
    size_t n = strlen(b), len = 0;
    char dec[BASE64_DECODED_MAX(256)];
    if (n > 256 || base64_decode(b, n, dec, &len) < 0)
        return -1;
    const char *colon = memchr(dec, ':', len);
    size_t ul = colon ? (size_t)(colon - dec) : len;
    if (ul >= cap || memchr(dec, '\0', ul))
        return -1;
    memcpy(out, dec, ul);
    out[ul] = '\0';
    return 0;
}
