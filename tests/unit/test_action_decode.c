/* test_action_decode.c — common/action_decode.c: the exception texts of OpenHands 0.62's
 * event_from_dict for what it cannot decode. The expected texts were printed by Python 3 from
 * dataclasses and str/int Enums declared as upstream's (ActionType, ActionSecurityRisk,
 * ObservationType), so repr(), f"{x=}" and the TypeError wording are Python's own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "action_decode.h"
#include "buf.h"
#include "py_compat.h"

#define ACTIONS                                                                                    \
    "dict_keys([<ActionType.NULL: 'null'>, <ActionType.RUN: 'run'>, <ActionType.RUN_IPYTHON: "     \
    "'run_ipython'>, <ActionType.BROWSE: 'browse'>, <ActionType.BROWSE_INTERACTIVE: "              \
    "'browse_interactive'>, <ActionType.READ: 'read'>, <ActionType.WRITE: 'write'>, "              \
    "<ActionType.EDIT: 'edit'>, <ActionType.THINK: 'think'>, <ActionType.FINISH: 'finish'>, "      \
    "<ActionType.REJECT: 'reject'>, <ActionType.DELEGATE: 'delegate'>, <ActionType.RECALL: "       \
    "'recall'>, <ActionType.CHANGE_AGENT_STATE: 'change_agent_state'>, <ActionType.MESSAGE: "      \
    "'message'>, <ActionType.SYSTEM: 'system'>, <ActionType.CONDENSATION: 'condensation'>, "       \
    "<ActionType.CONDENSATION_REQUEST: 'condensation_request'>, <ActionType.MCP: "                 \
    "'call_tool_mcp'>, <ActionType.TASK_TRACKING: 'task_tracking'>, <ActionType.LOOP_RECOVERY: "   \
    "'loop_recovery'>])"

/* Asserts the decode error of json is want (NULL: it decodes). */
static void
decodes_to(const char *json, const char *want)
{
    json_object *o = json_tokener_parse(json);
    assert_non_null(o);
    char *got = oh_action_decode_error(o);
    json_object_put(o);
    if (!want && got)
        fail_msg("%s: unexpected error %s", json, got);
    if (want && !got)
        fail_msg("%s: decoded, wanted %s", json, want);
    if (want)
        assert_string_equal(got, want);
    free(got);
}

static void
test_actions_upstream_runs_or_knows_decode(void **state)
{
    (void)state;
    decodes_to("{\"action\": \"run\", \"args\": {\"command\": \"ls\", \"is_input\": false, "
               "\"thought\": \"\", \"blocking\": false, \"is_static\": false, \"cwd\": null, "
               "\"hidden\": false, \"confirmation_state\": \"confirmed\", \"security_risk\": -1}, "
               "\"timeout\": 120.0, \"message\": \"Running command: ls\"}",
               NULL);
    decodes_to("{\"action\": \"think\"}", NULL);
    decodes_to("{\"action\": \"read\", \"args\": {\"path\": \"/x\", \"keep_prompt\": true, "
               "\"timestamp\": \"t\", \"task_completed\": null}}",
               NULL);
    decodes_to("{\"action\": \"message\", \"args\": {\"content\": \"hi\", \"images_urls\": []}}",
               NULL);
    /* the path comes from the legacy code */
    decodes_to(
        "{\"action\": \"edit\", \"args\": {\"translated_ipython_code\": "
        "\"print(file_editor(**{'command': 'create', 'path': '/w/a', 'file_text': 'x'}))\"}}",
        NULL);
    /* code upstream would drop is left to the executor, which says why it refuses it */
    decodes_to("{\"action\": \"edit\", \"args\": {\"translated_ipython_code\": \"import os\"}}",
               NULL);
}

static void
test_unknown_action_types(void **state)
{
    (void)state;
    decodes_to("{\"action\": \"teleport\"}",
               "'action['action']='teleport'' is not defined. Available actions: " ACTIONS);
    decodes_to("{\"action\": 5}",
               "'action['action']=5' is not defined. Available actions: " ACTIONS);
    decodes_to("{\"action\": null}",
               "'action['action']=None' is not defined. Available actions: " ACTIONS);
    decodes_to("{\"action\": \"it's\"}",
               "'action['action']=\"it's\"' is not defined. Available actions: " ACTIONS);
}

