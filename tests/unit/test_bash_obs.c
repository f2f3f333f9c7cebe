/* test_bash_obs.c — the `run`/`error` observation JSON against OpenHands 0.62.0's exact texts
 * (bash.py, commands.py, event_to_dict), scenarios from
 * tests/unit/runtime/utils/test_bash_session.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "executor/bash_obs.h"
#include "executor/net_hint.h"

#define HELP                                                                                       \
    "You may wait longer to see additional output by sending empty command '', send other "        \
    "commands to interact with the current process, send keys (\"C-c\", \"C-z\", \"C-d\") to "     \
    "interrupt/kill the previous command before sending your new command, or use the timeout "     \
    "parameter in execute_bash for future commands."
/* the same text inside JSON: its quotes escaped */
#define HELP_JSON                                                                                  \
    "You may wait longer to see additional output by sending empty command '', send other "        \
    "commands to interact with the current process, send keys (\\\"C-c\\\", \\\"C-z\\\", "         \
    "\\\"C-d\\\") to interrupt/kill the previous command before sending your new command, or "     \
    "use the timeout parameter in execute_bash for future commands."

static bash_obs_in_t
input(const char *cmd, const char *out, bash_end_t end)
{
    bash_obs_in_t in = {.command = cmd,
                        .output = out,
                        .output_len = strlen(out),
                        .end = end,
                        .exit_code = 0,
                        .timeout = 120.0,
                        .no_change_timeout = 10,
                        .pid = -1,
                        .username = "root",
                        .hostname = "box",
                        .working_dir = "/workspace",
                        .py_interpreter_path = "/usr/bin/python"};
    return in;
}

static void
expect_json(json_object *o, const char *json)
{
    assert_string_equal(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        json);
    json_object_put(o);
}

static const char *
md_str(json_object *o, const char *key)
{
    json_object *x, *m, *v;
    json_object_object_get_ex(o, "extras", &x);
    json_object_object_get_ex(x, "metadata", &m);
    json_object_object_get_ex(m, key, &v);
    return json_object_get_string(v);
}

static void
test_completed_observation_exact_json(void **state)
{
    (void)state;
    bash_obs_in_t in = input("echo 'hello world'", "hello world\r\n", BASH_END_COMPLETED);
    expect_json(bash_obs_build(&in),
                "{\"message\":\"Command `echo 'hello world'` executed with exit code 0.\","
                "\"observation\":\"run\",\"content\":\"hello world\",\"extras\":{\"command\":"
                "\"echo 'hello world'\",\"metadata\":{\"exit_code\":0,\"pid\":-1,\"username\":"
                "\"root\",\"hostname\":\"box\",\"working_dir\":\"/workspace\","
                "\"py_interpreter_path\":\"/usr/bin/python\",\"prefix\":\"\",\"suffix\":"
                "\"\\n[The command completed with exit code 0.]\"},\"hidden\":false},"
                "\"success\":true}");
}

static void
test_failed_command_is_not_success(void **state)
{
    (void)state;
    bash_obs_in_t in = input("nonexistent_command",
                             "bash: nonexistent_command: command not found\n", BASH_END_COMPLETED);
    in.exit_code = 127;
    json_object *o = bash_obs_build(&in);
    json_object *v;
    json_object_object_get_ex(o, "success", &v);
    assert_false(json_object_get_boolean(v));
    assert_string_equal(md_str(o, "suffix"), "\n[The command completed with exit code 127.]");
    json_object_object_get_ex(o, "message", &v);
    assert_string_equal(json_object_get_string(v),
                        "Command `nonexistent_command` executed with exit code 127.");
    json_object_put(o);
}

static void
test_ctrl_c_suffix(void **state)
{
    (void)state;
    bash_obs_in_t in = input("C-c", "^C\n", BASH_END_INTERRUPTED);
    in.is_input = true;
    in.key = 'C';
    in.exit_code = 130;
    json_object *o = bash_obs_build(&in);
    assert_string_equal(md_str(o, "suffix"),
                        "\n[The command completed with exit code 130. CTRL+C was sent.]");
    assert_string_equal(md_str(o, "prefix"), "");
    json_object_put(o);
}

