/* envd_wire.h — the pure pieces of envd's Connect wire, apart so they are fuzzed alone
 * (tests/fuzz/fuzz_envd_wire.c): a stream's request envelope, and the user an
 * Authorization: Basic header names. No I/O, no allocation. */
#ifndef SP_ENVD_WIRE_H
#define SP_ENVD_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define ENVD_FLAG_END 0x02       /* an end-of-stream envelope */
#define ENVD_HEAD_LEN 5          /* flags, then a 4-byte big-endian length */
#define ENVD_MSG_MAX  (4u << 20) /* the largest request message read */

/* The single enveloped message p[0..n) is: *flags, and its message at *msg, *len bytes. 0, or
 * -1 with why (cap bytes into why): short, longer or shorter than what came, over
 * ENVD_MSG_MAX, compressed. */
int envd_envelope_parse(const uint8_t *p, size_t n, uint8_t *flags, const uint8_t **msg,
                        size_t *len, char *why, size_t cap);
/* The next enveloped message of a client stream's body p[0..n) at *off: *flags and its message,
 * *off moved past it. 1, 0 at the end of the body, or -1 with why: a message cut short, over
 * ENVD_MSG_MAX, compressed. */
int envd_envelope_next(const uint8_t *p, size_t n, size_t *off, uint8_t *flags, const uint8_t **msg,
                       size_t *len, char *why, size_t cap);
/* The user of an Authorization header's value "Basic base64(<user>:<anything>)" into out (cap
 * bytes), "" for an empty header. 0, or -1: another scheme, not base64, a NUL in the name, a
 * name of cap bytes or more. */
int envd_basic_user(const char *authorization, char *out, size_t cap);

#endif
