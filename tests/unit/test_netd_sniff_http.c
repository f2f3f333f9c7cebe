/* test_netd_sniff_http.c — netd/sniff on HTTP/1.x request heads (Host with a port, in other
 * case, missing, bracketed, doubled, malformed; the strict framing rules), garbage and empty
 * input. Every input is fed by every prefix (sniff_feed.h). TLS: test_netd_sniff_tls.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sniff_feed.h"

/* ---- HTTP ---- */

static void
test_http_host_with_port_is_lower_cased_without_it(void **state)
{
    (void)state;
    const char *req = "GET /index.html?q=1 HTTP/1.1\r\n"
                      "User-Agent: curl/8.5.0\r\n"
                      "Host: Example.COM:8080\r\n"
                      "Accept: */*\r\n"
                      "\r\n";
    expect_at_end(req, strlen(req), SNIFF_HTTP, "example.com");
}

static void
test_http_without_host_gives_an_empty_name(void **state)
{
    (void)state;
    const char *req = "GET / HTTP/1.0\r\nAccept: */*\r\n\r\n";
    expect_at_end(req, strlen(req), SNIFF_HTTP, "");
    expect_kind("GET / HTTP/1.0\r\n\r\n", SNIFF_HTTP, "");
    expect_kind("GET / HTTP/1.1\r\nHost:\r\n\r\n", SNIFF_HTTP, "");
    expect_kind("GET / HTTP/1.1\r\nHost:  \t \r\n\r\n", SNIFF_HTTP, "");
}

static void
test_http_host_header_is_found_in_any_case_and_trimmed(void **state)
{
    (void)state;
    expect_kind("POST /api HTTP/1.1\r\nhOsT: \t api.Example.org. \t\r\n\r\n", SNIFF_HTTP,
                "api.example.org");
    expect_kind("GET / HTTP/1.1\r\nHOST:a.b\r\nX-Host: evil.example\r\n\r\nbody", SNIFF_HTTP,
                "a.b");
    expect_kind("OPTIONS * HTTP/1.1\r\nHost: star.example:\r\n\r\n", SNIFF_HTTP,
                "star.example"); /* an empty port is allowed */
}

static void
test_http_bracketed_host_gives_an_empty_name_unless_it_is_a_host_name(void **state)
{
    (void)state;
    expect_kind("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", SNIFF_HTTP, "");
    expect_kind("GET / HTTP/1.1\r\nHost: [2001:DB8::1]\r\n\r\n", SNIFF_HTTP, "");
    expect_kind("GET / HTTP/1.1\r\nHost: [Odd.Example]\r\n\r\n", SNIFF_HTTP, "odd.example");
    expect_kind("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", SNIFF_OTHER, "");
    expect_kind("GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", SNIFF_OTHER, "");
    expect_kind("GET / HTTP/1.1\r\nHost: [::1]:80a\r\n\r\n", SNIFF_OTHER, "");
}

