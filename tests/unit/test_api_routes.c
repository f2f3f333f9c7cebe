/* test_api_routes.c — api/routes.c's route table: every documented route (docs/api.md: the REST
 * API, /runtime/{id}/, /openhands/, /e2b/) resolves to its handler with its captures, auth, body
 * handling and error flavour; 404 and 405; the trailing slash; percent-decoded captures and
 * the segments refused (bad escapes, a '/' or a NUL once decoded, too long); a runtime's own
 * URL (/rt-…/) turned into /runtime/rt-…/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/e2b/e2b.h"
#include "api/routes.h"
#include "xalloc.h"

api_cfg_t g_api; /* main.c's, which the test does not link */

#define NONE   API_ROUTE_AUTH_NONE
#define ANY    API_ROUTE_AUTH_ANY
#define ADMIN  API_ROUTE_AUTH_ADMIN
#define STREAM API_ROUTE_BODY_STREAM
#define REST   API_REST
#define ACTION API_OH_ACTION_SERVER
#define RTAPI  API_OH_RUNTIME_API
#define E2B    API_E2B

typedef struct {
    const char *method, *path;
    api_handler_fn fn;
    int flags;
    api_flavour_t flavour;
    const char *param; /* the one capture, NULL for none */
} expect_t;

/* Every route as docs/api.md lists it, with an id for each {capture}. */
static const expect_t documented[] = {
    {"GET", "/api/v1/health", api_health, NONE, REST, NULL},
    {"GET", "/api/v1/pool", api_pool, ANY, REST, NULL},
    {"GET", "/metrics", api_metrics, ADMIN, REST, NULL},
    {"POST", "/api/v1/tokens", api_tokens_create, ADMIN, REST, NULL},
    {"POST", "/api/v1/sessions", api_sessions_create, ANY, REST, NULL},
    {"GET", "/api/v1/sessions", api_sessions_list, ANY, REST, NULL},
    {"GET", "/api/v1/sessions/s-1", api_sessions_get, ANY, REST, "s-1"},
    {"DELETE", "/api/v1/sessions/s-1", api_sessions_delete, ANY, REST, "s-1"},
    {"POST", "/api/v1/sessions/s-1/pause", api_sessions_pause, ANY, REST, "s-1"},
    {"POST", "/api/v1/sessions/s-1/resume", api_sessions_resume, ANY, REST, "s-1"},
    {"POST", "/api/v1/sessions/s-1/actions", api_actions_submit, ANY, REST, "s-1"},
    {"POST", "/api/v1/sessions/s-1/signal", api_signal_send, ANY, REST, "s-1"},
    {"GET", "/api/v1/sessions/s-1/events", api_events_list, ANY, REST, "s-1"},
    {"GET", "/api/v1/sessions/s-1/files", api_files_list, ANY, REST, "s-1"},
    {"GET", "/api/v1/sessions/s-1/files/stat", api_files_stat, ANY, REST, "s-1"},
    {"GET", "/api/v1/sessions/s-1/files/content", api_files_read, ANY, REST, "s-1"},
    {"PUT", "/api/v1/sessions/s-1/files/content", api_files_put, ANY | STREAM, REST, "s-1"},
    {"POST", "/api/v1/sessions/s-1/files/content", api_files_write, ANY, REST, "s-1"},
    {"GET", "/api/v1/sessions/s-1/files/download", api_files_download, ANY, REST, "s-1"},
    {"DELETE", "/api/v1/sessions/s-1/files", api_files_remove, ANY, REST, "s-1"},
    {"POST", "/api/v1/sessions/s-1/files/mkdir", api_files_mkdir, ANY, REST, "s-1"},
    {"POST", "/api/v1/sessions/s-1/files/move", api_files_move, ANY, REST, "s-1"},
    {"GET", "/openhands/runtime/rt-0123456789abcdef", api_oh_runtime_get, NONE, RTAPI,
     "rt-0123456789abcdef"},
    {"POST", "/openhands/pause", api_oh_pause, NONE, RTAPI, NULL},
    {"POST", "/openhands/resume", api_oh_resume, NONE, RTAPI, NULL},
    {"POST", "/openhands/stop", api_oh_stop, NONE, RTAPI, NULL},
    {"GET", "/openhands/list", api_oh_list, NONE, RTAPI, NULL},
    {"GET", "/openhands/registry_prefix", api_oh_registry_prefix, NONE, RTAPI, NULL},
    {"GET", "/openhands/image_exists", api_oh_image_exists, NONE, RTAPI, NULL},
    {"POST", "/openhands/build", api_oh_build, NONE | STREAM, RTAPI, NULL},
    {"GET", "/openhands/build_status", api_oh_build_status, NONE, RTAPI, NULL},
    {"POST", "/e2b/sandboxes", api_e2b_create, NONE, E2B, NULL},
    {"POST", "/e2b/v2/sandboxes", api_e2b_create, NONE, E2B, NULL},
    {"GET", "/e2b/sandboxes", api_e2b_list, NONE, E2B, NULL},
    {"GET", "/e2b/v2/sandboxes", api_e2b_list, NONE, E2B, NULL},
    {"GET", "/e2b/sandboxes/s-1", api_e2b_get, NONE, E2B, "s-1"},
    {"DELETE", "/e2b/sandboxes/s-1", api_e2b_kill, NONE, E2B, "s-1"},
    {"POST", "/e2b/sandboxes/s-1/timeout", api_e2b_set_timeout, NONE, E2B, "s-1"},
    {"POST", "/e2b/sandboxes/s-1/pause", api_e2b_pause, NONE, E2B, "s-1"},
    {"POST", "/e2b/sandboxes/s-1/connect", api_e2b_connect, NONE, E2B, "s-1"},
    {"POST", "/e2b/v2/sandboxes/s-1/connect", api_e2b_connect, NONE, E2B, "s-1"},
    {"POST", "/e2b/sandboxes/s-1/resume", api_e2b_resume, NONE, E2B, "s-1"},
    {"POST", "/e2b/sandboxes/s-1/refreshes", api_e2b_refresh, NONE, E2B, "s-1"},
    {"PUT", "/e2b/sandboxes/s-1/network", api_e2b_update_network, NONE, E2B, "s-1"},
    {"GET", "/e2b/sandboxes/s-1/metrics", api_e2b_metrics, NONE, E2B, "s-1"},
    {"GET", "/e2b/sandboxes/s-1/logs", api_e2b_logs, NONE, E2B, "s-1"},
    {"GET", "/e2b/v2/sandboxes/s-1/logs", api_e2b_logs_v2, NONE, E2B, "s-1"},
    {"POST", "/e2b/sandboxes/s-1/snapshots", api_e2b_snapshot_create, NONE, E2B, "s-1"},
    {"GET", "/e2b/snapshots", api_e2b_snapshots, NONE, E2B, NULL},
    {"POST", "/e2b/sandboxes/s-1/fork", api_e2b_fork, NONE, E2B, "s-1"},
    {"GET", "/e2b/templates", api_e2b_templates, NONE, E2B, NULL},
    {"GET", "/e2b/templates/aliases/my-image", api_e2b_template_alias, NONE, E2B, "my-image"},
    {"POST", "/e2b/v3/templates", api_e2b_template_build, NONE, E2B, NULL},
    {"POST", "/e2b/v2/templates", api_e2b_template_build, NONE, E2B, NULL},
    {"POST", "/e2b/templates", api_e2b_template_build, NONE, E2B, NULL},
    {"DELETE", "/e2b/templates/my-image", api_e2b_template_delete, NONE, E2B, "my-image"},
};

