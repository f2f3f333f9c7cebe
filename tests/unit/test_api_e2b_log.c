/* test_api_e2b_log.c — api/e2b/log_entry.c: a session's stored events as E2B's sandbox log
 * entries (status, processes and how they ended, network refusals and policy changes, actions,
 * plugins, ports, signals, lost events), what is no entry (output, input, observations), the
 * levels, and the v1 line E2B's CLI parses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api/e2b/e2b.h"
#include "api/e2b/log_entry.h"
#include "json_util.h"

api_cfg_t g_api; /* main.c's, which the test does not link */

/* The entry of an event (JSON text), as "level|message|fields" ("none" when it makes none). */
static const char *
entry(const char *event)
{
    static char out[2048];
    json_object *ev = json_tokener_parse(event);
    assert_non_null(ev);
    json_object *en = e2b_log_entry(ev);
    if (!en) {
        snprintf(out, sizeof out, "none");
    } else {
        assert_string_equal(json_get_str(en, "timestamp", ""), "2026-01-01T00:00:01.500Z");
        snprintf(out, sizeof out, "%s|%s|%s", json_get_str(en, "level", ""),
                 json_get_str(en, "message", ""),
                 json_object_to_json_string_ext(json_get(en, "fields"),
                                                JSON_C_TO_STRING_PLAIN |
                                                    JSON_C_TO_STRING_NOSLASHESCAPE));
    }
    json_object_put(en);
    json_object_put(ev);
    return out;
}

#define TS "\"seq\":7,\"ts\":1767225601.5,"

static void
test_the_sandboxs_own_events_are_entries(void **state)
{
    (void)state;
    assert_string_equal(
        entry("{" TS "\"type\":\"status\",\"status\":\"READY\"}"),
        "info|Sandbox READY|{\"status\":\"READY\",\"logger\":\"system\",\"seq\":\"7\"}");
    assert_string_equal(
        entry("{" TS "\"type\":\"status\",\"status\":\"ERROR\",\"message\":\"gone\"}"),
        "error|Sandbox ERROR: gone|{\"status\":\"ERROR\",\"logger\":\"system\",\"seq\":\"7\"}");
    assert_string_equal(
        entry("{" TS "\"type\":\"process\",\"event\":\"start\",\"via\":\"e2b\",\"pid\":12,"
              "\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"ls "
              "/\"],\"cwd\":\"/tmp\",\"pty\":false}"),
        "info|Process 12 started: /bin/bash -l -c ls /|{\"pid\":\"12\",\"cwd\":\"/tmp\",\"pty\":"
        "\"false\",\"cmd\":\"/bin/bash\",\"logger\":\"process\",\"seq\":\"7\"}");
    assert_string_equal(entry("{" TS "\"type\":\"process\",\"event\":\"end\",\"pid\":12,"
                              "\"exit_code\":0,\"status\":\"exit status 0\"}"),
                        "info|Process 12 ended: exit status 0|{\"pid\":\"12\",\"exit_code\":\"0\","
                        "\"status\":\"exit status 0\",\"logger\":\"process\",\"seq\":\"7\"}");
    assert_non_null(strstr(entry("{" TS "\"type\":\"process\",\"event\":\"end\",\"pid\":12,"
                                 "\"exit_code\":-1,\"status\":\"signal: killed\"}"),
                           "warn|Process 12 ended: signal: killed|"));
    assert_string_equal(
        entry("{" TS "\"type\":\"network\",\"verdict\":\"refused\",\"proto\":\"tcp\",\"dest\":"
              "\"203.0.113.7:80\",\"rule\":\"not in the allow-list\",\"refusal\":3}"),
        "warn|Network refused: tcp 203.0.113.7:80 (not in the allow-list)|{\"proto\":\"tcp\","
        "\"dest\":\"203.0.113.7:80\",\"rule\":\"not in the allow-list\",\"logger\":\"network\","
        "\"seq\":\"7\"}");
    assert_non_null(
        strstr(entry("{" TS "\"type\":\"network\",\"verdict\":\"refused\",\"proto\":"
                     "\"dns\",\"name\":\"evil.example\",\"rule\":\"deny evil.example\"}"),
               "warn|Network refused: dns evil.example (deny evil.example)|"));
    assert_string_equal(
        entry("{" TS "\"type\":\"network\",\"event\":\"policy\",\"policy\":{\"mode\":\"allowlist\","
              "\"allow\":[\"pypi.org\"]},\"origin\":\"alice\"}"),
        "info|Network policy: allowlist|{\"mode\":\"allowlist\",\"allow\":\"[\\\"pypi.org\\\"]\","
        "\"logger\":\"network\",\"seq\":\"7\"}");
    assert_string_equal(
        entry("{" TS "\"type\":\"action\",\"action\":{\"action\":\"run\",\"args\":"
              "{\"command\":\"ls\"}},\"origin\":\"alice\",\"via\":\"ws\"}"),
        "info|Action run: ls|{\"action\":\"run\",\"origin\":\"alice\",\"via\":\"ws\","
        "\"logger\":\"action\",\"seq\":\"7\"}");
    assert_non_null(strstr(entry("{" TS "\"type\":\"plugin_status\",\"plugin\":\"jupyter\","
                                 "\"state\":\"exited\",\"reason\":\"killed\"}"),
                           "warn|Plugin jupyter exited: killed|"));
    assert_non_null(strstr(entry("{" TS "\"type\":\"port\",\"port\":8000,\"state\":\"open\","
                                 "\"address\":\"0.0.0.0\",\"command\":\"python3 -m http.server\"}"),
                           "info|Port 8000 open: python3 -m http.server|"));
    assert_non_null(
        strstr(entry("{" TS "\"type\":\"signal\",\"signal\":\"INT\"}"), "info|Signal INT sent|"));
    assert_non_null(strstr(entry("{" TS "\"type\":\"truncated\",\"from\":4,\"to\":9,\"reason\":"
                                 "\"stream cap reached\"}"),
                           "warn|Events 4 to 9 are missing (stream cap reached)|"));
}

