/* preview_access.h — who may open a preview (docs/api.md, "Previews"): the decision on one
 * request from its credentials (preview_head.h) and the session's public ports. Pure: the
 * caller does what the verdict says (a one-time token is taken in Redis, then redirected). */
#ifndef SP_PREVIEW_ACCESS_H
#define SP_PREVIEW_ACCESS_H

#include <stdbool.h>
#include <stdint.h>

#include "preview_head.h"
#include "preview_token.h"

#define PREVIEW_COOKIE_TTL (12 * 3600) /* what a one-time link's cookie is good for */

typedef enum {
    PREVIEW_ALLOW,    /* in: the app gets the request */
    PREVIEW_REDIRECT, /* in, by a token in the query: 302 to the URL without it, credential kept
                       * (host mode: the cookie; path mode: /~TOKEN in the path) */
    PREVIEW_ONCE,     /* a one-time link: take it (Redis), then as PREVIEW_REDIRECT */
    PREVIEW_DENY,     /* status and why */
} preview_verdict_kind_t;

typedef struct {
    preview_verdict_kind_t kind;
    int status; /* PREVIEW_DENY: 401 (no credential) or 403 (one that does not let in) */
    char why[320];
    char token[PREVIEW_TOKEN_MAX]; /* the credential that let in */
    preview_claims_t claims;
} preview_verdict_t;

void preview_decide(const uint8_t key[32], const preview_head_t *h, bool is_public, int64_t now,
                    preview_verdict_t *v);

#endif
