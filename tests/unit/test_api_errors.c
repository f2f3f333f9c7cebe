/* test_api_errors.c — api/errors.c, the API's one error table: each error code's HTTP status in
 * the four APIs (REST, the OpenHands action server, the Remote Runtime API, E2B), the body each
 * gives it, the REST message's 511-byte cut, and a gateway's error names mapped back to codes
 * (every name a gateway or executor can send keeps its name and its status). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/errors.h"
#include "api/gateway_client.h"
#include "json_util.h"

api_cfg_t g_api; /* main.c's, which the test does not link */

#define REST   API_REST
#define ACTION API_OH_ACTION_SERVER
#define RTAPI  API_OH_RUNTIME_API
#define E2B    API_E2B

/* Every code the API replies with: its name and its status in REST and the Remote Runtime API,
 * and in the action server. */
static const struct {
    int code;
    const char *name;
    int rest, action;
} codes[] = {
    {ERR_BAD_REQ, "bad_request", 400, 400},
    {ERR_PROTO, "protocol_error", 400, 400},
    {EINVAL, "invalid", 400, 400},
    {EISDIR, "is_directory", 400, 400},
    {ENOTDIR, "not_directory", 400, 400},
    {ERR_AUTH, "unauthorized", 401, 401},
    {ERR_AUTH_EXPIRED, "token_expired", 401, 401},
    {ERR_AUTH_ROLE, "unauthorized", 403, 403},
    {ERR_FORBIDDEN, "forbidden", 403, 403},
    {ERR_ESCAPE, "path_escape", 403, 403},
    {EACCES, "permission_denied", 403, 403},
    {EPERM, "permission_denied", 403, 403},
    {ERR_NOT_FOUND, "not_found", 404, 404},
    {ENOENT, "not_found", 404, 404},
    {ERR_METHOD, "method_not_allowed", 405, 405},
    {ERR_BUSY, "busy", 409, 409},
    {EEXIST, "exists", 409, 409},
    {ENOTEMPTY, "not_empty", 409, 409},
    {ERR_SESSION_ENDED, "session_ended", 409, 409},
    {ERR_CONFLICT, "conflict", 409, 409},
    {ERR_FAILED, "failed", 409, 409},
    {ERR_TOO_BIG, "too_large", 413, 413},
    {EFBIG, "too_large", 413, 413},
    {ERR_AT_CAPACITY, "at_capacity", 429, 429},
    {ERR_INTERNAL, "internal", 500, 500},
    {ERR_ABORTED, "aborted", 500, 500},
    {EIO, "internal", 500, 500},
    {ENOTSUP, "unsupported", 501, 501},
    {ERR_NOT_IMPLEMENTED, "not_implemented", 501, 501},
    {ERR_GATEWAY_DOWN, "gateway_down", 503, 502},
    {ERR_NO_GATEWAY, "no_gateway", 503, 503},
    {ERR_UNAVAILABLE, "unavailable", 503, 503},
    {ERR_TIMEOUT, "timeout", 504, 504},
    {ENOSPC, "no_space", 507, 507},
};

static void
test_each_code_has_its_status_in_each_api(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        assert_string_equal(err_name(codes[i].code), codes[i].name);
        assert_int_equal(api_err_status(REST, codes[i].code), codes[i].rest);
        assert_int_equal(api_err_status(RTAPI, codes[i].code), codes[i].rest);
        assert_int_equal(api_err_status(ACTION, codes[i].code), codes[i].action);
        assert_int_equal(api_err_status(E2B, codes[i].code), codes[i].rest);
        /* negative (a return value) or positive alike */
        assert_int_equal(api_err_status(REST, -codes[i].code), codes[i].rest);
    }
    assert_int_equal(api_err_status(REST, 123456), 500);
}

