/* fuzz_jwt.c — jwt_verify over arbitrary bytes (a NUL-terminated copy, as a header value
 * would arrive), with a fixed secret and a fixed clock. Any input may be refused; none may
 * crash, leak or be accepted with claims that break the contract. Also runs the token
 * extraction helpers over the same bytes. The seeds in tests/fuzz/corpus/fuzz_jwt/ are tokens
 * signed with this secret by Python's hmac/hashlib/base64 (valid ones, and one per refusal
 * class; some wrapped as an Authorization, Sec-WebSocket-Protocol or query value), so
 * mutations start from inputs that reach the claim checks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jwt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t fuzz_secret[] = "sandpipe-known-answer-secret-32b";
#define FUZZ_NOW 1700000000LL

static void
check_verify(const char *token)
{
    jwt_claims_t c;
    err_t err = {0};
    int r = jwt_verify(fuzz_secret, 32, token, FUZZ_NOW, &c, &err);
    if (r < 0) {
        if (err.code != -r || !err.msg[0])
            __builtin_trap();
        return;
    }
    /* Accepted: the claims must satisfy everything jwt.h promises. */
    if (r != 0 || !c.sub[0] || c.exp <= FUZZ_NOW || c.nbf > FUZZ_NOW ||
        memchr(c.sub, '\0', sizeof c.sub) == NULL || memchr(c.role, '\0', sizeof c.role) == NULL ||
        memchr(c.session, '\0', sizeof c.session) == NULL ||
        memchr(c.jti, '\0', sizeof c.jti) == NULL)
        __builtin_trap();
    if (strcmp(c.role, "admin") != 0 && strcmp(c.role, "user") != 0 &&
        (strcmp(c.role, "viewer") != 0 || !c.session[0]))
        __builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';

    check_verify(s);

    const char *tok;
    if (jwt_bearer_from_header(s, &tok) == 0)
        check_verify(tok);
    char out[JWT_BUF_LEN];
    if (jwt_token_from_ws_protocol(s, out, sizeof out) == 0)
        check_verify(out);
    if (jwt_token_from_query(s, out, sizeof out) == 0)
        check_verify(out);

    free(s);
    return 0;
}