static void
test_no_change_timeout_has_null_metadata(void **state)
{
    (void)state;
    bash_obs_in_t in =
        input("read -p 'Enter name: ' name", "Enter name: ", BASH_END_NO_CHANGE_TIMEOUT);
    expect_json(
        bash_obs_build(&in),
        "{\"message\":\"Command `read -p 'Enter name: ' name` executed with exit code -1.\","
        "\"observation\":\"run\",\"content\":\"Enter name:\",\"extras\":{\"command\":"
        "\"read -p 'Enter name: ' name\",\"metadata\":{\"exit_code\":-1,\"pid\":-1,"
        "\"username\":null,\"hostname\":null,\"working_dir\":null,"
        "\"py_interpreter_path\":null,\"prefix\":\"\",\"suffix\":\"\\n[The command has "
        "no new output after 10 seconds. " HELP_JSON "]\"},\"hidden\":false},\"success\":false}");
}

static void
test_hard_timeout_prints_python_float(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {1.0, "1.0"},     {2.5, "2.5"},    {120.0, "120.0"},           {0.1, "0.1"},
        {1e-05, "1e-05"}, {1e16, "1e+16"}, {123456.789, "123456.789"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bash_obs_in_t in = input("sleep 5", "", BASH_END_HARD_TIMEOUT);
        in.timeout = cases[i].v;
        in.is_continuation = true;
        json_object *o = bash_obs_build(&in);
        char *want = NULL;
        assert_true(asprintf(&want, "\n[The command timed out after %s seconds. " HELP "]",
                             cases[i].text) > 0);
        assert_string_equal(md_str(o, "suffix"), want);
        assert_string_equal(md_str(o, "prefix"),
                            "[Below is the output of the previous command.]\n");
        free(want);
        json_object_put(o);
    }
}

static void
test_error_texts(void **state)
{
    (void)state;
    bash_obs_in_t in = input("", "", BASH_END_COMPLETED);
    expect_json(bash_obs_error(BASH_ERR_NO_PREVIOUS_FOR_LOGS, &in),
                "{\"message\":\"Command `` executed with exit code -1.\",\"observation\":\"run\","
                "\"content\":\"ERROR: No previous running command to retrieve logs from.\","
                "\"extras\":{\"command\":\"\",\"metadata\":{\"exit_code\":-1,\"pid\":-1,"
                "\"username\":null,\"hostname\":null,\"working_dir\":null,"
                "\"py_interpreter_path\":null,\"prefix\":\"\",\"suffix\":\"\"},\"hidden\":false},"
                "\"success\":false}");
    json_object *o = bash_obs_error(BASH_ERR_NO_PREVIOUS_FOR_INPUT, &in);
    json_object *v;
    json_object_object_get_ex(o, "content", &v);
    assert_string_equal(json_object_get_string(v),
                        "ERROR: No previous running command to interact with.");
    json_object_put(o);
}

static void
test_previous_still_running(void **state)
{
    (void)state;
    bash_obs_in_t in = input("Alice", "", BASH_END_NO_CHANGE_TIMEOUT);
    in.is_continuation = true;
    json_object *o = bash_obs_error(BASH_ERR_PREVIOUS_STILL_RUNNING, &in);
    assert_string_equal(md_str(o, "prefix"), "[Below is the output of the previous command.]\n");
    assert_string_equal(md_str(o, "suffix"),
                        "\n[Your command \"Alice\" is NOT executed. The previous command is still "
                        "running - You CANNOT send new commands until the previous command is "
                        "completed. By setting `is_input` to `true`, you can interact with the "
                        "current process: " HELP "]");
    json_object_put(o);
}

static void
test_error_observation(void **state)
{
    (void)state;
    expect_json(obs_error_new("ERROR: Cannot execute multiple commands at once."),
                "{\"message\":\"ERROR: Cannot execute multiple commands at once.\","
                "\"observation\":\"error\",\"content\":\"ERROR: Cannot execute multiple commands "
                "at once.\",\"extras\":{\"error_id\":\"\"}}");
}

static void
test_truncate_counts_code_points(void **state)
{
    (void)state;
    char *s = obs_truncate("abcdef", 6, 6);
    assert_string_equal(s, "abcdef");
    free(s);
    s = obs_truncate("abcdefg", 7, 6);
    assert_string_equal(s, "abc\n[... Observation truncated due to length ...]\nefg");
    free(s);
    /* é is 2 bytes, one code point: 7 code points, never cut inside a sequence */
    s = obs_truncate("\xc3\xa9\xc3\xa9\xc3\xa9x\xc3\xa9\xc3\xa9\xc3\xa9", 13, 6);
    assert_string_equal(s,
                        "\xc3\xa9\xc3\xa9\xc3\xa9\n[... Observation truncated due to length ...]\n"
                        "\xc3\xa9\xc3\xa9\xc3\xa9");
    free(s);
}