static void
expect_body(api_flavour_t f, int code, const char *msg, const char *want)
{
    api_err_t e;
    assert_int_equal(api_err_set(&e, code, "%s", msg), -code);
    json_object *o = api_err_body(f, &e);
    size_t len;
    assert_string_equal(json_text(o, &len), want);
    json_object_put(o);
}

static void
test_each_api_has_its_body(void **state)
{
    (void)state;
    expect_body(REST, ERR_NOT_FOUND, "no session s-1",
                "{\"error\":{\"code\":\"not_found\",\"message\":\"no session s-1\"}}");
    expect_body(ACTION, ERR_NOT_FOUND, "Not Found", "{\"detail\":\"Not Found\"}");
    expect_body(RTAPI, ERR_NOT_FOUND, "no runtime rt-1",
                "{\"detail\":\"no runtime rt-1\",\"error\":{\"code\":\"not_found\","
                "\"message\":\"no runtime rt-1\"}}");
    /* E2B's: the status as "code", which its SDK reads for NotFoundError */
    expect_body(E2B, ERR_NOT_FOUND, "Sandbox s-1 not found",
                "{\"code\":404,\"message\":\"Sandbox s-1 not found\"}");
    expect_body(E2B, ERR_AUTH, "invalid API key", "{\"code\":401,\"message\":\"invalid API key\"}");
    expect_body(REST, ERR_AUTH_ROLE, "viewers cannot create sessions",
                "{\"error\":{\"code\":\"unauthorized\","
                "\"message\":\"viewers cannot create sessions\"}}");
    expect_body(ACTION, ERR_GATEWAY_DOWN, "Runtime disconnected",
                "{\"detail\":\"Runtime disconnected\"}");
    expect_body(REST, ERR_ESCAPE, "/etc: \"quoted\" / slash",
                "{\"error\":{\"code\":\"path_escape\",\"message\":\"/etc: \\\"quoted\\\" / "
                "slash\"}}");
}

/* REST and Remote Runtime API messages are cut at 511 bytes, as they always were; the action
 * server's details are not. */
static void
test_rest_messages_are_cut_at_511_bytes(void **state)
{
    (void)state;
    char long_msg[900];
    memset(long_msg, 'm', sizeof long_msg - 1);
    long_msg[sizeof long_msg - 1] = '\0';
    api_err_t e;
    api_err_set(&e, ERR_BAD_REQ, "%s", long_msg);
    json_object *o = api_err_body(REST, &e);
    assert_int_equal(strlen(json_get_str(json_get(o, "error"), "message", "")),
                     API_ERR_REST_MSG_MAX - 1);
    json_object_put(o);
    o = api_err_body(RTAPI, &e);
    assert_int_equal(strlen(json_get_str(o, "detail", "")), API_ERR_REST_MSG_MAX - 1);
    assert_int_equal(strlen(json_get_str(json_get(o, "error"), "message", "")),
                     API_ERR_REST_MSG_MAX - 1);
    json_object_put(o);
    o = api_err_body(ACTION, &e);
    assert_int_equal(strlen(json_get_str(o, "detail", "")), sizeof long_msg - 1);
    json_object_put(o);
    /* api_err_t itself keeps API_ERR_MSG_MAX - 1 bytes */
    char longer[API_ERR_MSG_MAX + 100];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    api_err_set(&e, ERR_INTERNAL, "%s", longer);
    assert_int_equal(strlen(e.msg), API_ERR_MSG_MAX - 1);
}

static int
from_gateway(const char *json, api_err_t *e)
{
    err_t perr = {0};
    json_object *o = json ? json_parse(json, strlen(json), &perr) : NULL;
    int rc = api_err_from_gateway(e, o);
    json_object_put(o);
    return rc;
}

