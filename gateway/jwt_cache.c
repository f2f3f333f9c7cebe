/* jwt_cache.c — verified tokens remembered (jwt_cache.h). */
#include "jwt_cache.h"

#include <openssl/crypto.h>
#include <string.h>

#include "gw.h"

typedef struct {
    size_t len; /* 0: empty */
    char token[JWT_CACHE_TOKEN_MAX];
    jwt_claims_t claims;
} slot_t;

static slot_t slots[JWT_CACHE_SLOTS];

static unsigned
slot_of(const char *t, size_t n)
{
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)t[i]) * 16777619u;
    return h % JWT_CACHE_SLOTS;
}

int
jwt_cache_verify(const char *token, int64_t now, jwt_claims_t *out, err_t *err)
{
    size_t n = strlen(token);
    slot_t *s = n && n <= JWT_CACHE_TOKEN_MAX ? &slots[slot_of(token, n)] : NULL;
    if (s && s->len == n && CRYPTO_memcmp(s->token, token, n) == 0 && now < s->claims.exp &&
        now >= s->claims.nbf) {
        if (out)
            *out = s->claims;
        return 0;
    }
    jwt_claims_t c;
    int rc = jwt_verify(g_gw.secret, g_gw.secret_len, token, now, &c, err);
    if (out)
        *out = c;
    if (rc == 0 && s) {
        memcpy(s->token, token, n);
        s->len = n;
        s->claims = c;
    }
    return rc;
}
