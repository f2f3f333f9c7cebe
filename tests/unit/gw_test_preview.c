/* gw_test_preview.c — previews' pure parts: the token (common/preview_token.c), the head nginx
 * hands the preview listener and what the app gets of it (gateway/preview_head.c), who may open
 * what (gateway/preview_access.c), the listener's own pages (gateway/preview_page.c) and a port's
 * host-form URL from nginx's template (gateway/preview_url.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "preview_access.h"
#include "preview_head.h"
#include "preview_page.h"
#include "preview_token.h"
#include "preview_url.h"

#define SID "s-0123456789abcdef"
#define NOW 1800000000

static uint8_t key[32];

static int
setup(void **state)
{
    (void)state;
    uint8_t secret[32];
    for (size_t i = 0; i < sizeof secret; i++)
        secret[i] = (uint8_t)i;
    return preview_key_derive(secret, sizeof secret, key);
}

static void
mint(char kind, unsigned port, int64_t exp, char *out)
{
    assert_int_equal(preview_token_mint(key, SID, kind, port, exp, out, PREVIEW_TOKEN_MAX), 0);
}

static void
test_a_token_says_what_it_was_minted_for_and_nothing_else_passes(void **state)
{
    (void)state;
    char tok[PREVIEW_TOKEN_MAX], bad[PREVIEW_TOKEN_MAX];
    preview_claims_t c;
    mint(PREVIEW_KIND_SHARE, 8000, NOW + 60, tok);
    assert_int_equal(preview_token_check(key, SID, tok, &c), 0);
    assert_int_equal(c.kind, 's');
    assert_int_equal(c.port, 8000);
    assert_int_equal(c.exp, NOW + 60);
    assert_true(strspn(tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                strlen(tok));
    /* another session, another key, any character changed, cut or lengthened */
    assert_int_equal(preview_token_check(key, "s-other", tok, &c), -1);
    uint8_t k2[32];
    memcpy(k2, key, sizeof k2);
    k2[0] ^= 1;
    assert_int_equal(preview_token_check(k2, SID, tok, &c), -1);
    for (size_t i = 0; tok[i]; i++) {
        snprintf(bad, sizeof bad, "%s", tok);
        bad[i] = bad[i] == '1' ? '2' : '1';
        assert_int_equal(preview_token_check(key, SID, bad, &c), -1);
    }
    snprintf(bad, sizeof bad, "%.*s", (int)strlen(tok) - 1, tok);
    assert_int_equal(preview_token_check(key, SID, bad, &c), -1);
    char longer[PREVIEW_TOKEN_MAX + 1];
    snprintf(longer, sizeof longer, "%.*sA", PREVIEW_TOKEN_MAX - 1, tok);
    assert_int_equal(preview_token_check(key, SID, longer, &c), -1);
    /* a shared token names its port; kinds are o, s, 1 */
    assert_int_equal(preview_token_mint(key, SID, 's', 0, NOW, bad, sizeof bad), -1);
    assert_int_equal(preview_token_mint(key, SID, 'x', 80, NOW, bad, sizeof bad), -1);
    assert_int_equal(preview_token_mint(key, SID, 'o', 70000, NOW, bad, sizeof bad), -1);
    /* two mints of the same claims differ (the nonce) */
    mint(PREVIEW_KIND_SHARE, 8000, NOW + 60, bad);
    assert_string_not_equal(tok, bad);
}

static const char HEAD_PATH[] =
    "GET /preview/" SID "/8000/~TOKEN/app/x.js?a=1&sp_token=QT&b=2 HTTP/1.1\r\n"
    "Host: 127.0.0.1:8080\r\n"
    "X-SP-Route-Key: abc\r\n"
    "X-SP-Preview: path " SID " 8000\r\n"
    "Cookie: theirs=1; sp_pv=CK; other=2\r\n"
    "X-SP-Preview-Token: HT\r\n"
    "X-Forwarded-Prefix: /forged\r\n"
    "X-Forwarded-Proto: https\r\n"
    "Upgrade: websocket\r\n"
    "Accept: */*\r\n\r\n";

