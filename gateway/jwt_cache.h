/* jwt_cache.h — jwt_verify with the gateway's secret, remembering the tokens that verified.
 *
 * A REST client sends the same token with every request; verifying it each time (an HMAC, for
 * which OpenSSL 3 fetches the algorithm anew, and a JSON parse of the payload) was ~5 % of the
 * gateway's time per execute_action. A hit is the same token byte for byte (compared in constant
 * time) whose claims are still in force at `now` (exp and nbf checked again on every hit);
 * a token that fails is never remembered, and an expired one goes to jwt_verify for its error.
 * Bounded: JWT_CACHE_SLOTS direct-mapped slots, a colliding token replaces the older; tokens
 * longer than JWT_CACHE_TOKEN_MAX are verified every time. The secret is read once at start, so
 * nothing here needs to forget a key. */
#ifndef SP_JWT_CACHE_H
#define SP_JWT_CACHE_H

#include <stdint.h>

#include "jwt.h"

#define JWT_CACHE_SLOTS     128
#define JWT_CACHE_TOKEN_MAX 512

/* jwt_verify(g_gw.secret, …, token, now, out, err), same results. */
int jwt_cache_verify(const char *token, int64_t now, jwt_claims_t *out, err_t *err);

#endif
