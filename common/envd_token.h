/* envd_token.h — the credential of an E2B sandbox's envd routes (docs/api.md, "E2B API"): the
 * envdAccessToken the control API hands out at create and connect, which the SDK sends as
 * X-Access-Token on every envd request of that sandbox, and the signatures of its signed
 * /files URLs (E2B's "v1_" scheme, made from that token).
 *
 * The token is base64url(HMAC-SHA256(key, session id)) with key derived from the gateways' shared
 * secret (ENVD_TOKEN_LABEL): the API mints it and any gateway (a takeover's too) checks it with
 * no state kept, it names one session only, and it dies with the session (or with the secret).
 * Pure. */
#ifndef SP_ENVD_TOKEN_H
#define SP_ENVD_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ENVD_TOKEN_LABEL "sandpipe envd v1"
#define ENVD_TOKEN_LEN   43 /* base64url of 32 bytes, no padding */

/* The token of session into out. 0, or -1 (secret too short). */
int envd_token_make(const uint8_t *secret, size_t secret_len, const char *session,
                    char out[ENVD_TOKEN_LEN + 1]);
/* Whether given is session's token (constant time). */
bool envd_token_matches(const uint8_t *secret, size_t secret_len, const char *session,
                        const char *given);
/* E2B's signature of a /files URL: "v1_" + base64(SHA-256("path:op:user:token[:exp]")) without
 * its '=' padding; op "read" or "write", user "" for the default one, exp 0 for none. Into out
 * (at least ENVD_SIGNATURE_MAX bytes). */
#define ENVD_SIGNATURE_MAX 52
void envd_signature(const char *path, const char *op, const char *user, const char *token,
                    long long exp, char out[ENVD_SIGNATURE_MAX]);

#endif