/* What a gateway's error names were answered with before the one table (api_gw_status). */
static void
test_gateway_errors_keep_their_name_and_status(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int status;
    } sent[] = {
        {"not_found", 404},   {"bad_request", 400},       {"protocol_error", 400},
        {"invalid", 400},     {"is_directory", 400},      {"not_directory", 400},
        {"path_escape", 403}, {"permission_denied", 403}, {"unauthorized", 403},
        {"forbidden", 403},   {"token_expired", 401},     {"busy", 409},
        {"exists", 409},      {"not_empty", 409},         {"too_large", 413},
        {"no_space", 507},    {"session_ended", 409},     {"unsupported", 501},
        {"internal", 500},
    };
    for (size_t i = 0; i < sizeof sent / sizeof sent[0]; i++) {
        char json[160];
        snprintf(json, sizeof json, "{\"code\":\"%s\",\"message\":\"why\"}", sent[i].name);
        api_err_t e;
        int rc = from_gateway(json, &e);
        assert_int_equal(rc, -e.code);
        assert_string_equal(err_name(e.code), sent[i].name);
        assert_string_equal(e.msg, "why");
        assert_int_equal(api_err_status(REST, e.code), sent[i].status);
        assert_true(api_gw_refused(&e));
    }
}

/* Whatever the executor or a gateway names with err_name comes back with that name: the table
 * has a row for every such name. */
static void
test_every_name_err_name_gives_is_relayed(void **state)
{
    (void)state;
    for (int code = 1; code < ERR_AUTH_EXPIRED + 1; code++) {
        if (code > 200 && code <= ERR_BASE)
            continue; /* neither errno nor ERR_ */
        char json[160];
        snprintf(json, sizeof json, "{\"code\":\"%s\"}", err_name(code));
        api_err_t e;
        from_gateway(json, &e);
        assert_string_equal(err_name(e.code), err_name(code));
    }
}

static void
test_odd_gateway_errors(void **state)
{
    (void)state;
    api_err_t e;
    from_gateway(NULL, &e);
    assert_int_equal(e.code, ERR_INTERNAL);
    assert_string_equal(e.msg, "the gateway failed");
    from_gateway("{}", &e);
    assert_int_equal(e.code, ERR_INTERNAL);
    assert_string_equal(e.msg, "the gateway failed");
    from_gateway("{\"code\":\"no_such_code\",\"message\":\"m\"}", &e);
    assert_int_equal(e.code, ERR_INTERNAL);
    assert_string_equal(e.msg, "m");
    from_gateway("{\"code\":7,\"message\":[1]}", &e);
    assert_int_equal(e.code, ERR_INTERNAL);
    assert_string_equal(e.msg, "the gateway failed");
    /* names only the API gives are not a gateway's */
    from_gateway("{\"code\":\"timeout\",\"message\":\"m\"}", &e);
    assert_int_equal(e.code, ERR_INTERNAL);
    assert_true(api_gw_refused(&e));
}

/* A failure on the way to a gateway is not the gateway's refusal. */
static void
test_transport_failures_are_not_refusals(void **state)
{
    (void)state;
    api_err_t e;
    api_gw_no_answer(&e);
    assert_int_equal(e.code, ERR_TIMEOUT);
    assert_string_equal(e.msg, "the gateway did not answer in time");
    assert_false(api_gw_refused(&e));
    assert_int_equal(api_err_redis(&e), -ERR_UNAVAILABLE);
    assert_string_equal(e.msg, "Redis is not reachable");
    assert_false(api_gw_refused(&e));
    api_err_set(&e, ERR_GATEWAY_DOWN, "gone");
    assert_false(api_gw_refused(&e));
    api_err_set(&e, ERR_ABORTED, "the client went away");
    assert_true(api_gw_refused(&e));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_code_has_its_status_in_each_api),
        cmocka_unit_test(test_each_api_has_its_body),
        cmocka_unit_test(test_rest_messages_are_cut_at_511_bytes),
        cmocka_unit_test(test_gateway_errors_keep_their_name_and_status),
        cmocka_unit_test(test_every_name_err_name_gives_is_relayed),
        cmocka_unit_test(test_odd_gateway_errors),
        cmocka_unit_test(test_transport_failures_are_not_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