static void
test_output_shaping(void **state)
{
    (void)state;
    const char raw[] = "\n\n  \x1b[01;34mdir\x1b[0m   \r\n50%\r100%\nbad\xff byte\n\n";
    bash_obs_in_t in = input("ls", raw, BASH_END_COMPLETED);
    in.output_len = sizeof(raw) - 1;
    json_object *o = bash_obs_build(&in), *v;
    json_object_object_get_ex(o, "content", &v);
    assert_string_equal(json_object_get_string(v), "dir\n100%\nbad\xef\xbf\xbd byte");
    json_object_put(o);
}

/* `for i in {1..50000}; do echo "Line $i"; done`: upstream (tmux 3.3a, measured) shows "Line
 * 39989" to "Line 50000" with "Showing the last 10013 lines"; we keep the last 11,000 lines (the
 * final newline's empty line counted, as upstream counts it), never fewer than upstream. */
static void
test_long_output_keeps_the_last_11000_lines(void **state)
{
    (void)state;
    size_t cap = 50000 * 12, n = 0;
    char *raw = malloc(cap);
    for (int i = 1; i <= 50000; i++)
        n += (size_t)snprintf(raw + n, cap - n, "Line %d\n", i);
    bash_obs_in_t in =
        input("for i in {1..50000}; do echo \"Line $i\"; done", raw, BASH_END_COMPLETED);
    in.output_len = n;
    json_object *o = bash_obs_build(&in), *v;
    assert_string_equal(md_str(o, "prefix"), "[Previous command outputs are truncated. Showing "
                                             "the last 11000 lines of the output below.]\n");
    json_object_object_get_ex(o, "content", &v);
    const char *content = json_object_get_string(v);
    assert_true(strncmp(content, "Line 39002\nLine 39003\n", 22) == 0);
    assert_non_null(strstr(content, "\nLine 40000\n"));
    assert_non_null(strstr(content, "\n[... Observation truncated due to length ...]\n"));
    assert_string_equal(content + strlen(content) - 11, "\nLine 50000");
    json_object_put(o);
    /* 11,000 lines or fewer: all of them, no prefix. */
    in.output = strstr(raw, "Line 39002\n");
    in.output_len = n - (size_t)(in.output - raw) - 1; /* without the final newline */
    o = bash_obs_build(&in);
    assert_string_equal(md_str(o, "prefix"), "");
    json_object_put(o);
    free(raw);
}

/* The session already cut older output (its bounded tail): the prefix says so, whatever the
 * number of lines left. */
static void
test_output_cut_by_the_session_gets_the_prefix(void **state)
{
    (void)state;
    bash_obs_in_t in = input("cat big", "tail line 1\ntail line 2\n", BASH_END_COMPLETED);
    in.output_cut = true;
    json_object *o = bash_obs_build(&in);
    assert_string_equal(md_str(o, "prefix"), "[Previous command outputs are truncated. Showing "
                                             "the last 3 lines of the output below.]\n");
    json_object_put(o);
}

/* Upstream refuses a new command while one runs before it escapes it for tmux: the NOT-executed
 * observation reports the command as given, while a run observation shows the escaped `\\;`. */
static void
test_previous_still_running_reports_raw_command(void **state)
{
    (void)state;
    static const char cmd[] = "find . -exec ls {} \\;";
    bash_obs_in_t in = input(cmd, "", BASH_END_NO_CHANGE_TIMEOUT);
    json_object *o = bash_obs_error(BASH_ERR_PREVIOUS_STILL_RUNNING, &in), *x, *v;
    json_object_object_get_ex(o, "extras", &x);
    json_object_object_get_ex(x, "command", &v);
    assert_string_equal(json_object_get_string(v), cmd);
    json_object_object_get_ex(o, "message", &v);
    assert_string_equal(json_object_get_string(v),
                        "Command `find . -exec ls {} \\;` executed with exit code -1.");
    assert_string_equal(md_str(o, "suffix"),
                        "\n[Your command \"find . -exec ls {} \\;\" is NOT executed. The previous "
                        "command is still running - You CANNOT send new commands until the "
                        "previous command is completed. By setting `is_input` to `true`, you can "
                        "interact with the current process: " HELP "]");
    json_object_put(o);
    /* the contrast: the same command run to completion is reported escaped */
    in = input(cmd, "", BASH_END_COMPLETED);
    o = bash_obs_build(&in);
    json_object_object_get_ex(o, "extras", &x);
    json_object_object_get_ex(x, "command", &v);
    assert_string_equal(json_object_get_string(v), "find . -exec ls {} \\\\;");
    json_object_put(o);
}

