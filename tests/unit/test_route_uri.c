/* test_route_uri.c — common/route_uri: which session a request URI names for nginx's route
 * lookup, whether the request writes, and the query values it carries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "route_uri.h"

static void
expect(const char *uri, route_uri_kind_t kind, const char *id, bool write)
{
    route_uri_t u;
    assert_int_equal(route_uri_parse(uri, &u), 0);
    assert_int_equal(u.kind, kind);
    assert_string_equal(u.id, id);
    assert_int_equal(u.write, write);
}

static void
test_session_routes_name_their_session(void **state)
{
    (void)state;
    expect("/ws/sessions/s-1", ROUTE_URI_WS, "s-1", false);
    expect("/ws/sessions/s-1?since=4&token=x", ROUTE_URI_WS, "s-1", false);
    expect("/ws/sessions/s-1/terminal?cols=80", ROUTE_URI_WS, "s-1", true);
    expect("/api/v1/sessions/s-2/actions?wait=true", ROUTE_URI_REST, "s-2", true);
    expect("/runtime/s-3/execute_action", ROUTE_URI_RUNTIME, "s-3", true);
    expect("/rt-0123456789abcdef/execute_action", ROUTE_URI_RUNTIME, "rt-0123456789abcdef", true);
    /* nginx's name for an E2b-Sandbox-Id's envd request */
    expect("/envd/s-4/process.Process/Start", ROUTE_URI_ENVD, "s-4", true);
    expect("/envd/s-4/files?path=%2Ftmp", ROUTE_URI_ENVD, "s-4", true);
}

static void
test_other_paths_and_odd_ids_name_none(void **state)
{
    (void)state;
    static const char *const none[] = {
        "/ws/control",
        "/ws/sessions/",
        "/ws/sessions//terminal",
        "/envd//health",
        "/api/v1/sessions",
        "/api/v1/sessions/?x",
        "/runtime/",
        "/runtime/s%2D1/execute_action",
        "/",
        "",
        "/openhands/start",
        "/assets/x.js",
    };
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        route_uri_t u;
        assert_int_equal(route_uri_parse(none[i], &u), -1);
        assert_int_equal(u.kind, ROUTE_URI_NONE);
    }
    char longid[300] = "/runtime/";
    memset(longid + 9, 'a', 200);
    route_uri_t u;
    assert_int_equal(route_uri_parse(longid, &u), -1);
}

static void
test_query_values_are_found_whole(void **state)
{
    (void)state;
    char v[16];
    route_uri_arg("/ws/sessions/s?since=3&token=abc.def#x", "token", v, sizeof v);
    assert_string_equal(v, "abc.def");
    route_uri_arg("/ws/sessions/s?xtoken=1&token=2", "token", v, sizeof v);
    assert_string_equal(v, "2");
    route_uri_arg("/ws/sessions/s?token", "token", v, sizeof v);
    assert_string_equal(v, "");
    route_uri_arg("/ws/sessions/s", "token", v, sizeof v);
    assert_string_equal(v, "");
    route_uri_arg("/ws/sessions/s?token=0123456789abcdefXYZ", "token", v, sizeof v);
    assert_string_equal(v, ""); /* too long for out: none rather than a cut token */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_routes_name_their_session),
        cmocka_unit_test(test_other_paths_and_odd_ids_name_none),
        cmocka_unit_test(test_query_values_are_found_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