static void
test_the_head_gives_the_app_its_own_request_and_no_sandpipe_credential(void **state)
{
    (void)state;
    preview_head_t h;
    buf_t app = {0};
    err_t err = {0};
    assert_int_equal(preview_head_parse(HEAD_PATH, sizeof HEAD_PATH - 1, &h, &app, &err), 0);
    assert_string_equal(h.method, "GET");
    assert_int_equal(h.mode, PREVIEW_PATH);
    assert_string_equal(h.sid, SID);
    assert_int_equal(h.port, 8000);
    assert_string_equal(h.route_key, "abc");
    assert_true(h.upgrade);
    assert_true(h.https);
    assert_false(h.needs_slash);
    assert_string_equal(h.target, "/app/x.js?a=1&b=2");
    assert_int_equal(h.ntokens, 4);
    assert_string_equal(h.tokens[0].tok, "TOKEN");
    assert_int_equal(h.tokens[0].from, PREVIEW_FROM_PATH);
    assert_string_equal(h.tokens[1].tok, "QT");
    assert_int_equal(h.tokens[1].from, PREVIEW_FROM_QUERY);
    assert_string_equal(h.tokens[2].tok, "CK");
    assert_int_equal(h.tokens[2].from, PREVIEW_FROM_COOKIE);
    assert_string_equal(h.tokens[3].tok, "HT");
    assert_int_equal(h.tokens[3].from, PREVIEW_FROM_HEADER);
    buf_append(&app, "", 1);
    assert_string_equal((char *)app.data,
                        "GET /app/x.js?a=1&b=2 HTTP/1.1\r\n"
                        "Host: 127.0.0.1:8080\r\n"
                        "Cookie: theirs=1; other=2\r\n"
                        "X-Forwarded-Proto: https\r\n"
                        "Upgrade: websocket\r\n"
                        "Accept: */*\r\n"
                        "X-Forwarded-Prefix: /preview/" SID "/8000/~TOKEN\r\n\r\n");
    buf_free(&app);
}

static int
parse(const char *head, preview_head_t *h, buf_t *app)
{
    err_t err = {0};
    return preview_head_parse(head, strlen(head), h, app, &err);
}

/* E2B's client sends the sandbox's trafficAccessToken in e2b-traffic-access-token (any case):
 * the same credential as X-SP-Preview-Token, and the app never sees it. */
static void
test_e2b_traffic_access_token_is_a_header_credential(void **state)
{
    (void)state;
    preview_head_t h;
    buf_t app = {0};
    assert_int_equal(parse("GET /api?q=1 HTTP/1.1\r\n"
                           "Host: 8000-" SID ".localhost:8080\r\n"
                           "X-SP-Route-Key: abc\r\n"
                           "X-SP-Preview: host " SID " 8000\r\n"
                           "E2B-Traffic-Access-Token: ET\r\n"
                           "Accept: */*\r\n\r\n",
                           &h, &app),
                     0);
    assert_int_equal(h.ntokens, 1);
    assert_string_equal(h.tokens[0].tok, "ET");
    assert_int_equal(h.tokens[0].from, PREVIEW_FROM_HEADER);
    buf_append(&app, "", 1);
    assert_string_equal((char *)app.data, "GET /api?q=1 HTTP/1.1\r\n"
                                          "Host: 8000-" SID ".localhost:8080\r\n"
                                          "Accept: */*\r\n\r\n");
    buf_free(&app);
}

static void
test_host_form_targets_and_slashes(void **state)
{
    (void)state;
    preview_head_t h;
    buf_t app = {0};
    assert_int_equal(parse("GET /?sp_token=T HTTP/1.1\r\nX-SP-Preview: host " SID " 3000\r\n"
                           "Cookie: sp_pv=C\r\n\r\n",
                           &h, &app),
                     0);
    assert_int_equal(h.mode, PREVIEW_HOST);
    assert_string_equal(h.target, "/");
    assert_string_equal(h.prefix, "");
    buf_append(&app, "", 1);
    assert_string_equal((char *)app.data, "GET / HTTP/1.1\r\n\r\n"); /* no Cookie line left */
    buf_clear(&app);
    /* the port with nothing after it, or only a query: a redirect to …/P/ */
    assert_int_equal(parse("GET /preview/" SID "/80?x=1 HTTP/1.0\r\nX-SP-Preview: path " SID
                           " 80\r\n\r\n",
                           &h, &app),
                     0);
    assert_true(h.needs_slash);
    assert_string_equal(h.target, "/?x=1");
    buf_clear(&app);
    assert_int_equal(parse("GET /preview/" SID "/80/~T HTTP/1.1\r\nX-SP-Preview: path " SID
                           " 80\r\n\r\n",
                           &h, &app),
                     0);
    assert_true(h.needs_slash);
    buf_free(&app);
}