static void
test_http_bad_or_doubled_host_is_other(void **state)
{
    (void)state;
    static const char *const reqs[] = {
        "GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a.example\r\nhost: a.example\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a example\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a.example:80:81\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a.example:http\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: user@a.example\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a..example\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: \xc3\xa9.example\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: :80\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++)
        expect_kind(reqs[i], SNIFF_OTHER, "");
}

/* Framing another parser could read differently is refused. */
static void
test_http_framing_is_strict(void **state)
{
    (void)state;
    static const char *const reqs[] = {
        "GET / HTTP/1.1\nHost: a.example\n\n",                /* bare LF */
        "GET / HTTP/1.1\r\nHost: a.example\n\r\n",            /* one bare LF */
        "GET / HTTP/1.1\r\nX: 1\r\n Host: b.example\r\n\r\n", /* obs-fold */
        "GET / HTTP/1.1\r\nHost : a.example\r\n\r\n",         /* space before the colon */
        "GET / HTTP/1.1\r\nHo\x01st: a.example\r\n\r\n",      /* a control byte in a name */
        "GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n",                 /* DEL in a value */
        "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",                  /* a lone CR */
        "GET http://evil.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n", /* absolute form */
        "CONNECT evil.example:443 HTTP/1.1\r\nHost: a.example\r\n\r\n", /* authority form */
        "GET *x HTTP/1.1\r\n\r\n",
        "GET  / HTTP/1.1\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "GET / HTTP/1.x\r\n\r\n",
        "GET / HTTP/1.1 \r\n\r\n",
        "GET /\x80 HTTP/1.1\r\n\r\n",
        "GET\t/ HTTP/1.1\r\n\r\n",
        "Get / HTTP/1.1\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++)
        expect_kind(reqs[i], SNIFF_OTHER, "");
    static const char nul[] = "GET / HTTP/1.1\r\nX: a\0z\r\n\r\n"; /* NUL in a value */
    char name[SNIFF_NAME_MAX + 1];
    assert_int_equal(sniff_prefixes(nul, sizeof nul - 1, name, NULL), SNIFF_OTHER);
}

static void
test_http_garbage_is_other_at_the_first_byte_that_rules_it_out(void **state)
{
    (void)state;
    char name[SNIFF_NAME_MAX + 1];
    size_t decided;
    static const struct {
        const char *text;
        size_t at;
    } cases[] = {
        {"SSH-2.0-OpenSSH_9.6\r\n", 4},
        {"GET /\x01 HTTP/1.1", 6},
        {"get / HTTP/1.1\r\n", 1},
        {"\x00\x01\x02", 1},
        {"GET / HTTX", 10},
        {"EHLO x\r\n", 6},
        {"220 smtp ready\r\n", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = strlen(cases[i].text);
        if (n == 0)
            n = 3;
        assert_int_equal(sniff_prefixes(cases[i].text, n, name, &decided), SNIFF_OTHER);
        if (decided != cases[i].at)
            fail_msg("\"%s\": decided at %zu, not %zu", cases[i].text, decided, cases[i].at);
    }
}

static void
test_http_head_longer_than_the_peek_limit_is_other(void **state)
{
    (void)state;
    static char req[SNIFF_PEEK_MAX + 64];
    char name[SNIFF_NAME_MAX + 1];
    int n = snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: a.example\r\nX-Pad: ");
    memset(req + n, 'p', sizeof req - (size_t)n);
    assert_int_equal(sniff_name((unsigned char *)req, SNIFF_PEEK_MAX - 1, name, sizeof name),
                     SNIFF_MORE);
    assert_int_equal(sniff_name((unsigned char *)req, SNIFF_PEEK_MAX, name, sizeof name),
                     SNIFF_OTHER);
    assert_int_equal(sniff_name((unsigned char *)req, sizeof req, name, sizeof name), SNIFF_OTHER);
    /* a head that ends just within the limit is read */
    memcpy(req + SNIFF_PEEK_MAX - 4, "\r\n\r\n", 4);
    assert_int_equal(sniff_name((unsigned char *)req, SNIFF_PEEK_MAX, name, sizeof name),
                     SNIFF_HTTP);
    assert_string_equal(name, "a.example");
}

/* ---- either ---- */

static void
test_empty_input_asks_for_more_and_a_small_buffer_is_refused(void **state)
{
    (void)state;
    char name[SNIFF_NAME_MAX + 1] = "x";
    assert_int_equal(sniff_name((const unsigned char *)"", 0, name, sizeof name), SNIFF_MORE);
    assert_string_equal(name, "");
    const char *req = "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n";
    strcpy(name, "x");
    assert_int_equal(sniff_name((const unsigned char *)req, strlen(req), name, SNIFF_NAME_MAX),
                     SNIFF_OTHER);
    assert_string_equal(name, "");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_host_with_port_is_lower_cased_without_it),
        cmocka_unit_test(test_http_without_host_gives_an_empty_name),
        cmocka_unit_test(test_http_host_header_is_found_in_any_case_and_trimmed),
        cmocka_unit_test(test_http_bracketed_host_gives_an_empty_name_unless_it_is_a_host_name),
        cmocka_unit_test(test_http_bad_or_doubled_host_is_other),
        cmocka_unit_test(test_http_framing_is_strict),
        cmocka_unit_test(test_http_garbage_is_other_at_the_first_byte_that_rules_it_out),
        cmocka_unit_test(test_http_head_longer_than_the_peek_limit_is_other),
        cmocka_unit_test(test_empty_input_asks_for_more_and_a_small_buffer_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
