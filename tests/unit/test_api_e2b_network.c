/* test_api_e2b_network.c — api/e2b/network.c: E2B's egress rules (create's network and
 * allow_internet_access, updateNetwork's body) as a sandpipe session's network value, and a
 * session's normalised policy back as getInfo's allowInternetAccess and network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api/e2b/e2b.h"
#include "json_util.h"

api_cfg_t g_api; /* main.c's, which the test does not link */

/* The policy of rules (JSON or NULL) and internet (JSON or NULL) as text ("default" for NULL,
 * "refused <code's name>: <message>" for a refusal). */
static const char *
policy(const char *rules, const char *internet, bool update)
{
    static char out[1024];
    json_object *r = rules ? json_tokener_parse(rules) : NULL,
                *i = internet ? json_tokener_parse(internet) : NULL, *p = NULL;
    api_err_t e = {0};
    if (e2b_network_policy(r, i, update, &p, &e) < 0)
        snprintf(out, sizeof out, "refused %s: %.900s", err_name(e.code), e.msg);
    else
        snprintf(out, sizeof out, "%s",
                 p ? json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE)
                   : "default");
    json_object_put(r);
    json_object_put(i);
    json_object_put(p);
    return out;
}

static void
test_e2b_rules_become_sandpipe_modes(void **state)
{
    (void)state;
    /* allowOut: an allow-list; denyOut's 0.0.0.0/0 is what that means, the rest its deny */
    assert_string_equal(policy("{\"allowOut\":[\"pypi.org\",\"198.51.100.0/24\"],\"denyOut\":"
                               "[\"0.0.0.0/0\",\"198.51.100.9\"]}",
                               NULL, false),
                        "{\"mode\":\"allowlist\",\"allow\":[\"pypi.org\",\"198.51.100.0/24\"],"
                        "\"deny\":[\"198.51.100.9\"]}");
    assert_string_equal(policy("{\"allowOut\":[\"pypi.org\"]}", "false", false),
                        "{\"mode\":\"allowlist\",\"allow\":[\"pypi.org\"],\"deny\":[]}");
    /* denyOut of everything: none, whatever else it holds; another denyOut: egress less it */
    assert_string_equal(policy("{\"denyOut\":[\"10.0.0.0/8\",\"0.0.0.0/0\"]}", NULL, false),
                        "{\"mode\":\"none\"}");
    assert_string_equal(policy("{\"denyOut\":[\"203.0.113.0/24\"]}", "true", false),
                        "{\"mode\":\"egress\",\"deny\":[\"203.0.113.0/24\"]}");
    /* allow_internet_access alone */
    assert_string_equal(policy(NULL, "false", false), "{\"mode\":\"none\"}");
    assert_string_equal(policy(NULL, "true", false), "{\"mode\":\"egress\"}");
    assert_string_equal(policy("{\"allowOut\":[],\"denyOut\":[]}", "false", false),
                        "{\"mode\":\"none\"}");
    /* nothing asked: the operator's default at create; an update replaces every rule */
    assert_string_equal(policy(NULL, NULL, false), "default");
    assert_string_equal(policy("{}", "null", false), "default");
    assert_string_equal(policy("{\"allowPublicTraffic\":false}", NULL, false), "default");
    assert_string_equal(policy("{}", NULL, true), "{\"mode\":\"egress\"}");
}

static void
test_what_is_malformed_or_not_served_is_refused(void **state)
{
    (void)state;
    assert_string_equal(policy("{\"allowOut\":\"pypi.org\"}", NULL, false),
                        "refused bad_request: network allowOut must be a list of strings");
    assert_string_equal(policy("{\"denyOut\":[1]}", NULL, false),
                        "refused bad_request: network denyOut must be a list of strings");
    assert_string_equal(policy("[]", NULL, false),
                        "refused bad_request: network must be an object");
    assert_string_equal(policy(NULL, "\"no\"", false),
                        "refused bad_request: allow_internet_access must be true or false");
    const char *r = policy("{\"allowOut\":[\"a.com\"],\"rules\":{\"a.com\":[{}]}}", NULL, false);
    assert_non_null(strstr(r, "network rules (header transforms on egress requests) are not "
                              "supported by sandpipe"));
    assert_string_equal(policy("{\"allowOut\":[\"a.com\"],\"rules\":{}}", NULL, false),
                        "{\"mode\":\"allowlist\",\"allow\":[\"a.com\"],\"deny\":[]}");
    r = policy("{\"egressProxy\":{\"address\":\"p:1080\"}}", NULL, true);
    assert_non_null(strstr(r, "network egressProxy is not supported by sandpipe"));
    assert_memory_equal(r, "refused not_implemented:", 24);
}

/* getInfo's fields of a normalised policy (JSON). */
static const char *
described(const char *pol)
{
    static char out[1024];
    json_object *p = pol ? json_tokener_parse(pol) : NULL, *d = json_object_new_object();
    e2b_network_describe(p, d);
    snprintf(
        out, sizeof out, "%s",
        json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(p);
    json_object_put(d);
    return out;
}

static void
test_a_policy_reads_back_as_e2b_rules(void **state)
{
    (void)state;
    assert_string_equal(described("{\"mode\":\"none\"}"),
                        "{\"allowInternetAccess\":false,\"network\":{\"allowOut\":[],"
                        "\"denyOut\":[\"0.0.0.0/0\"]}}");
    assert_string_equal(described(NULL), described("{\"mode\":\"none\"}"));
    assert_string_equal(described("{\"mode\":\"egress\",\"deny\":[\"203.0.113.0/24\"]}"),
                        "{\"allowInternetAccess\":true,\"network\":{\"allowOut\":[],"
                        "\"denyOut\":[\"203.0.113.0/24\"]}}");
    assert_string_equal(described("{\"mode\":\"allowlist\",\"allow\":[\"pypi.org\"],\"deny\":"
                                  "[\"198.51.100.9/32\"]}"),
                        "{\"allowInternetAccess\":false,\"network\":{\"allowOut\":[\"pypi.org\"],"
                        "\"denyOut\":[\"0.0.0.0/0\",\"198.51.100.9/32\"]}}");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2b_rules_become_sandpipe_modes),
        cmocka_unit_test(test_what_is_malformed_or_not_served_is_refused),
        cmocka_unit_test(test_a_policy_reads_back_as_e2b_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
