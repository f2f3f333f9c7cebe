/* jwt_fixture.h — what the JWT unit tests share: the test secret, the fixed clock, and craft()
 * (any header and payload bytes, base64url-encoded and correctly signed with the test secret, so
 * each test reaches exactly the check it aims at). Included by test_jwt*.c only. */
#ifndef SP_JWT_FIXTURE_H
#define SP_JWT_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jwt.h"
#include "xalloc.h"

#define NOW     1700000000LL
#define HDR     "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"
#define PAYLOAD "{\"sub\":\"alice\",\"role\":\"user\",\"exp\":1700003600}"

static const uint8_t *const secret = (const uint8_t *)"sandpipe-known-answer-secret-32b";
static const size_t secret_len = 32;
static const uint8_t *const other_secret = (const uint8_t *)"another-secret-of-thirty-two-b!!";

/* ---- helpers ------------------------------------------------------------------------------ */

static inline char *
b64url(const void *p, size_t n)
{
    char *out = xmalloc(4 * ((n + 2) / 3) + 1);
    int len = EVP_EncodeBlock((unsigned char *)out, p, (int)n);
    while (len > 0 && out[len - 1] == '=')
        len--;
    out[len] = '\0';
    for (char *c = out; *c; c++)
        *c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
    return out;
}

/* header.payload.sig over arbitrary bytes, signed with key (caller frees). */
static inline char *
craft_n(const char *h, size_t hn, const char *p, size_t pn, const uint8_t *key)
{
    char *h64 = b64url(h, hn), *p64 = b64url(p, pn);
    char *input = xasprintf("%s.%s", h64, p64);
    uint8_t mac[32];
    unsigned int mac_len;
    assert_non_null(
        HMAC(EVP_sha256(), key, 32, (const unsigned char *)input, strlen(input), mac, &mac_len));
    char *s64 = b64url(mac, mac_len);
    char *tok = xasprintf("%s.%s", input, s64);
    free(h64);
    free(p64);
    free(input);
    free(s64);
    return tok;
}

static inline char *
craft(const char *h, const char *p)
{
    return craft_n(h, strlen(h), p, strlen(p), secret);
}

static inline int
verify(const char *token, jwt_claims_t *out, err_t *err)
{
    return jwt_verify(secret, secret_len, token, NOW, out, err);
}

/* Asserts token is refused with code and a message containing words. */
static inline void
assert_refused_with(const char *token, int code, const char *words)
{
    err_t err = {0};
    jwt_claims_t c;
    memset(&c, 0xaa, sizeof c);
    int r = verify(token, &c, &err);
    if (r != -code || !strstr(err.msg, words))
        fail_msg("token %.80s: got %d \"%s\", wanted %d \"...%s...\"", token ? token : "(null)", r,
                 err.msg, -code, words);
    assert_int_equal(err.code, code);
    jwt_claims_t zero;
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(&c, &zero, sizeof c); /* no partial claims on failure */
}

static inline void
assert_crafted_refused(const char *h, const char *p, int code, const char *words)
{
    char *tok = craft(h, p);
    assert_refused_with(tok, code, words);
    free(tok);
}

static inline void
assert_crafted_ok(const char *h, const char *p)
{
    char *tok = craft(h, p);
    err_t err = {0};
    if (verify(tok, NULL, &err) != 0)
        fail_msg("header %s payload %s: %s", h, p, err.msg);
    free(tok);
}

static inline jwt_claims_t
claims(const char *sub, const char *role, const char *session, int64_t exp)
{
    jwt_claims_t c;
    memset(&c, 0, sizeof c);
    snprintf(c.sub, sizeof c.sub, "%s", sub);
    snprintf(c.role, sizeof c.role, "%s", role);
    snprintf(c.session, sizeof c.session, "%s", session);
    c.exp = exp;
    return c;
}

/* The token Python signs for {"sub":"alice","role":"user","iat":NOW,"exp":NOW+3600,"jti":"k1"}. */
#define KAT_ALICE                                                                                  \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."                                                        \
    "eyJzdWIiOiJhbGljZSIsInJvbGUiOiJ1c2VyIiwiaWF0IjoxNzAwMDAwMDAwLCJleHAiOjE3MDAwMDM2MDAsImp0aSI6" \
    "ImsxIn0.xhhkhuovPcZ27ag-TmKtOGEqBYsyDOqcgkdqPFf0rKE"

#endif
