/* envd_token.c — an E2B sandbox's envd credential and signed-URL signatures (envd_token.h). */
#include "envd_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

#include "base64.h"
#include "jwt.h"

/* base64url without padding of 32 bytes: 43 characters. */
static void
b64url32(const uint8_t in[32], char out[ENVD_TOKEN_LEN + 1])
{
    char b[BASE64_ENCODED_LEN(32) + 1];
    size_t n = base64_encode(in, 32, b);
    while (n && b[n - 1] == '=')
        n--;
    for (size_t i = 0; i < n; i++)
        out[i] = b[i] == '+' ? '-' : b[i] == '/' ? '_' : b[i];
    out[n] = '\0';
}

int
envd_token_make(const uint8_t *secret, size_t secret_len, const char *session,
                char out[ENVD_TOKEN_LEN + 1])
{
    uint8_t key[32], mac[32];
    unsigned mac_len = sizeof mac;
    out[0] = '\0';
    if (jwt_secret_derive(secret, secret_len, ENVD_TOKEN_LABEL, key) < 0)
        return -1;
    bool ok = HMAC(EVP_sha256(), key, sizeof key, (const unsigned char *)session, strlen(session),
                   mac, &mac_len) != NULL;
    OPENSSL_cleanse(key, sizeof key);
    if (!ok)
        return -1;
    b64url32(mac, out);
    OPENSSL_cleanse(mac, sizeof mac);
    return 0;
}

bool
envd_token_matches(const uint8_t *secret, size_t secret_len, const char *session, const char *given)
{
    char want[ENVD_TOKEN_LEN + 1];
    if (!given || envd_token_make(secret, secret_len, session, want) < 0)
        return false;
    /* the length is no secret: only the bytes are compared in constant time */
    bool ok = strlen(given) == ENVD_TOKEN_LEN && CRYPTO_memcmp(want, given, ENVD_TOKEN_LEN) == 0;
    OPENSSL_cleanse(want, sizeof want);
    return ok;
}

void
envd_signature(const char *path, const char *op, const char *user, const char *token, long long exp,
               char out[ENVD_SIGNATURE_MAX])
{
    uint8_t md[SHA256_DIGEST_LENGTH];
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    char tail[32] = "";
    if (exp)
        snprintf(tail, sizeof tail, ":%lld", exp);
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    EVP_DigestUpdate(c, path, strlen(path));
    EVP_DigestUpdate(c, ":", 1);
    EVP_DigestUpdate(c, op, strlen(op));
    EVP_DigestUpdate(c, ":", 1);
    EVP_DigestUpdate(c, user, strlen(user));
    EVP_DigestUpdate(c, ":", 1);
    EVP_DigestUpdate(c, token, strlen(token));
    EVP_DigestUpdate(c, tail, strlen(tail));
    EVP_DigestFinal_ex(c, md, NULL);
    EVP_MD_CTX_free(c);
    char b[BASE64_ENCODED_LEN(SHA256_DIGEST_LENGTH) + 1];
    size_t n = base64_encode(md, sizeof md, b);
    while (n && b[n - 1] == '=')
        n--;
    b[n] = '\0';
    snprintf(out, ENVD_SIGNATURE_MAX, "v1_%s", b);
}
