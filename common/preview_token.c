/* preview_token.c — preview URLs' credential (preview_token.h). */
#include "preview_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jwt.h"

#define MAC_CHARS   22 /* 128 bits of the HMAC, base64url */
#define NONCE_CHARS 8

static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int
preview_key_derive(const uint8_t *secret, size_t secret_len, uint8_t key[32])
{
    return jwt_secret_derive(secret, secret_len, PREVIEW_TOKEN_LABEL, key);
}

/* The first n characters of the base64url of p[0..len). */
static void
b64url(const uint8_t *p, size_t len, char *out, size_t n)
{
    size_t bits = 0, o = 0;
    uint32_t acc = 0;
    for (size_t i = 0; i < len && o < n; i++) {
        acc = (acc << 8) | p[i];
        bits += 8;
        while (bits >= 6 && o < n) {
            bits -= 6;
            out[o++] = B64URL[(acc >> bits) & 63];
        }
    }
    out[o] = '\0';
}

static bool
kind_ok(char kind)
{
    return kind == PREVIEW_KIND_OWNER || kind == PREVIEW_KIND_SHARE || kind == PREVIEW_KIND_ONCE;
}

static int
mac_of(const uint8_t key[32], const char *session, char kind, unsigned port, int64_t exp,
       const char *nonce, char out[MAC_CHARS + 1])
{
    char msg[256];
    int n = snprintf(msg, sizeof msg, "%s\n%c\n%u\n%lld\n%s", session, kind, port, (long long)exp,
                     nonce);
    if (n < 0 || (size_t)n >= sizeof msg)
        return -1;
    uint8_t mac[32];
    unsigned mlen = 0;
    if (!HMAC(EVP_sha256(), key, 32, (const unsigned char *)msg, (size_t)n, mac, &mlen))
        return -1;
    b64url(mac, mlen, out, MAC_CHARS);
    return 0;
}

int
preview_token_mint(const uint8_t key[32], const char *session, char kind, unsigned port,
                   int64_t exp, char *out, size_t cap)
{
    if (!kind_ok(kind) || port > 65535 || (kind == PREVIEW_KIND_SHARE && port == 0) || exp <= 0 ||
        !session || !*session || strlen(session) > 128 || cap < PREVIEW_TOKEN_MAX)
        return -1;
    uint8_t r[6];
    char nonce[NONCE_CHARS + 1], mac[MAC_CHARS + 1];
    if (RAND_bytes(r, sizeof r) != 1)
        return -1;
    b64url(r, sizeof r, nonce, NONCE_CHARS);
    if (mac_of(key, session, kind, port, exp, nonce, mac) < 0)
        return -1;
    snprintf(out, cap, "%c%u.%lld.%s.%s", kind, port, (long long)exp, nonce, mac);
    return 0;
}

/* Digits only, no sign, no leading zero (one spelling per number, so one mac per token). */
static bool
number(const char *p, size_t n, unsigned long long max, unsigned long long *v)
{
    if (n == 0 || n > 19 || (n > 1 && p[0] == '0'))
        return false;
    unsigned long long x = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9' || x > (max - (unsigned)(p[i] - '0')) / 10)
            return false;
        x = x * 10 + (unsigned)(p[i] - '0');
    }
    *v = x;
    return true;
}

int
preview_token_check(const uint8_t key[32], const char *session, const char *tok,
                    preview_claims_t *c)
{
    if (!tok || !session || strlen(tok) >= PREVIEW_TOKEN_MAX || !kind_ok(tok[0]))
        return -1;
    const char *dot1 = strchr(tok, '.'), *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    const char *dot3 = dot2 ? strchr(dot2 + 1, '.') : NULL;
    if (!dot3)
        return -1;
    unsigned long long port, exp;
    if (!number(tok + 1, (size_t)(dot1 - tok - 1), 65535, &port) ||
        !number(dot1 + 1, (size_t)(dot2 - dot1 - 1), (unsigned long long)INT64_MAX, &exp) ||
        dot3 - dot2 - 1 != NONCE_CHARS || strlen(dot3 + 1) != MAC_CHARS)
        return -1;
    char nonce[NONCE_CHARS + 1], want[MAC_CHARS + 1];
    memcpy(nonce, dot2 + 1, NONCE_CHARS);
    nonce[NONCE_CHARS] = '\0';
    if (strspn(nonce, B64URL) != NONCE_CHARS ||
        mac_of(key, session, tok[0], (unsigned)port, (int64_t)exp, nonce, want) < 0 ||
        CRYPTO_memcmp(want, dot3 + 1, MAC_CHARS) != 0)
        return -1;
    if (tok[0] == PREVIEW_KIND_SHARE && port == 0)
        return -1;
    c->kind = tok[0];
    c->port = (unsigned)port;
    c->exp = (int64_t)exp;
    memcpy(c->nonce, nonce, sizeof c->nonce);
    return 0;
}
