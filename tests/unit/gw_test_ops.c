/* gw_test_ops.c — gateway/ops, the request table of the control WebSocket and the API's control
 * requests:
 * every documented op resolves on its transports (docs/api.md, redis/README.md) and nothing
 * else does, which ops write, and the one access check in front of them, run against real
 * sessions through two recording transports with the policies of the real ones (the WebSocket
 * says forbidden; the API's answers a viewer's write as it answers a stranger: not_found). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/ops.h"
#include "net_policy.h"
#include "gw_session_fixture.h"
#include "json_util.h"

static const char *const ws_ops[] = {
    "session.create",       "session.get",         "session.list", "session.delete",
    "session.pause",        "session.resume",      "pool",         "health",
    "session.set_lifetime", "session.set_network", "session.stats"};
static const char *const api_ops[] = {
    "session.create",      "session.delete", "action",         "signal",
    "session.get",         "session.pause",  "session.resume", "session.set_lifetime",
    "session.set_network", "session.stats"};
static const char *const read_only[] = {"session.get", "session.list", "pool",
                                        "health",      "file.read",    "file.list",
                                        "file.stat",   "session.stats"};

static bool
listed(const char *name, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], name))
            return true;
    return false;
}

#define LISTED(name, v) listed(name, v, sizeof v / sizeof v[0])

static void
test_every_documented_op_resolves_on_its_transport(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ws_ops / sizeof ws_ops[0]; i++) {
        const ops_t *o = ops_find(ws_ops[i], OPS_WS);
        assert_non_null(o);
        assert_string_equal(o->name, ws_ops[i]);
    }
    for (size_t i = 0; i < sizeof api_ops / sizeof api_ops[0]; i++) {
        const ops_t *o = ops_find(api_ops[i], OPS_API);
        assert_non_null(o);
        assert_string_equal(o->name, api_ops[i]);
    }
}

static void
test_the_table_holds_the_documented_ops_only(void **state)
{
    (void)state;
    size_t n;
    const ops_t *t = ops_table(&n);
    for (size_t i = 0; i < n; i++) {
        if (t[i].via & OPS_WS)
            assert_true(LISTED(t[i].name, ws_ops));
        if (t[i].via & OPS_API)
            assert_true(LISTED(t[i].name, api_ops));
        for (size_t k = i + 1; k < n; k++) /* a name means one op per transport */
            if (!strcmp(t[i].name, t[k].name))
                assert_int_equal(t[i].via & t[k].via, 0);
    }
}

static void
test_unknown_and_other_transports_ops_resolve_to_null(void **state)
{
    (void)state;
    assert_null(ops_find("nope", OPS_WS));
    assert_null(ops_find("nope", OPS_API));
    assert_null(ops_find("", OPS_WS_API));
    assert_null(ops_find(NULL, OPS_WS_API));
    assert_null(ops_find("Session.get", OPS_WS));
    assert_null(ops_find("session.get ", OPS_WS));
    for (size_t i = 0; i < sizeof ws_ops / sizeof ws_ops[0]; i++)
        if (!LISTED(ws_ops[i], api_ops))
            assert_null(ops_find(ws_ops[i], OPS_API));
    for (size_t i = 0; i < sizeof api_ops / sizeof api_ops[0]; i++)
        if (!LISTED(api_ops[i], ws_ops))
            assert_null(ops_find(api_ops[i], OPS_WS));
}

static void
test_everything_but_reads_writes(void **state)
{
    (void)state;
    size_t n;
    const ops_t *t = ops_table(&n);
    for (size_t i = 0; i < n; i++)
        if (t[i].writes == LISTED(t[i].name, read_only))
            fail_msg("%s: writes should be %d", t[i].name, !LISTED(t[i].name, read_only));
}

static void
test_health_is_the_gateways_and_on_the_websocket_only(void **state)
{
    (void)state;
    assert_false(ops_find("health", OPS_WS)->session);
    assert_null(
        ops_find("health", OPS_API)); /* the sandbox's: server_info, gateway/http_runtime.c */
    assert_false(ops_find("session.create", OPS_API)->session);
    assert_false(ops_find("session.list", OPS_WS)->session);
    assert_false(ops_find("pool", OPS_WS)->session);
    assert_true(ops_find("session.get", OPS_WS)->session);
}