static void
test_wrong_arguments(void **state)
{
    (void)state;
    decodes_to("{\"action\": \"run\", \"args\": {\"is_input\": false, \"security_risk\": -1}, "
               "\"timeout\": 120.0}",
               "action={'action': 'run', 'args': {'is_input': False, 'security_risk': "
               "<ActionSecurityRisk.UNKNOWN: -1>}, 'timeout': 120.0} has the wrong arguments: "
               "CmdRunAction.__init__() missing 1 required positional argument: 'command'");
    decodes_to(
        "{\"action\": \"run\"}",
        "action={'action': 'run'} has the wrong arguments: CmdRunAction.__init__() missing 1 "
        "required positional argument: 'command'");
    decodes_to("{\"action\": \"run\", \"args\": {\"command\": \"ls\", \"foo\": 1, \"timestamp\": "
               "\"x\", \"is_confirmed\": \"rejected\", \"security_risk\": \"bad\", "
               "\"keep_prompt\": true}}",
               "action={'action': 'run', 'args': {'command': 'ls', 'foo': 1, 'confirmation_state': "
               "'rejected'}} has the wrong arguments: CmdRunAction.__init__() got an unexpected "
               "keyword argument 'foo'");
    decodes_to(
        "{\"action\": \"write\", \"args\": {\"thought\": \"it's "
        "\\\"q\\\"\\n\\u00a0\\u00e9\\u0001\", "
        "\"security_risk\": true}, \"timeout\": 1e15}",
        "action={'action': 'write', 'args': {'thought': 'it\\'s \"q\"\\n\\xa0\xc3\xa9\\x01', "
        "'security_risk': <ActionSecurityRisk.MEDIUM: 1>}, 'timeout': 1000000000000000.0} has "
        "the wrong arguments: FileWriteAction.__init__() missing 2 required positional "
        "arguments: 'path' and 'content'");
    decodes_to("{\"action\": \"read\", \"args\": {\"translated_ipython_code\": \"garbage\", "
               "\"command\": \"view\"}}",
               NULL);
    decodes_to("{\"action\": \"read\", \"args\": {\"translated_ipython_code\": null, "
               "\"command\": \"view\"}}",
               "action={'action': 'read', 'args': {}} has the wrong arguments: "
               "FileReadAction.__init__() missing 1 required positional argument: 'path'");
    decodes_to("{\"action\": \"run\", \"args\": []}", "pop expected at most 1 argument, got 2");
    decodes_to("{\"action\": \"run\", \"args\": null}", "'NoneType' object has no attribute 'pop'");
    decodes_to("{\"action\": \"run\", \"args\": \"ls\"}", "'str' object has no attribute 'pop'");
    decodes_to(
        "{\"action\": \"read\", \"args\": {\"path\": \"/x\", \"translated_ipython_code\": 5}}",
        "'int' object has no attribute 'startswith'");
}

static void
test_observations_and_other_dicts(void **state)
{
    (void)state;
    decodes_to("{\"observation\": \"run\", \"content\": \"x\", \"extras\": {}}",
               "400: Invalid action type");
    decodes_to("{\"observation\": [\"a\"]}", "unhashable type: 'list'");
    decodes_to("{\"args\": {\"command\": \"ls\"}}",
               "Unknown event type: {'args': {'command': 'ls'}}");
    json_object *o = json_tokener_parse("{\"observation\": \"nope\"}");
    char *got = oh_action_decode_error(o);
    json_object_put(o);
    assert_non_null(got);
    assert_true(!strncmp(got,
                         "\"'observation['observation']='nope'' is not defined. Available "
                         "observations: dict_keys([<ObservationType.NULL: 'null'>, ",
                         120));
    assert_true(strstr(got, "<ObservationType.LOOP_DETECTION: 'loop_detection'>])\"") != NULL);
    free(got);
}

/* py_repr's floats as Python's repr() writes them. */
static void
test_float_repr(void **state)
{
    (void)state;
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"120.0", "120.0"},
        {"0.1", "0.1"},
        {"1e15", "1000000000000000.0"},
        {"1e16", "1e+16"},
        {"1.5e-5", "1.5e-05"},
        {"0.0001", "0.0001"},
        {"-2.5", "-2.5"},
        {"123.456", "123.456"},
        {"1.2345678901234567e+300", "1.2345678901234567e+300"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object *o = json_tokener_parse(cases[i].json);
        buf_t b = BUF_INIT;
        py_repr(&b, o);
        assert_string_equal(b.data, cases[i].want);
        buf_free(&b);
        json_object_put(o);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_actions_upstream_runs_or_knows_decode),
        cmocka_unit_test(test_unknown_action_types),
        cmocka_unit_test(test_wrong_arguments),
        cmocka_unit_test(test_observations_and_other_dicts),
        cmocka_unit_test(test_float_repr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