/* Upstream resets the prefix of a completed continuation to "", the truncation note included. */
static void
test_completed_continuation_drops_truncation_note(void **state)
{
    (void)state;
    size_t cap = 12000 * 8, n = 0;
    char *raw = malloc(cap);
    for (int i = 1; i <= 12000; i++)
        n += (size_t)snprintf(raw + n, cap - n, "%d\n", i % 10);
    bash_obs_in_t in = input("", raw, BASH_END_COMPLETED);
    in.output_len = n;
    in.is_continuation = true;
    json_object *o = bash_obs_build(&in);
    assert_string_equal(md_str(o, "prefix"), "");
    json_object_put(o);
    in.is_continuation = false;
    o = bash_obs_build(&in);
    assert_string_equal(md_str(o, "prefix"), "[Previous command outputs are truncated. Showing "
                                             "the last 11000 lines of the output below.]\n");
    json_object_put(o);
    free(raw);
}

/* What resolvers and clients print with no network: each is a failure shown; ordinary output
 * that talks about networks is not. */
static void
test_network_failures_are_recognised(void **state)
{
    (void)state;
    static const char *const shown[] = {
        "socket.gaierror: [Errno -3] Temporary failure in name resolution",
        "socket.gaierror: [Errno -2] Name or service not known",
        "curl: (6) Could not resolve host: example.com",
        "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com",
        "Err:1 http://deb.debian.org/debian bookworm InRelease\n  Temporary failure resolving "
        "'deb.debian.org'",
        "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
        "after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
        "HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno 101] "
        "Network is unreachable')': /simple/x/",
        "wget: unable to resolve host address 'example.com'",
        "curl: (7) Failed to connect to 1.1.1.1 port 80: Network is unreachable",
    };
    for (size_t i = 0; i < sizeof shown / sizeof *shown; i++)
        assert_true(net_hint_failure_shown(shown[i], strlen(shown[i])));
    static const char *const not_shown[] = {
        "",
        "hello",
        "the network module resolves names",
        "Connection refused",
        "ERROR: No matching distribution found for x",
    };
    for (size_t i = 0; i < sizeof not_shown / sizeof *not_shown; i++)
        assert_false(net_hint_failure_shown(not_shown[i], strlen(not_shown[i])));
    /* the text may sit past a NUL the program wrote: the output is bytes, not a C string */
    static const char nul[] = "x\0Could not resolve host: a";
    assert_true(net_hint_failure_shown(nul, sizeof nul - 1));
}

/* no_network: the note goes after upstream's suffix, whatever the end; content is untouched. */
static void
test_no_network_note_ends_the_suffix(void **state)
{
    (void)state;
    const char *out = "curl: (6) Could not resolve host: example.com\n";
    bash_obs_in_t in = input("curl http://example.com", out, BASH_END_COMPLETED);
    in.exit_code = 6;
    json_object *o = bash_obs_build(&in);
    assert_string_equal(md_str(o, "suffix"), "\n[The command completed with exit code 6.]");
    json_object_put(o);
    in.no_network = true;
    o = bash_obs_build(&in);
    assert_string_equal(md_str(o, "suffix"),
                        "\n[The command completed with exit code 6.]" NET_HINT_NOTE);
    assert_string_equal(json_object_get_string(json_object_object_get(o, "content")),
                        "curl: (6) Could not resolve host: example.com");
    json_object_put(o);
    in.end = BASH_END_NO_CHANGE_TIMEOUT;
    o = bash_obs_build(&in);
    assert_string_equal(md_str(o, "suffix"),
                        "\n[The command has no new output after 10 seconds. " HELP
                        "]" NET_HINT_NOTE);
    json_object_put(o);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_completed_observation_exact_json),
        cmocka_unit_test(test_failed_command_is_not_success),
        cmocka_unit_test(test_ctrl_c_suffix),
        cmocka_unit_test(test_no_change_timeout_has_null_metadata),
        cmocka_unit_test(test_hard_timeout_prints_python_float),
        cmocka_unit_test(test_error_texts),
        cmocka_unit_test(test_previous_still_running),
        cmocka_unit_test(test_error_observation),
        cmocka_unit_test(test_truncate_counts_code_points),
        cmocka_unit_test(test_output_shaping),
        cmocka_unit_test(test_long_output_keeps_the_last_11000_lines),
        cmocka_unit_test(test_output_cut_by_the_session_gets_the_prefix),
        cmocka_unit_test(test_previous_still_running_reports_raw_command),
        cmocka_unit_test(test_completed_continuation_drops_truncation_note),
        cmocka_unit_test(test_network_failures_are_recognised),
        cmocka_unit_test(test_no_network_note_ends_the_suffix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