/* ---- dispatch: access, refusals, unknown ops ---- */

static struct {
    int answers;
    bool ok;
    char code[64], message[256];
    json_object *result;
    bool unknown_ran;
} got;

static void
record_ok(const ops_reply_t *to, json_object *result)
{
    (void)to;
    got.answers++;
    got.ok = true;
    json_object_put(got.result);
    got.result = result;
}

static void
record_fail(const ops_reply_t *to, json_object *error)
{
    (void)to;
    got.answers++;
    got.ok = false;
    snprintf(got.code, sizeof got.code, "%s", json_get_str(error, "code", ""));
    snprintf(got.message, sizeof got.message, "%s", json_get_str(error, "message", ""));
    json_object_put(error);
}

static void
record_unknown(const ops_call_t *c)
{
    got.unknown_ran = true;
    ops_fail(c->reply, "bad_request", c->op);
}

static const ops_t ws_like_unknown = {NULL, false, false, OPS_WS, NULL, record_unknown};
static const ops_t api_like_unknown = {NULL, true, true, OPS_API, NULL, record_unknown};

static const ops_transport_t ws_like = {
    .via = OPS_WS,
    .ok = record_ok,
    .fail = record_fail,
    .forbidden = "forbidden",
    .hides_refusals = false,
    .actor = "by test",
    .unknown = &ws_like_unknown,
};

static const ops_transport_t api_like = {
    .via = OPS_API,
    .ok = record_ok,
    .fail = record_fail,
    .forbidden = "unauthorized",
    .hides_refusals = true,
    .actor = "by test",
    .unknown = &api_like_unknown,
};

static const ops_who_t admin = {"root", "admin", ""};
static const ops_who_t alice = {"alice", "user", ""};
static const ops_who_t bob = {"bob", "user", ""};
static const ops_who_t viewer = {"dash", "viewer", "s-alice"};

/* Dispatches op on session sid ("" for none) as who, through t. */
static void
call(const ops_transport_t *t, const ops_who_t *who, const char *op, const char *sid)
{
    json_object_put(got.result);
    memset(&got, 0, sizeof got);
    json_object *args = json_object_new_object();
    if (sid[0])
        json_set_str(args, "session", sid);
    ops_reply_t to = {.via = t};
    ops_call_t c = {.op = op, .args = args, .who = *who, .reply = &to};
    ops_dispatch(&c);
    json_object_put(args);
    assert_int_equal(got.answers, 1);
}

static void
expect_fail(const char *code, const char *message)
{
    assert_false(got.ok);
    assert_string_equal(got.code, code);
    assert_string_equal(got.message, message);
}

static int
setup_sessions(void **state)
{
    (void)state;
    fixture_gateway_init();
    fixture_session("s-alice", "alice");
    fixture_session("s-bob", "bob");
    return 0;
}

static int
teardown_sessions(void **state)
{
    (void)state;
    while (g_gw.sessions)
        session_delete(g_gw.sessions, "test over");
    fixture_drain();
    json_object_put(got.result);
    got.result = NULL;
    return 0;
}

static void
test_access_by_role(void **state)
{
    (void)state;
    gw_session_t *a = session_find("s-alice"), *b = session_find("s-bob");
    assert_int_equal(ops_access(&admin, a), OPS_WRITE);
    assert_int_equal(ops_access(&alice, a), OPS_WRITE);
    assert_int_equal(ops_access(&alice, b), OPS_HIDDEN);
    assert_int_equal(ops_access(&viewer, a), OPS_READ);
    assert_int_equal(ops_access(&viewer, b), OPS_HIDDEN);
    ops_who_t odd = {"alice", "owner", ""}; /* not a role: nothing */
    assert_int_equal(ops_access(&odd, a), OPS_HIDDEN);
}

static void
test_a_session_the_caller_may_not_see_is_not_found(void **state)
{
    (void)state;
    const ops_transport_t *ts[] = {&ws_like, &api_like};
    for (size_t i = 0; i < 2; i++) {
        call(ts[i], &bob, "session.get", "s-alice");
        expect_fail("not_found", "no such session on this gateway");
        call(ts[i], &viewer, "session.get", "s-bob");
        expect_fail("not_found", "no such session on this gateway");
        call(ts[i], &admin, "session.delete", "s-none");
        expect_fail("not_found", "no such session on this gateway");
        call(ts[i], &admin, "session.get", "");
        expect_fail("not_found", "no such session on this gateway");
    }
}

