/* test_net_policy.c — common/net_policy: the forms a session's "network" takes (absent, a
 * boolean, a mode's name, an object), their normalised form (which parses back to itself), what
 * a malformed one is refused with, CIDR parsing and matching, and domain rules (exact names and
 * "*." wildcards, case and a trailing dot ignored). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "json_util.h"
#include "net_policy.h"

static int
parse(const char *text, net_mode_t def, net_policy_t *p, err_t *err)
{
    json_object *v = text ? json_tokener_parse(text) : NULL;
    int e = net_policy_parse(v, def, p, err);
    json_object_put(v);
    return e;
}

/* The normalised text of a policy given as text. */
static void
assert_normal(const char *text, const char *want)
{
    net_policy_t p, again;
    err_t err = {0};
    assert_int_equal(parse(text, NET_NONE, &p, &err), 0);
    json_object *o = net_policy_to_json(&p);
    assert_string_equal(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        want);
    assert_int_equal(net_policy_parse(o, NET_NONE, &again, &err), 0); /* a fixed point */
    json_object *o2 = net_policy_to_json(&again);
    assert_string_equal(
        json_object_to_json_string_ext(o2, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        want);
    json_object_put(o);
    json_object_put(o2);
    net_policy_free(&p);
    net_policy_free(&again);
}

static void
assert_refused(const char *text, const char *why)
{
    net_policy_t p;
    err_t err = {0};
    assert_int_equal(parse(text, NET_NONE, &p, &err), -ERR_BAD_REQ);
    if (!strstr(err.msg, why))
        fail_msg("\"%s\": \"%s\" does not say \"%s\"", text, err.msg, why);
}

static void
test_every_form_normalises(void **state)
{
    (void)state;
    assert_normal(NULL, "{\"mode\":\"none\"}");
    assert_normal("null", "{\"mode\":\"none\"}");
    assert_normal("true", "{\"mode\":\"egress\"}");
    assert_normal("false", "{\"mode\":\"none\"}");
    assert_normal("\"egress\"", "{\"mode\":\"egress\"}");
    assert_normal("\"none\"", "{\"mode\":\"none\"}");
    assert_normal("{}", "{\"mode\":\"egress\"}");
    assert_normal(
        "{\"allow\":[\"PyPI.org.\",\"*.PythonHosted.org\",\"203.0.113.0/24\",\"198.51.100.7\"]}",
        "{\"mode\":\"allowlist\",\"allow\":[\"203.0.113.0/24\",\"198.51.100.7/32\","
        "\"pypi.org\",\"*.pythonhosted.org\"]}");
    assert_normal("{\"mode\":\"egress\",\"deny\":[\"10.0.0.0/8\",\"evil.example\"]}",
                  "{\"mode\":\"egress\",\"deny\":[\"10.0.0.0/8\",\"evil.example\"]}");
}

static void
test_absent_takes_the_default(void **state)
{
    (void)state;
    net_policy_t p;
    err_t err = {0};
    assert_int_equal(parse(NULL, NET_EGRESS, &p, &err), 0);
    assert_int_equal(p.mode, NET_EGRESS);
    net_policy_free(&p);
    assert_int_equal(parse("false", NET_EGRESS, &p, &err), 0); /* asked: none */
    assert_int_equal(p.mode, NET_NONE);
    net_policy_free(&p);
}

static void
test_malformed_policies_say_why(void **state)
{
    (void)state;
    assert_refused("\"allowlist\"", "network must be");
    assert_refused("\"all\"", "network must be");
    assert_refused("42", "network must be a boolean");
    assert_refused("{\"mode\":\"open\"}", "network.mode must be");
    assert_refused("{\"mode\":7}", "network.mode must be");
    assert_refused("{\"ports\":[80]}", "unknown field \"ports\"");
    assert_refused("{\"allow\":\"pypi.org\"}", "must be a list");
    assert_refused("{\"allow\":[1]}", "network.allow[0] must be a string");
    assert_refused("{\"allow\":[]}", "non-empty allow list");
    assert_refused("{\"mode\":\"egress\",\"allow\":[\"pypi.org\"]}", "allowlist mode, not egress");
    assert_refused("{\"mode\":\"none\",\"allow\":[\"pypi.org\"]}", "allowlist mode, not none");
    assert_refused("{\"allow\":[\"10.1.2.3/8\"]}", "host bits zero");
    assert_refused("{\"allow\":[\"10.1.2.0/33\"]}", "neither an IPv4");
    assert_refused("{\"allow\":[\"2001:db8::/32\"]}", "IPv4 only");
    assert_refused("{\"allow\":[\"a..b\"]}", "neither an IPv4");
    assert_refused("{\"allow\":[\"*\"]}", "neither an IPv4");
    assert_refused("{\"allow\":[\"a.*.b\"]}", "neither an IPv4");
    assert_refused("{\"allow\":[\"exa mple.com\"]}", "neither an IPv4");
    assert_refused("{\"allow\":[\"1.2.3.4.5\"]}", "neither an IPv4");
    char big[400];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char text[512];
    snprintf(text, sizeof text, "{\"deny\":[\"%s\"]}", big);
    assert_refused(text, "too long");
    /* at most NET_RULES_MAX entries in a list */
    json_object *o = json_object_new_object(), *a = json_object_new_array();
    for (int i = 0; i <= NET_RULES_MAX; i++) {
        char d[32];
        snprintf(d, sizeof d, "h%d.example", i);
        json_object_array_add(a, json_object_new_string(d));
    }
    json_object_object_add(o, "deny", a);
    net_policy_t p;
    err_t err = {0};
    assert_int_equal(net_policy_parse(o, NET_NONE, &p, &err), -ERR_BAD_REQ);
    assert_non_null(strstr(err.msg, "more than 256 entries"));
    json_object_put(o);
}

static struct in_addr
ip(const char *s)
{
    struct in_addr a;
    inet_pton(AF_INET, s, &a);
    return a;
}

static void
test_cidrs_match_their_addresses_only(void **state)
{
    (void)state;
    net_cidr_t c;
    assert_int_equal(net_cidr_parse("203.0.113.0/24", &c), 0);
    assert_true(net_cidr_has(&c, ip("203.0.113.0")));
    assert_true(net_cidr_has(&c, ip("203.0.113.255")));
    assert_false(net_cidr_has(&c, ip("203.0.114.0")));
    assert_int_equal(net_cidr_parse("0.0.0.0/0", &c), 0);
    assert_true(net_cidr_has(&c, ip("255.255.255.255")));
    assert_int_equal(net_cidr_parse("192.0.2.7", &c), 0);
    assert_int_equal(c.bits, 32);
    assert_false(net_cidr_has(&c, ip("192.0.2.8")));
    assert_int_equal(net_cidr_parse("192.0.2.7/", &c), -1);
    assert_int_equal(net_cidr_parse("192.0.2.7/-1", &c), -1);
    assert_int_equal(net_cidr_parse("/8", &c), -1);
    char s[32];
    net_cidr_parse("10.0.0.0/8", &c);
    net_cidr_format(&c, s, sizeof s);
    assert_string_equal(s, "10.0.0.0/8");
}

static void
test_domain_rules_exact_and_wildcard(void **state)
{
    (void)state;
    net_policy_t p;
    err_t err = {0};
    assert_int_equal(parse("{\"allow\":[\"pypi.org\",\"*.pythonhosted.org\",\"203.0.113.0/24\"]}",
                           NET_NONE, &p, &err),
                     0);
    assert_string_equal(net_list_domain(&p.allow, "pypi.org"), "pypi.org");
    assert_null(net_list_domain(&p.allow, "www.pypi.org")); /* exact means exact */
    assert_null(net_list_domain(&p.allow, "evilpypi.org"));
    assert_string_equal(net_list_domain(&p.allow, "files.pythonhosted.org"), "*.pythonhosted.org");
    assert_string_equal(net_list_domain(&p.allow, "a.b.pythonhosted.org"), "*.pythonhosted.org");
    assert_null(net_list_domain(&p.allow, "pythonhosted.org")); /* the wildcard is below it */
    assert_null(net_list_domain(&p.allow, "evilpythonhosted.org"));
    assert_non_null(net_list_cidr(&p.allow, ip("203.0.113.9")));
    assert_null(net_list_cidr(&p.allow, ip("203.0.112.9")));
    net_policy_free(&p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_form_normalises),
        cmocka_unit_test(test_absent_takes_the_default),
        cmocka_unit_test(test_malformed_policies_say_why),
        cmocka_unit_test(test_cidrs_match_their_addresses_only),
        cmocka_unit_test(test_domain_rules_exact_and_wildcard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
