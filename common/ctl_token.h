/* ctl_token.h — the credential of the API's control requests to a gateway (POST /_sp/op,
 * docs/protocol.md "Control requests"): a short-lived HS256 JWT signed with a key derived from
 * the shared JWT secret, HMAC-SHA256(secret, CTL_TOKEN_LABEL). The derived key keeps the two
 * kinds apart both ways: no client token (signed with the secret itself) verifies as a control
 * token, and a control token verifies nowhere a client token is accepted. Its claims: sub
 * CTL_TOKEN_SUB, role "admin" (what jwt.c requires; the caller's rights travel in the request),
 * exp at most CTL_TOKEN_TTL_MAX ahead. Pure apart from OpenSSL's randomness (the jti). */
#ifndef SP_CTL_TOKEN_H
#define SP_CTL_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define CTL_TOKEN_LABEL   "sandpipe control v1"
#define CTL_TOKEN_SUB     "sandpipe-api"
#define CTL_TOKEN_TTL     60  /* what the API mints (it renews one 10 s before its end) */
#define CTL_TOKEN_TTL_MAX 120 /* a token living longer than this is refused */

/* A control token valid from now for CTL_TOKEN_TTL seconds (caller frees), its expiry in *exp;
 * NULL when the secret is shorter than JWT_SECRET_MIN. */
char *ctl_token_mint(const uint8_t *secret, size_t secret_len, int64_t now, int64_t *exp);
/* 0 when token is a control token valid at now, else -ERR_AUTH / -ERR_AUTH_EXPIRED with err. */
int ctl_token_verify(const uint8_t *secret, size_t secret_len, const char *token, int64_t now,
                     err_t *err);

#endif