static void
test_the_websocket_tells_a_viewer_what_it_may_not_do(void **state)
{
    (void)state;
    call(&ws_like, &viewer, "session.create", "");
    expect_fail("forbidden", "viewers cannot create sessions");
    call(&ws_like, &viewer, "session.delete", "s-alice");
    expect_fail("forbidden", "viewers cannot delete sessions");
    call(&ws_like, &viewer, "session.pause", "s-alice");
    expect_fail("forbidden", "viewers cannot pause or resume sessions");
    call(&ws_like, &viewer, "session.resume", "s-alice");
    expect_fail("forbidden", "viewers cannot pause or resume sessions");
    assert_non_null(session_find("s-alice"));
}

static void
test_the_api_transport_answers_a_viewers_write_as_not_found(void **state)
{
    (void)state;
    call(&api_like, &viewer, "session.create", "");
    expect_fail("unauthorized", "viewers cannot create sessions");
    const char *writes[] = {"session.delete", "session.pause", "action", "signal", "file.mkdir"};
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
        call(&api_like, &viewer, writes[i], "s-alice");
        expect_fail("not_found", "no such session on this gateway");
    }
    assert_non_null(session_find("s-alice"));
}

/* The API's create key names a Redis key: anything but 16-64 lowercase hex digits is refused
 * before a session is made. */
static void
test_a_create_key_that_is_not_hex_is_refused(void **state)
{
    (void)state;
    const char *bad[] = {"abc", "0123456789ABCDEF", "0123456789abcdef:x",
                         "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0"};
    int before = sessions_count();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object_put(got.result);
        memset(&got, 0, sizeof got);
        json_object *args = json_object_new_object();
        json_set_str(args, "create_key", bad[i]);
        ops_reply_t to = {.via = &api_like};
        ops_call_t c = {.op = "session.create", .args = args, .who = alice, .reply = &to};
        ops_dispatch(&c);
        json_object_put(args);
        assert_int_equal(got.answers, 1);
        expect_fail("bad_request", "\"create_key\" must be 16 to 64 of [0-9a-f]");
        assert_false(session_create_key_ok(bad[i]));
    }
    /* only the API names one: a WebSocket client's is refused, however well formed */
    json_object_put(got.result);
    memset(&got, 0, sizeof got);
    json_object *args = json_object_new_object();
    json_set_str(args, "create_key", "0123456789abcdef");
    ops_reply_t to = {.via = &ws_like};
    ops_call_t c = {.op = "session.create", .args = args, .who = alice, .reply = &to};
    ops_dispatch(&c);
    json_object_put(args);
    assert_int_equal(got.answers, 1);
    expect_fail("bad_request", "\"create_key\" is the API's, not a client's");
    assert_int_equal(sessions_count(), before);
    assert_true(session_create_key_ok("0123456789abcdef"));
}

static void
test_a_viewer_reads_its_session(void **state)
{
    (void)state;
    const ops_transport_t *ts[] = {&ws_like, &api_like};
    for (size_t i = 0; i < 2; i++) {
        call(ts[i], &viewer, "session.get", "s-alice");
        assert_true(got.ok);
        assert_string_equal(json_get_str(got.result, "id", ""), "s-alice");
        assert_string_equal(json_get_str(got.result, "owner", ""), "alice");
    }
}

static void
test_session_list_shows_what_the_caller_may_see(void **state)
{
    (void)state;
    const ops_who_t *who[] = {&admin, &alice, &bob, &viewer};
    const int want[] = {2, 1, 1, 1};
    for (size_t i = 0; i < 4; i++) {
        call(&ws_like, who[i], "session.list", "");
        assert_true(got.ok);
        json_object *arr = json_get(got.result, "sessions");
        assert_int_equal(json_object_array_length(arr), want[i]);
    }
    call(&ws_like, &viewer, "session.list", "");
    json_object *only = json_object_array_get_idx(json_get(got.result, "sessions"), 0);
    assert_string_equal(json_get_str(only, "id", ""), "s-alice");
}

