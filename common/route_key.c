/* route_key.c — the route lookup's key (route_key.h). */
#include "route_key.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

#include "jwt.h"

int
route_key_derive(const uint8_t *secret, size_t secret_len, char out[ROUTE_KEY_HEX_LEN + 1])
{
    uint8_t key[32];
    out[0] = '\0';
    if (jwt_secret_derive(secret, secret_len, ROUTE_KEY_LABEL, key) < 0)
        return -1;
    for (size_t i = 0; i < sizeof key; i++)
        snprintf(out + 2 * i, 3, "%02x", key[i]);
    OPENSSL_cleanse(key, sizeof key);
    return 0;
}

bool
route_key_matches(const char *want, const char *given)
{
    size_t n = strlen(want);
    /* the length is no secret (always ROUTE_KEY_HEX_LEN): only the bytes are compared in
     * constant time */
    return n > 0 && given && strlen(given) == n && CRYPTO_memcmp(want, given, n) == 0;
}