static void
test_every_documented_route_resolves_to_its_handler(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof documented / sizeof documented[0]; i++) {
        const expect_t *x = &documented[i];
        api_route_match_t m;
        int rc = api_route_find(x->method, x->path, &m);
        if (rc != API_ROUTE_FOUND)
            fail_msg("%s %s: %d", x->method, x->path, rc);
        assert_ptr_equal(m.route->fn, x->fn);
        assert_int_equal(m.route->flags, x->flags);
        assert_int_equal(m.route->flavour, x->flavour);
        assert_string_equal(m.route->method, x->method);
        assert_int_equal(m.nparams, x->param ? 1 : 0);
        if (x->param)
            assert_string_equal(m.params[0], x->param);
    }
}

/* The API's flavour follows its prefix: /runtime/ is the action server, /openhands/ the Remote
 * Runtime API, /e2b/ E2B's, everything else REST. */
static void
test_flavour_follows_the_prefix(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof documented / sizeof documented[0]; i++) {
        const char *p = documented[i].path;
        api_flavour_t want = !strncmp(p, "/runtime/", 9)      ? ACTION
                             : !strncmp(p, "/openhands/", 11) ? RTAPI
                             : !strncmp(p, "/e2b/", 5)        ? E2B
                                                              : REST;
        assert_int_equal(documented[i].flavour, want);
    }
}