static void
test_unknown_ops_reach_the_transports_handler_after_its_checks(void **state)
{
    (void)state;
    /* the WebSocket: at once, whatever the session */
    call(&ws_like, &bob, "session.frobnicate", "s-none");
    assert_true(got.unknown_ran);
    expect_fail("bad_request", "session.frobnicate");
    /* the API's: as a write on the named session first */
    call(&api_like, &admin, "frobnicate", "s-none");
    assert_false(got.unknown_ran);
    expect_fail("not_found", "no such session on this gateway");
    call(&api_like, &viewer, "frobnicate", "s-alice");
    assert_false(got.unknown_ran);
    call(&api_like, &alice, "frobnicate", "s-alice");
    assert_true(got.unknown_ran);
    /* an op of the other transport is unknown here */
    call(&ws_like, &admin, "file.read", "s-alice");
    assert_true(got.unknown_ran);
    call(&api_like, &admin, "session.list", "s-alice");
    assert_true(got.unknown_ran);
}

static void
test_delete_answers_the_session_as_stopped(void **state)
{
    (void)state;
    call(&ws_like, &alice, "session.delete", "s-alice");
    assert_true(got.ok);
    assert_string_equal(json_get_str(got.result, "id", ""), "s-alice");
    assert_string_equal(json_get_str(got.result, "status", ""), "STOPPED");
    assert_null(session_find("s-alice"));
}

/* session.set_lifetime (the E2B API's timeout): the new max_lifetime in the session and its
 * description; anything but whole seconds >= 0 refused; viewers refused. */
