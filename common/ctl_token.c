/* ctl_token.c — control tokens (ctl_token.h). */
#include "ctl_token.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "jwt.h"

/* The derived key: 32 bytes. -1 when the secret is too short. */
static int
derive(const uint8_t *secret, size_t secret_len, uint8_t key[32])
{
    return jwt_secret_derive(secret, secret_len, CTL_TOKEN_LABEL, key);
}

char *
ctl_token_mint(const uint8_t *secret, size_t secret_len, int64_t now, int64_t *exp)
{
    uint8_t key[32], rnd[8];
    if (derive(secret, secret_len, key) < 0 || RAND_bytes(rnd, sizeof rnd) != 1)
        return NULL;
    jwt_claims_t c = {.iat = now, .exp = now + CTL_TOKEN_TTL};
    snprintf(c.sub, sizeof c.sub, "%s", CTL_TOKEN_SUB);
    snprintf(c.role, sizeof c.role, "admin");
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(c.jti + 2 * i, 3, "%02x", rnd[i]);
    char *t = jwt_sign(key, sizeof key, &c);
    OPENSSL_cleanse(key, sizeof key);
    if (t && exp)
        *exp = c.exp;
    return t;
}

int
ctl_token_verify(const uint8_t *secret, size_t secret_len, const char *token, int64_t now,
                 err_t *err)
{
    uint8_t key[32];
    if (derive(secret, secret_len, key) < 0)
        return err_set(err, ERR_AUTH, "no usable secret");
    jwt_claims_t c;
    int rc = jwt_verify(key, sizeof key, token, now, &c, err);
    OPENSSL_cleanse(key, sizeof key);
    if (rc < 0)
        return rc;
    if (strcmp(c.sub, CTL_TOKEN_SUB) != 0)
        return err_set(err, ERR_AUTH, "not a control token");
    if (c.exp - now > CTL_TOKEN_TTL_MAX)
        return err_set(err, ERR_AUTH, "a control token lives %d s at most", CTL_TOKEN_TTL_MAX);
    return 0;
}