static void
test_a_path_with_another_method_is_405(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"DELETE", "/api/v1/health"},
        {"PATCH", "/api/v1/sessions"},
        {"PUT", "/api/v1/sessions/s-1"},
        {"GET", "/api/v1/sessions/s-1/actions"},
        {"DELETE", "/api/v1/sessions/s-1/files/content"},
        {"DELETE", "/openhands/list"},
        {"GET", "/openhands/start"},
        {"GET", "/e2b/templates/base"},
        {"GET", "/e2b/sandboxes/s-1/network"},
        {"get", "/api/v1/health"}, /* methods are case-sensitive, as HTTP's */
        {"", "/metrics"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        api_route_match_t m;
        assert_int_equal(api_route_find(cases[i][0], cases[i][1], &m), API_ROUTE_NO_METHOD);
        assert_null(m.route);
        assert_int_equal(m.nparams, 0);
    }
}

static void
test_unknown_paths_are_404(void **state)
{
    (void)state;
    static const char *const paths[] = {
        "/",
        "",
        "/api",
        "/api/v1",
        "/api/v1/nope",
        "/api/v2/health",
        "api/v1/health", /* no leading slash */
        "/API/v1/health",
        "/api/v1/health//",
        "/api/v1/sessions/s-1/nope",
        "/api/v1/sessions/s-1/files/content/extra",
        "/api/v1/sessions//events", /* an empty capture matches nothing */
        "/runtime/s-1",
        "/runtime/s-1/nope",
        "/runtime//alive",
        "/runtime/s-1/alive", /* the action server is the session's gateway's (gateway/http_rt.h) */
        "/runtime/s-1/execute_action",
        "/openhands",
        "/openhands/sessions",
        "/metrics/x",
        "//api/v1/health",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        api_route_match_t m;
        int rc = api_route_find("GET", paths[i], &m);
        if (rc != API_ROUTE_NO_PATH)
            fail_msg("%s: %d", paths[i], rc);
        assert_null(m.route);
    }
}

static void
test_one_trailing_slash_is_tolerated(void **state)
{
    (void)state;
    api_route_match_t m;
    assert_int_equal(api_route_find("GET", "/api/v1/health/", &m), API_ROUTE_FOUND);
    assert_ptr_equal(m.route->fn, api_health);
    assert_int_equal(api_route_find("GET", "/api/v1/sessions/", &m), API_ROUTE_FOUND);
    assert_ptr_equal(m.route->fn, api_sessions_list);
    assert_int_equal(api_route_find("GET", "/api/v1/sessions/s-1/events/", &m), API_ROUTE_FOUND);
    assert_ptr_equal(m.route->fn, api_events_list);
    assert_string_equal(m.params[0], "s-1");
}

/* A literal segment wins over a capture listed after it. */
static void
test_sessions_batch_is_not_a_session_id(void **state)
{
    (void)state;
    api_route_match_t m;
    assert_int_equal(api_route_find("GET", "/openhands/sessions/batch", &m), API_ROUTE_FOUND);
    assert_ptr_equal(m.route->fn, api_oh_batch);
    assert_int_equal(m.nparams, 0);
    assert_int_equal(api_route_find("GET", "/openhands/sessions/batch2", &m), API_ROUTE_FOUND);
    assert_ptr_equal(m.route->fn, api_oh_sessions_get);
    assert_string_equal(m.params[0], "batch2");
}

static void
test_captures_are_percent_decoded(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"/api/v1/sessions/s%2D1", "s-1"},
        {"/api/v1/sessions/s%2d1", "s-1"}, /* lower-case hex */
        {"/api/v1/sessions/%41%42", "AB"},
        {"/api/v1/sessions/a+b", "a b"}, /* '+' is a space, as in a query */
        {"/api/v1/sessions/a%2Bb", "a+b"},
        {"/api/v1/sessions/%7B%7D", "{}"}, /* decoded; the handler judges the id */
        {"/api/v1/sessions/%C3%A9", "\xc3\xa9"},
        {"/api/v1/sessions/..", ".."},
        {"/api/v1/sessions/%2E%2E", ".."},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        api_route_match_t m;
        assert_int_equal(api_route_find("GET", cases[i][0], &m), API_ROUTE_FOUND);
        assert_ptr_equal(m.route->fn, api_sessions_get);
        assert_string_equal(m.params[0], cases[i][1]);
    }
}

static void
test_malformed_captures_are_refused(void **state)
{
    (void)state;
    static const char *const paths[] = {
        "/api/v1/sessions/%ZZ",   "/api/v1/sessions/%4",       "/api/v1/sessions/%",
        "/api/v1/sessions/a%",    "/api/v1/sessions/%G1",      "/api/v1/sessions/a%2Fb",
        "/api/v1/sessions/%2f",   "/api/v1/sessions/a%00b",    "/api/v1/sessions/%ZZ/events",
        "/openhands/runtime/%ZZ", "/openhands/sessions/a%2Fb", "/openhands/runtime/a%2Fb",
        "/api/v1/sessions/%2F/x",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        api_route_match_t m;
        int rc = api_route_find("GET", paths[i], &m);
        if (rc != API_ROUTE_BAD_SEGMENT)
            fail_msg("%s: %d", paths[i], rc);
        assert_null(m.route);
    }
}