static void
test_heads_this_listener_does_not_serve_are_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "GET / HTTP/1.1\r\n\r\n", /* not from nginx */
        "GET /preview/" SID "/81/ HTTP/1.1\r\nX-SP-Preview: path " SID " 80\r\n\r\n", /* mismatch */
        "GET /preview/" SID "/800/ HTTP/1.1\r\nX-SP-Preview: path " SID " 80\r\n\r\n",
        "GET /x HTTP/1.1\r\nX-SP-Preview: host " SID " 80\r\nX-SP-Preview: host s-b 80\r\n\r\n",
        "GET /x HTTP/1.1\r\nX-SP-Preview: host " SID " 0\r\n\r\n",
        "GET /x HTTP/1.1\r\nX-SP-Preview: host " SID " 65536\r\n\r\n",
        "GET /x HTTP/1.1\r\nX-SP-Preview: both " SID " 80\r\n\r\n",
        "GET /x HTTP/1.1\r\nX-SP-Preview: host ../x 80\r\n\r\n",
        "GET x HTTP/1.1\r\nX-SP-Preview: host " SID " 80\r\n\r\n",
        "GET /x HTTP/2.0\r\nX-SP-Preview: host " SID " 80\r\n\r\n",
        "G(T /x HTTP/1.1\r\nX-SP-Preview: host " SID " 80\r\n\r\n",
        "GET /x HTTP/1.1\r\nX-SP-Preview: host " SID " 80\r\n folded\r\n\r\n",
        "GET /x HTTP/1.1\r\nX-SP-Preview: host " SID " 80\r\nA: b\x01\r\n\r\n",
        "GET /preview/" SID "/80/~bad*tok/ HTTP/1.1\r\nX-SP-Preview: path " SID " 80\r\n\r\n",
        "GET /x HTTP/1.1\r\nX-SP-Preview: host " SID " 80\r\n", /* no blank line */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        preview_head_t h;
        buf_t app = {0};
        err_t err = {0};
        assert_int_equal(preview_head_parse(bad[i], strlen(bad[i]), &h, &app, &err), -1);
        assert_true(err.code == ERR_BAD_REQ || err.code == ERR_TOO_BIG);
        buf_free(&app);
    }
}

static void
decide(const char *tok, preview_from_t from, unsigned port, bool pub, preview_verdict_t *v)
{
    preview_head_t h = {0};
    snprintf(h.sid, sizeof h.sid, "%s", SID);
    h.port = port;
    if (tok) {
        snprintf(h.tokens[0].tok, sizeof h.tokens[0].tok, "%s", tok);
        h.tokens[0].from = from;
        h.ntokens = 1;
    }
    preview_decide(key, &h, pub, NOW, v);
}

