/* gw_test_jwt_cache.c — gateway/jwt_cache: a remembered token answers as jwt_verify would, and
 * the cache never widens what a token may do: expiry and nbf are checked on every hit, a token
 * that differs by one byte is verified (and refused) afresh, failures are not remembered. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "gateway/gw.h"
#include "gateway/jwt_cache.h"

static void
set_secret(void)
{
    memset(g_gw.secret, 0x5a, 32);
    g_gw.secret_len = 32;
}

static char *
mint(const char *sub, int64_t exp, int64_t nbf)
{
    jwt_claims_t c = {.exp = exp, .nbf = nbf};
    strcpy(c.sub, sub);
    strcpy(c.role, "user");
    return jwt_sign(g_gw.secret, g_gw.secret_len, &c);
}

static void
test_hit_gives_the_same_claims(void **state)
{
    (void)state;
    set_secret();
    char *t = mint("alice", 2000, 0);
    jwt_claims_t a, b;
    err_t err = {0};
    assert_int_equal(jwt_cache_verify(t, 1000, &a, &err), 0);
    assert_int_equal(jwt_cache_verify(t, 1001, &b, &err), 0); /* remembered */
    assert_string_equal(b.sub, "alice");
    assert_string_equal(b.role, "user");
    assert_memory_equal(&a, &b, sizeof a);
    free(t);
}

static void
test_expiry_and_nbf_checked_on_every_hit(void **state)
{
    (void)state;
    set_secret();
    char *t = mint("bob", 2000, 1500);
    jwt_claims_t c;
    err_t err = {0};
    assert_int_equal(jwt_cache_verify(t, 1600, &c, &err), 0);
    assert_int_equal(jwt_cache_verify(t, 2000, &c, &err), -ERR_AUTH_EXPIRED);
    assert_string_equal(c.sub, ""); /* zeroed on failure, as jwt_verify does */
    assert_int_equal(jwt_cache_verify(t, 1400, &c, &err), -ERR_AUTH); /* not yet valid */
    assert_int_equal(jwt_cache_verify(t, 1600, &c, &err), 0);
    free(t);
}

static void
test_a_changed_byte_is_refused(void **state)
{
    (void)state;
    set_secret();
    char *t = mint("carol", 2000, 0);
    jwt_claims_t c;
    err_t err = {0};
    assert_int_equal(jwt_cache_verify(t, 1000, &c, &err), 0);
    char *bad = strdup(t);
    size_t n = strlen(bad);
    bad[n - 2] = bad[n - 2] == 'A' ? 'B' : 'A'; /* the signature */
    assert_int_equal(jwt_cache_verify(bad, 1000, &c, &err), -ERR_AUTH);
    assert_int_equal(jwt_cache_verify(bad, 1000, &c, &err), -ERR_AUTH); /* not remembered */
    assert_int_equal(jwt_cache_verify(t, 1000, &c, &err), 0);
    free(bad);
    free(t);
}

static void
test_other_secret_tokens_refused(void **state)
{
    (void)state;
    set_secret();
    char *t = mint("dave", 2000, 0);
    memset(g_gw.secret, 0x33, 32); /* another gateway's secret signed nothing here */
    jwt_claims_t c;
    err_t err = {0};
    char *other = mint("dave", 2000, 0);
    set_secret();
    assert_int_equal(jwt_cache_verify(other, 1000, &c, &err), -ERR_AUTH);
    assert_int_equal(jwt_cache_verify(t, 1000, &c, &err), 0);
    free(other);
    free(t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_gives_the_same_claims),
        cmocka_unit_test(test_expiry_and_nbf_checked_on_every_hit),
        cmocka_unit_test(test_a_changed_byte_is_refused),
        cmocka_unit_test(test_other_secret_tokens_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