static void
test_what_programs_say_is_no_entry(void **state)
{
    (void)state;
    assert_string_equal(entry("{" TS "\"type\":\"output\",\"action\":3,\"data\":\"hi\"}"), "none");
    assert_string_equal(entry("{" TS "\"type\":\"process_output\",\"pid\":1,\"data\":\"x\"}"),
                        "none");
    assert_string_equal(entry("{" TS "\"type\":\"terminal_input\",\"data\":\"pw\"}"), "none");
    assert_string_equal(entry("{" TS "\"type\":\"observation\",\"action\":3}"), "none");
    assert_string_equal(entry("{" TS "}"), "none");
    /* the types the log keeps are the ones that make entries */
    for (size_t i = 0; e2b_log_types[i]; i++) {
        char ev[256];
        snprintf(ev, sizeof ev, "{" TS "\"type\":\"%s\"}", e2b_log_types[i]);
        assert_string_not_equal(entry(ev), "none");
    }
}

static void
test_levels_and_the_v1_line(void **state)
{
    (void)state;
    assert_int_equal(e2b_log_level_rank("debug"), 0);
    assert_int_equal(e2b_log_level_rank("error"), 3);
    assert_int_equal(e2b_log_level_rank("WARN"), -1);
    json_object *ev = json_tokener_parse("{" TS "\"type\":\"process\",\"event\":\"end\",\"pid\":5,"
                                         "\"exit_code\":3,\"status\":\"exit status 3\"}");
    json_object *en = e2b_log_entry(ev), *line = e2b_log_line(en);
    assert_string_equal(
        json_object_get_string(line),
        "{\"level\":\"warn\",\"message\":\"Process 5 ended: exit status 3\",\"pid\":"
        "\"5\",\"exit_code\":\"3\",\"status\":\"exit status 3\",\"logger\":"
        "\"process\",\"seq\":\"7\"}");
    json_object_put(line);
    json_object_put(en);
    json_object_put(ev);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_sandboxs_own_events_are_entries),
        cmocka_unit_test(test_what_programs_say_is_no_entry),
        cmocka_unit_test(test_levels_and_the_v1_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