static void
test_set_lifetime_moves_the_sessions_end(void **state)
{
    (void)state;
    const struct {
        const char *json;
        bool ok;
    } cases[] = {{"120", true},  {"0", true},       {"-1", false},
                 {"1.5", false}, {"\"60\"", false}, {"4294967296", false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object_put(got.result);
        memset(&got, 0, sizeof got);
        json_object *args = json_object_new_object();
        json_set_str(args, "session", "s-alice");
        json_set(args, "max_lifetime", json_tokener_parse(cases[i].json));
        ops_reply_t to = {.via = &api_like};
        ops_call_t c = {.op = "session.set_lifetime", .args = args, .who = alice, .reply = &to};
        ops_dispatch(&c);
        json_object_put(args);
        assert_int_equal(got.answers, 1);
        if (!cases[i].ok) {
            expect_fail("bad_request", "max_lifetime must be an integer of seconds, 0 or more");
            continue;
        }
        assert_true(got.ok);
        int64_t want = atoll(cases[i].json);
        assert_int_equal(json_get_int(got.result, "max_lifetime", -1), want);
        assert_int_equal(session_find("s-alice")->max_lifetime, want);
    }
    call(&ws_like, &viewer, "session.set_lifetime", "s-alice");
    expect_fail("forbidden", "viewers cannot change a session's lifetime");
}

/* Dispatches session.set_network {network: json} on s-alice as who through the API transport. */
static void
set_network(const ops_who_t *who, const char *json)
{
    json_object_put(got.result);
    memset(&got, 0, sizeof got);
    json_object *args = json_object_new_object();
    json_set_str(args, "session", "s-alice");
    if (json)
        json_set(args, "network", json_tokener_parse(json));
    ops_reply_t to = {.via = &api_like};
    ops_call_t c = {.op = "session.set_network", .args = args, .who = *who, .reply = &to};
    ops_dispatch(&c);
    json_object_put(args);
    assert_int_equal(got.answers, 1);
}

/* session.set_network (E2B's updateNetwork): the policy checked as at create (the role's widest
 * mode, netd there), kept in the session and said by an event; not while it starts; viewers
 * refused. (netd's side: test_e2b's control.test.mjs.) */
static void
test_set_network_replaces_the_policy_as_create_checks_it(void **state)
{
    (void)state;
    gw_session_t *s = session_find("s-alice");
    g_gw.cfg.provider = "bwrap";
    s->status = SESSION_STARTING;
    set_network(&alice, "\"none\"");
    expect_fail("busy", "the session is STARTING_RUNTIME: its network changes once it is READY");
    s->status = SESSION_READY;
    set_network(&alice, NULL);
    expect_fail("bad_request", "\"network\" is required (docs/api.md \"Network\")");
    set_network(&alice, "{\"allow\":[\"198.51.100.0/24\"]}"); /* users: none at most here */
    expect_fail("forbidden", "a user may ask for network modes up to \"none\" here, not "
                             "\"allowlist\" (the operator's --network-roles)");
    g_gw.cfg.network_max_admin = NET_EGRESS;
    set_network(&admin, "\"egress\"");
    expect_fail(
        "unavailable",
        "network mode \"egress\": this gateway has no network service (sandpipe-netd, --netd)");
    set_network(&alice, "{\"allow\":[\"::1\"]}");
    assert_false(got.ok);
    assert_string_equal(got.code, "bad_request");
    assert_string_equal(json_get_str(json_get(s->params, "network"), "mode", "?"), "?");
    set_network(&alice, "{\"mode\":\"none\"}");
    assert_true(got.ok);
    assert_string_equal(json_get_str(json_get(got.result, "network"), "mode", ""), "none");
    assert_string_equal(json_get_str(json_get(s->params, "network"), "mode", ""), "none");
    json_object *ev = json_tokener_parse(fixture_last_event(s));
    assert_string_equal(json_get_str(ev, "type", ""), "network");
    assert_string_equal(json_get_str(ev, "event", ""), "policy");
    assert_string_equal(json_get_str(json_get(ev, "policy"), "mode", ""), "none");
    assert_string_equal(json_get_str(ev, "origin", ""), "alice");
    json_object_put(ev);
    call(&ws_like, &viewer, "session.set_network", "s-alice");
    expect_fail("forbidden", "viewers cannot change a session's network");
}

/* session.stats (E2B's getMetrics) of a session whose sandbox has no cgroup and no executor
 * connected: answered at once, from what the host says (no health to wait for). */
static void
test_stats_answers_without_an_executor(void **state)
{
    (void)state;
    call(&api_like, &alice, "session.stats", "s-alice");
    assert_true(got.ok);
    assert_true(json_get_double(got.result, "at", 0) > 0);
    assert_true(json_get_int(got.result, "cpu_count", 0) >= 1);
    assert_true(json_get_int(got.result, "memory_total_bytes", 0) > 0);
    assert_int_equal(json_get_int(got.result, "memory_used_bytes", -1), 0);
    call(&api_like, &viewer, "session.stats", "s-alice"); /* a read: the viewer's session */
    assert_true(got.ok);
    fixture_drain(); /* the request's timer is closed and freed */
}

int
main(void)
{
    const struct CMUnitTest table[] = {
        cmocka_unit_test(test_every_documented_op_resolves_on_its_transport),
        cmocka_unit_test(test_the_table_holds_the_documented_ops_only),
        cmocka_unit_test(test_unknown_and_other_transports_ops_resolve_to_null),
        cmocka_unit_test(test_everything_but_reads_writes),
        cmocka_unit_test(test_health_is_the_gateways_and_on_the_websocket_only),
    };
#define WITH_SESSIONS(t) cmocka_unit_test_setup_teardown(t, setup_sessions, teardown_sessions)
    const struct CMUnitTest dispatch[] = {
        WITH_SESSIONS(test_access_by_role),
        WITH_SESSIONS(test_a_session_the_caller_may_not_see_is_not_found),
        WITH_SESSIONS(test_the_websocket_tells_a_viewer_what_it_may_not_do),
        WITH_SESSIONS(test_the_api_transport_answers_a_viewers_write_as_not_found),
        WITH_SESSIONS(test_a_create_key_that_is_not_hex_is_refused),
        WITH_SESSIONS(test_a_viewer_reads_its_session),
        WITH_SESSIONS(test_session_list_shows_what_the_caller_may_see),
        WITH_SESSIONS(test_unknown_ops_reach_the_transports_handler_after_its_checks),
        WITH_SESSIONS(test_delete_answers_the_session_as_stopped),
        WITH_SESSIONS(test_set_lifetime_moves_the_sessions_end),
        WITH_SESSIONS(test_set_network_replaces_the_policy_as_create_checks_it),
        WITH_SESSIONS(test_stats_answers_without_an_executor),
    };
    int failed = cmocka_run_group_tests_name("table", table, NULL, NULL);
    return failed + cmocka_run_group_tests_name("dispatch", dispatch, NULL, NULL);
}
