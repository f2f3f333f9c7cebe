/* preview_token.h — the credential of a sandbox's preview URLs (docs/api.md, "Previews"): who
 * may open port P of session S through /preview/S/P/ or P-S.<domain>.
 *
 * A token is "<kind><port>.<exp>.<nonce>.<mac>": kind 'o' (the owner's: any port of S, port 0),
 * 's' (shared: one port, anyone holding it), '1' (a one-time link: the gateway takes it once and
 * answers with a cookie or a path credential of kind 'o' or 's'); exp in Unix seconds; nonce 8
 * base64url characters; mac 22 base64url characters of HMAC-SHA256(key, "S\nkind\nport\nexp\n
 * nonce"), key derived from the gateways' shared secret (PREVIEW_TOKEN_LABEL), so any gateway
 * (a takeover's too) checks what another minted, and a token of one session says nothing of
 * another. Only URL-safe characters: it goes into paths, queries and cookies unescaped. Pure. */
#ifndef SP_PREVIEW_TOKEN_H
#define SP_PREVIEW_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PREVIEW_TOKEN_LABEL "sandpipe preview v1"
#define PREVIEW_TOKEN_MAX   64 /* longest token, NUL included */
#define PREVIEW_KIND_OWNER  'o'
#define PREVIEW_KIND_SHARE  's'
#define PREVIEW_KIND_ONCE   '1'

typedef struct {
    char kind;
    unsigned port; /* 0: any port of the session */
    int64_t exp;
    char nonce[9];
} preview_claims_t;

/* The signing key of secret (the gateways' JWT secret). 0 or -1 (secret too short). */
int preview_key_derive(const uint8_t *secret, size_t secret_len, uint8_t key[32]);
/* A token of kind for port (0: any; 's' needs one) of session, valid until exp, into out (at
 * least PREVIEW_TOKEN_MAX bytes). 0, or -1 when the arguments make no token. */
int preview_token_mint(const uint8_t key[32], const char *session, char kind, unsigned port,
                       int64_t exp, char *out, size_t cap);
/* Checks tok's form and mac for session, then fills c. The caller checks c->exp and c->port
 * against the request (what was asked for decides the words of a refusal). 0, or -1: not a
 * token of this session (form or mac wrong). */
int preview_token_check(const uint8_t key[32], const char *session, const char *tok,
                        preview_claims_t *c);

#endif
