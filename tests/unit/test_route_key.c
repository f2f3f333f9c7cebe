/* test_route_key.c — nginx's route key (common/route_key.c): HMAC-SHA256 of the secret and its
 * label in hex, as any HMAC implementation computes it (the vectors are Python's hmac module's),
 * apart from the control tokens' key, and compared whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctl_token.h"
#include "jwt.h"
#include "route_key.h"

static void
secret_of(uint8_t *s, size_t n, uint8_t first)
{
    for (size_t i = 0; i < n; i++)
        s[i] = (uint8_t)(first + i);
}

static void
test_the_key_is_the_hmac_of_the_label_in_hex(void **state)
{
    (void)state;
    uint8_t s[32];
    char key[ROUTE_KEY_HEX_LEN + 1];
    secret_of(s, sizeof s, 0);
    assert_int_equal(route_key_derive(s, sizeof s, key), 0);
    /* hmac.new(bytes(range(32)), b"sandpipe route v1", hashlib.sha256).hexdigest() */
    assert_string_equal(key, "4be879d0a900a91905b381ef59536b43b9cef04c4c21439dff2dbfaa92ad2647");
    secret_of(s, sizeof s, 1);
    assert_int_equal(route_key_derive(s, sizeof s, key), 0);
    assert_string_equal(key, "77c57ce580816ddb5f3e65a80dfbcedada58b194c5c29a9c5ad02751e395effc");
}

static void
test_a_short_secret_makes_no_key(void **state)
{
    (void)state;
    uint8_t s[JWT_SECRET_MIN - 1];
    char key[ROUTE_KEY_HEX_LEN + 1] = "x";
    secret_of(s, sizeof s, 0);
    assert_int_equal(route_key_derive(s, sizeof s, key), -1);
    assert_string_equal(key, "");
    assert_false(route_key_matches(key, "")); /* an empty key opens nothing */
    assert_false(route_key_matches(key, NULL));
}

static void
test_the_key_is_not_the_control_tokens_key(void **state)
{
    (void)state;
    uint8_t s[32], ctl[32];
    char key[ROUTE_KEY_HEX_LEN + 1], ctl_hex[65];
    secret_of(s, sizeof s, 0);
    assert_int_equal(route_key_derive(s, sizeof s, key), 0);
    assert_int_equal(jwt_secret_derive(s, sizeof s, CTL_TOKEN_LABEL, ctl), 0);
    for (size_t i = 0; i < sizeof ctl; i++)
        snprintf(ctl_hex + 2 * i, 3, "%02x", ctl[i]);
    assert_string_not_equal(key, ctl_hex);
}

static void
test_only_the_whole_key_matches(void **state)
{
    (void)state;
    uint8_t s[32];
    char key[ROUTE_KEY_HEX_LEN + 1], other[ROUTE_KEY_HEX_LEN + 2];
    secret_of(s, sizeof s, 7);
    assert_int_equal(route_key_derive(s, sizeof s, key), 0);
    assert_true(route_key_matches(key, key));
    assert_false(route_key_matches(key, NULL));
    assert_false(route_key_matches(key, ""));
    snprintf(other, sizeof other, "%.*s", ROUTE_KEY_HEX_LEN - 1, key); /* a prefix */
    assert_false(route_key_matches(key, other));
    snprintf(other, sizeof other, "%s0", key); /* one more digit */
    assert_false(route_key_matches(key, other));
    for (size_t at = 0; at < ROUTE_KEY_HEX_LEN; at += 21) { /* one digit changed anywhere */
        snprintf(other, sizeof other, "%s", key);
        other[at] = other[at] == '0' ? '1' : '0';
        assert_false(route_key_matches(key, other));
    }
    for (size_t i = 0; key[i]; i++) /* upper case is another string */
        other[i] = (char)(key[i] >= 'a' ? key[i] - 32 : key[i]);
    other[ROUTE_KEY_HEX_LEN] = '\0';
    if (strcmp(other, key) != 0)
        assert_false(route_key_matches(key, other));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_key_is_the_hmac_of_the_label_in_hex),
        cmocka_unit_test(test_a_short_secret_makes_no_key),
        cmocka_unit_test(test_the_key_is_not_the_control_tokens_key),
        cmocka_unit_test(test_only_the_whole_key_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
