/* test_legacy_edit.c — decoding translated_ipython_code (common/legacy_edit.c): what
 * OpenHands' writer produced (f'print(file_editor(**{arguments}))', Python's repr of the tool
 * call's arguments; the vectors below were printed by Python 3), what ast.literal_eval would also
 * accept, what is refused, and how the result is merged into an action's args. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "legacy_edit.h"
#include "json_util.h"

#define PLAIN (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static json_object *
parse(const char *code)
{
    err_t err = {0};
    json_object *o = legacy_edit_parse(code, strlen(code), &err);
    if (!o)
        fail_msg("refused %s: %s", code, err.msg);
    return o;
}

/* Asserts code is refused with a message containing want. */
static void
refused(const char *code, const char *want)
{
    err_t err = {0};
    json_object *o = legacy_edit_parse(code, strlen(code), &err);
    if (o)
        fail_msg("accepted %s as %s", code, json_object_to_json_string(o));
    assert_int_equal(err.code, ERR_BAD_REQ);
    if (!strstr(err.msg, want))
        fail_msg("%s: message '%s' lacks '%s'", code, err.msg, want);
}

static void
test_create_as_the_writer_stored_it(void **state)
{
    (void)state;
    json_object *o = parse("print(file_editor(**{'command': 'create', 'path': '/workspace/x.py', "
                           "'file_text': 'hello'}))");
    assert_string_equal(
        json_object_to_json_string_ext(o, PLAIN),
        "{\"command\":\"create\",\"path\":\"/workspace/x.py\",\"file_text\":\"hello\"}");
    json_object_put(o);
}

/* repr() picks double quotes for a string with ' and no "; escapes \\, \n, \t, \xNN; keeps
 * printable non-ASCII text as is. */
static void
test_repr_strings_and_values(void **state)
{
    (void)state;
    json_object *o = parse(
        "print(file_editor(**{'command': 'str_replace', 'path': '/workspace/a.py', 'old_str': "
        "'it\\'s \"q\"\\n\\tx\\\\y', 'new_str': 'caf\xc3\xa9 \xe2\x98\x83 \\x00\\x7f\\x85 "
        "\xf0\x9f\x98\x80', 'insert_line': 0, 'view_range': [1, -1], 'x': None, 'y': True, 'z': "
        "\"it's\"}))");
    assert_string_equal(json_get_str(o, "old_str", ""), "it's \"q\"\n\tx\\y");
    json_object *ns = json_get(o, "new_str");
    static const char want[] = "caf\xc3\xa9 \xe2\x98\x83 \0\x7f\xc2\x85 \xf0\x9f\x98\x80";
    assert_int_equal(json_object_get_string_len(ns), sizeof want - 1);
    assert_memory_equal(json_object_get_string(ns), want, sizeof want - 1);
    assert_int_equal(json_get_int(o, "insert_line", -5), 0);
    json_object *vr = json_get(o, "view_range");
    assert_int_equal(json_object_array_length(vr), 2);
    assert_int_equal(json_object_get_int(json_object_array_get_idx(vr, 1)), -1);
    assert_true(json_object_object_get_ex(o, "x", NULL));
    assert_null(json_get(o, "x"));
    assert_true(json_get_bool(o, "y", false));
    assert_string_equal(json_get_str(o, "z", ""), "it's");
    json_object_put(o);
}

/* What literal_eval accepts beyond repr(): other escapes, joined literals, free whitespace. */
static void
test_python_literal_rules(void **state)
{
    (void)state;
    json_object *o = parse("print(file_editor(**  {\n  \"a\": '\\u2603\\U0001F600\\101\\0\\777',\n"
                           "  'b': 'one' \"two\"  'three', 'c': '\\d\\q', 'd': 'x\\\ny',\n"
                           "  'e': [[], [False, None], +7, - 3], 'a2': -9223372036854775808,\n"
                           "  'b': 'last wins', }\n))");
    assert_string_equal(json_get_str(o, "a", ""), "\xe2\x98\x83\xf0\x9f\x98\x80"
                                                  "A");
    assert_int_equal(json_object_get_string_len(json_get(o, "a")), 7 + 1 + 1 + 2);
    assert_memory_equal(json_object_get_string(json_get(o, "a")) + 8, "\0\xc7\xbf", 3);
    assert_string_equal(json_get_str(o, "b", ""), "last wins");
    assert_string_equal(json_get_str(o, "c", ""), "\\d\\q");
    assert_string_equal(json_get_str(o, "d", ""), "xy");
    assert_string_equal(json_object_to_json_string_ext(json_get(o, "e"), PLAIN),
                        "[[],[false,null],7,-3]");
    assert_int_equal(json_get_int(o, "a2", 0), INT64_MIN);
    json_object_put(o);
    o = parse("print(file_editor(**{}))");
    assert_int_equal(json_object_object_length(o), 0);
    json_object_put(o);
}