/* A capture holds at most API_ROUTE_PARAM_MAX - 1 bytes once decoded. */
static void
test_capture_length_limit(void **state)
{
    (void)state;
    char path[1024], want[API_ROUTE_PARAM_MAX];
    memset(want, 'x', sizeof want - 1);
    want[sizeof want - 1] = '\0';
    snprintf(path, sizeof path, "/api/v1/sessions/%s", want);
    api_route_match_t m;
    assert_int_equal(api_route_find("GET", path, &m), API_ROUTE_FOUND);
    assert_string_equal(m.params[0], want);
    snprintf(path, sizeof path, "/api/v1/sessions/%sx", want);
    assert_int_equal(api_route_find("GET", path, &m), API_ROUTE_BAD_SEGMENT);
    /* the limit is on the decoded bytes: 255 escapes fit */
    size_t o = (size_t)snprintf(path, sizeof path, "/openhands/runtime/");
    for (int i = 0; i < API_ROUTE_PARAM_MAX - 1; i++)
        o += (size_t)snprintf(path + o, sizeof path - o, "%%41");
    assert_int_equal(api_route_find("GET", path, &m), API_ROUTE_FOUND);
    assert_int_equal(strlen(m.params[0]), API_ROUTE_PARAM_MAX - 1);
}

/* A malformed capture is refused before the method is looked at. */
static void
test_a_bad_segment_is_refused_whatever_the_method(void **state)
{
    (void)state;
    static const char *const methods[] = {"GET", "PUT", "DELETE", "BREW"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        api_route_match_t m;
        assert_int_equal(api_route_find(methods[i], "/api/v1/sessions/%ZZ", &m),
                         API_ROUTE_BAD_SEGMENT);
    }
}

/* api_oh_path_form: /rt-<16 hex>/… is taken as /runtime/rt-…/…; anything else is left. */
static void
path_form(const char *in, const char *want)
{
    api_req_t r;
    memset(&r, 0, sizeof r);
    r.path = xstrdup(in);
    api_oh_path_form(&r);
    assert_string_equal(r.path, want);
    free(r.path);
}

static void
test_a_runtime_url_is_its_runtime_route(void **state)
{
    (void)state;
    path_form("/rt-0123456789abcdef/alive", "/runtime/rt-0123456789abcdef/alive");
    path_form("/rt-0123456789abcdef/upload_file", "/runtime/rt-0123456789abcdef/upload_file");
    path_form("/rt-0123456789abcdef", "/runtime/rt-0123456789abcdef");
    path_form("/rt-0123456789ABCDEF/alive", "/rt-0123456789ABCDEF/alive");
    path_form("/rt-0123456789abcde/alive", "/rt-0123456789abcde/alive");
    path_form("/rt-0123456789abcdef0/alive", "/rt-0123456789abcdef0/alive");
    path_form("/rt-/alive", "/rt-/alive");
    path_form("/api/v1/health", "/api/v1/health");
    path_form("/runtime/rt-0123456789abcdef/alive", "/runtime/rt-0123456789abcdef/alive");
    path_form("rt-0123456789abcdef/alive", "rt-0123456789abcdef/alive");
    /* served by the session's gateway behind nginx: what comes here is unknown, in the action
     * server's flavour */
    api_route_match_t m;
    assert_int_equal(api_route_find("GET", "/runtime/rt-0123456789abcdef/alive", &m),
                     API_ROUTE_NO_PATH);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_documented_route_resolves_to_its_handler),
        cmocka_unit_test(test_flavour_follows_the_prefix),
        cmocka_unit_test(test_a_path_with_another_method_is_405),
        cmocka_unit_test(test_unknown_paths_are_404),
        cmocka_unit_test(test_one_trailing_slash_is_tolerated),
        cmocka_unit_test(test_sessions_batch_is_not_a_session_id),
        cmocka_unit_test(test_captures_are_percent_decoded),
        cmocka_unit_test(test_malformed_captures_are_refused),
        cmocka_unit_test(test_capture_length_limit),
        cmocka_unit_test(test_a_bad_segment_is_refused_whatever_the_method),
        cmocka_unit_test(test_a_runtime_url_is_its_runtime_route),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
