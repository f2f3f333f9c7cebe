/* test_envd_token.c — an E2B sandbox's envd credential (common/envd_token.c): the HMAC of the
 * session id under a key derived from the shared secret, base64url, as any HMAC implementation
 * computes it (the vectors are Python's hmac, hashlib and base64 modules'), checked whole and for
 * its session only; and E2B's signed-URL signature. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "envd_token.h"

static uint8_t secret[32];

static int
setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof secret; i++)
        secret[i] = (uint8_t)i;
    return 0;
}

static void
test_the_token_is_the_sessions_hmac(void **state)
{
    (void)state;
    char tok[ENVD_TOKEN_LEN + 1];
    assert_int_equal(envd_token_make(secret, sizeof secret, "s-abc", tok), 0);
    /* k = hmac(bytes(range(32)), b"sandpipe envd v1", sha256).digest();
     * urlsafe_b64encode(hmac(k, b"s-abc", sha256).digest()).rstrip(b"=") */
    assert_string_equal(tok, "BgGnYNvpFO3LY5FltHcYt_0870t4zuCspzQb7jsiqrQ");
    assert_int_equal(strlen(tok), ENVD_TOKEN_LEN);
}

static void
test_it_opens_its_session_only(void **state)
{
    (void)state;
    char tok[ENVD_TOKEN_LEN + 1];
    envd_token_make(secret, sizeof secret, "s-abc", tok);
    assert_true(envd_token_matches(secret, sizeof secret, "s-abc", tok));
    assert_false(envd_token_matches(secret, sizeof secret, "s-abd", tok));
    assert_false(envd_token_matches(secret, sizeof secret, "s-abc", ""));
    assert_false(envd_token_matches(secret, sizeof secret, "s-abc", NULL));
    char cut[ENVD_TOKEN_LEN];
    memcpy(cut, tok, ENVD_TOKEN_LEN - 1);
    cut[ENVD_TOKEN_LEN - 1] = '\0';
    assert_false(envd_token_matches(secret, sizeof secret, "s-abc", cut));
    tok[5] ^= 1;
    assert_false(envd_token_matches(secret, sizeof secret, "s-abc", tok));
    uint8_t other[32];
    memcpy(other, secret, sizeof other);
    other[0] = 9;
    envd_token_make(secret, sizeof secret, "s-abc", tok);
    assert_false(envd_token_matches(other, sizeof other, "s-abc", tok));
}

static void
test_a_short_secret_makes_no_token(void **state)
{
    (void)state;
    char tok[ENVD_TOKEN_LEN + 1] = "x";
    assert_int_equal(envd_token_make(secret, 4, "s-abc", tok), -1);
    assert_string_equal(tok, "");
    assert_false(envd_token_matches(secret, 4, "s-abc", ""));
}

static void
test_signatures_are_e2bs(void **state)
{
    (void)state;
    char tok[ENVD_TOKEN_LEN + 1], sig[ENVD_SIGNATURE_MAX];
    envd_token_make(secret, sizeof secret, "s-abc", tok);
    /* "v1_" + b64encode(sha256(b"/tmp/u:write::" + token)).rstrip("=") */
    envd_signature("/tmp/u", "write", "", tok, 0, sig);
    assert_string_equal(sig, "v1_GBCOTZo2Fu2ynRL4VqkbzLujbarzt+olx4nwIk2k12g");
    envd_signature("/tmp/u", "read", "root", tok, 1795973842, sig);
    assert_string_equal(sig, "v1_vQRDRm9xrSQmYexit6ftvvdVCYq0kAmuHBVS2bI8vvE");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_token_is_the_sessions_hmac),
        cmocka_unit_test(test_it_opens_its_session_only),
        cmocka_unit_test(test_a_short_secret_makes_no_token),
        cmocka_unit_test(test_signatures_are_e2bs),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