static void
test_everything_else_is_refused_with_where(void **state)
{
    (void)state;
    refused("print(file_editor(command='view', path='/x'))", "not of the form");
    refused("print(file_editor(**['/x']))", "expected '{' at byte 20 (found '[')");
    refused("file_editor(**{'path': '/x'})", "not of the form print(file_editor(**{...}))");
    refused("print(file_editor(**{'path': '/x'}) )", "not of the form");
    refused("", "not of the form");
    refused("print(file_editor(**{'path': f'/x'}))", "f, r, b and u prefixes are not supported");
    refused("print(file_editor(**{'path': rb'/x'}))", "prefixes are not supported");
    refused("print(file_editor(**{'path': __import__('os').getcwd()}))",
            "names and calls are not supported) at byte 29 (found '_')");
    refused("print(file_editor(**{'path': '/x', **other}))", "a string key or '}'");
    refused("print(file_editor(**{'n': 1.5}))", "floats, hex and other numbers");
    refused("print(file_editor(**{'n': 0x10}))", "floats, hex");
    refused("print(file_editor(**{'n': 1e3}))", "floats, hex");
    refused("print(file_editor(**{'n': 007}))", "without leading zeros");
    refused("print(file_editor(**{'n': 1_000}))", "floats, hex");
    refused("print(file_editor(**{'n': 9223372036854775808}))", "fits in 64 bits");
    refused("print(file_editor(**{'n': (1, 2)}))", "a string, an integer, None");
    refused("print(file_editor(**{'n': {'a': 1}}))", "nested dicts are not supported");
    refused("print(file_editor(**{'n': '''x'''}))", "triple quotes are not supported");
    refused("print(file_editor(**{'n': 'x' # note\n}))", "',' or '}' in the dict");
    refused("print(file_editor(**{'n': 'x}))", "the closing quote");
    refused("print(file_editor(**{'n': 'a\nb'}))", "the closing quote");
    refused("print(file_editor(**{'n': '\\ud800'}))", "not a surrogate");
    refused("print(file_editor(**{'n': '\\U00110000'}))", "up to \\U0010ffff");
    refused("print(file_editor(**{'n': '\\x4'}))", "a hex digit");
    refused("print(file_editor(**{'n': '\\N{SNOWMAN}'}))", "named characters");
    refused("print(file_editor(**{1: 'x'}))", "a string key");
    refused("print(file_editor(**{'a\\x00b': 'x'}))", "without NUL");
    refused("print(file_editor(**{'n' 'x'}))", "':' after the key");
    refused("print(file_editor(**{'n': [1 2]}))", "',' or ']' in the list");
    refused("print(file_editor(**{'n': nonesuch}))", "names and calls");
    refused("print(file_editor(**{'n': None}, x))", "the end of the dict");
    refused("print(file_editor(**{'n': [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}))", "16 deep");
    refused("print(file_editor(**{'n': ", "not of the form"); /* no suffix */
    refused("print(file_editor(**{'n': ))", "or a list at byte 26 (found the end)");
}

static void
test_args_are_merged_as_upstream_does(void **state)
{
    (void)state;
    err_t err = {0};
    json_object *out = (json_object *)1;
    json_object *args = json_tokener_parse("{\"path\": \"/workspace/a\"}");
    assert_int_equal(legacy_edit_args(args, &out, &err), 0);
    assert_null(out); /* no translated_ipython_code: args as they are */
    json_object_put(args);

    /* Every 0.18-0.23 event had the field; empty, it only goes away. */
    args = json_tokener_parse("{\"command\": \"create\", \"path\": \"/w/a\", "
                              "\"translated_ipython_code\": \"\"}");
    assert_int_equal(legacy_edit_args(args, &out, &err), 0);
    assert_string_equal(json_object_to_json_string_ext(out, PLAIN),
                        "{\"command\":\"create\",\"path\":\"/w/a\"}");
    json_object_put(out);
    json_object_put(args);

    /* The decoded arguments win; a "view" command is dropped (a view is a read action). */
    args = json_tokener_parse(
        "{\"path\": \"/old\", \"content\": \"\", \"impl_source\": \"oh_aci\", "
        "\"translated_ipython_code\": \"print(file_editor(**{'command': 'view', 'path': '/new', "
        "'view_range': [2, 3]}))\"}");
    assert_int_equal(legacy_edit_args(args, &out, &err), 0);
    assert_string_equal(json_object_to_json_string_ext(out, PLAIN),
                        "{\"path\":\"/new\",\"content\":\"\",\"impl_source\":\"oh_aci\","
                        "\"view_range\":[2,3]}");
    json_object_put(out);
    json_object_put(args);

    args = json_tokener_parse("{\"translated_ipython_code\": null, \"command\": \"view\"}");
    assert_int_equal(legacy_edit_args(args, &out, &err), 0);
    assert_string_equal(json_object_to_json_string_ext(out, PLAIN), "{}");
    json_object_put(out);
    json_object_put(args);

    args = json_tokener_parse("{\"translated_ipython_code\": 7}");
    assert_int_equal(legacy_edit_args(args, &out, &err), -ERR_BAD_REQ);
    assert_null(out);
    assert_string_equal(err.msg, "translated_ipython_code must be a string");
    json_object_put(args);

    args = json_tokener_parse("{\"translated_ipython_code\": \"import os\"}");
    assert_int_equal(legacy_edit_args(args, &out, &err), -ERR_BAD_REQ);
    assert_null(out);
    assert_string_equal(err.msg, "not of the form print(file_editor(**{...}))");
    json_object_put(args);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_as_the_writer_stored_it),
        cmocka_unit_test(test_repr_strings_and_values),
        cmocka_unit_test(test_python_literal_rules),
        cmocka_unit_test(test_everything_else_is_refused_with_where),
        cmocka_unit_test(test_args_are_merged_as_upstream_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