static void
test_who_may_open_a_port(void **state)
{
    (void)state;
    char share[PREVIEW_TOKEN_MAX], owner[PREVIEW_TOKEN_MAX], once[PREVIEW_TOKEN_MAX],
        old[PREVIEW_TOKEN_MAX], other[PREVIEW_TOKEN_MAX];
    preview_verdict_t v;
    mint('s', 8000, NOW + 60, share);
    mint('o', 0, NOW + 60, owner);
    mint('1', 8000, NOW + 60, once);
    mint('s', 8000, NOW, old);
    assert_int_equal(preview_token_mint(key, "s-other", 's', 8000, NOW + 60, other, sizeof other),
                     0);
    decide(NULL, 0, 8000, false, &v);
    assert_int_equal(v.kind, PREVIEW_DENY);
    assert_int_equal(v.status, 401);
    assert_non_null(strstr(v.why, "no preview credential"));
    decide(NULL, 0, 8000, true, &v);
    assert_int_equal(v.kind, PREVIEW_ALLOW);
    decide(share, PREVIEW_FROM_PATH, 8000, false, &v);
    assert_int_equal(v.kind, PREVIEW_ALLOW);
    decide(share, PREVIEW_FROM_QUERY, 8000, false, &v);
    assert_int_equal(v.kind, PREVIEW_REDIRECT);
    assert_string_equal(v.token, share);
    decide(share, PREVIEW_FROM_COOKIE, 3000, false, &v);
    assert_int_equal(v.status, 403);
    assert_non_null(strstr(v.why, "for port 8000 of session " SID ", not port 3000"));
    decide(owner, PREVIEW_FROM_COOKIE, 3000, false, &v);
    assert_int_equal(v.kind, PREVIEW_ALLOW);
    decide(old, PREVIEW_FROM_PATH, 8000, false, &v);
    assert_int_equal(v.status, 403);
    assert_non_null(strstr(v.why, "expired at 2027-01-15T08:00:00Z"));
    decide(other, PREVIEW_FROM_PATH, 8000, false, &v);
    assert_int_equal(v.status, 403);
    assert_non_null(strstr(v.why, "not one of session " SID));
    decide(once, PREVIEW_FROM_QUERY, 8000, false, &v);
    assert_int_equal(v.kind, PREVIEW_ONCE);
    decide(once, PREVIEW_FROM_PATH, 8000, false, &v);
    assert_int_equal(v.kind, PREVIEW_DENY);
    assert_non_null(strstr(v.why, "opened by its URL, once"));
}

static void
test_pages_escape_what_they_quote(void **state)
{
    (void)state;
    buf_t b = {0};
    preview_page(&b, 403, "Not <allowed>", "port \"8000\" & <script>x</script>", NULL);
    buf_append(&b, "", 1);
    const char *t = (const char *)b.data;
    assert_non_null(strstr(t, "HTTP/1.1 403 Forbidden\r\n"));
    assert_non_null(strstr(t, "Connection: close\r\n"));
    assert_null(strstr(t, "<script>"));
    assert_non_null(strstr(t, "&lt;script&gt;x&lt;/script&gt;"));
    assert_non_null(strstr(t, "port &quot;8000&quot; &amp;"));
    char cl[64];
    const char *body = strstr(t, "\r\n\r\n") + 4;
    snprintf(cl, sizeof cl, "Content-Length: %zu\r\n", strlen(body));
    assert_non_null(strstr(t, cl));
    buf_free(&b);
}

static void
test_host_urls_fill_nginxs_template_or_say_there_is_none(void **state)
{
    (void)state;
    char url[64];
    assert_int_equal(
        preview_host_url("http://{port}-{session}.localhost:8080", SID, 60001, url, sizeof url), 0);
    assert_string_equal(url, "http://60001-" SID ".localhost:8080/");
    assert_int_equal(
        preview_host_url("https://{port}-{session}.example.com", "s-1", 80, url, sizeof url), 0);
    assert_string_equal(url, "https://80-s-1.example.com/");
    /* no preview domain (nginx sends ""), or no such template: none, never half a URL */
    const char *none[] = {"", "http://{session}-{port}.x", "http://{port}.x", "http://{session}.x",
                          "{port-{session}"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        strcpy(url, "old");
        assert_int_equal(preview_host_url(none[i], SID, 1, url, sizeof url), -1);
        assert_string_equal(url, "");
    }
    assert_int_equal(preview_host_url("http://{port}{session}", "s", 1, url, sizeof url), 0);
    assert_string_equal(url, "http://1s/");
    /* one that does not fit is no URL either */
    assert_int_equal(preview_host_url("http://{port}-{session}.localhost:8080", SID, 60001, url,
                                      strlen("http://60001-" SID ".localhost:8080/")),
                     -1);
    assert_string_equal(url, "");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_token_says_what_it_was_minted_for_and_nothing_else_passes),
        cmocka_unit_test(test_the_head_gives_the_app_its_own_request_and_no_sandpipe_credential),
        cmocka_unit_test(test_host_form_targets_and_slashes),
        cmocka_unit_test(test_e2b_traffic_access_token_is_a_header_credential),
        cmocka_unit_test(test_heads_this_listener_does_not_serve_are_refused),
        cmocka_unit_test(test_who_may_open_a_port),
        cmocka_unit_test(test_pages_escape_what_they_quote),
        cmocka_unit_test(test_host_urls_fill_nginxs_template_or_say_there_is_none),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
