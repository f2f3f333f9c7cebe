/* test_editor_edit.c — the OHEditor edits: create, str_replace, insert, undo_edit, with their
 * snippets and error texts. Expected texts are those of openhands-aci 0.3.2
 * tests/integration/test_oh_editor.py, tests/integration/editor/ and OpenHands 0.62.0
 * tests/runtime/test_aci_edit.py. */
#include "file_actions_fixture.h"

static void
test_create_writes_file(void **state)
{
    (void)state;
    char *p = P("new_file.txt");
    expect_eq(EDIT("command", "create", "path", p, "file_text", "New file content"),
              "File created successfully at: %s", p);
    char *t = get("new_file.txt");
    assert_string_equal(t, "New file content");
    free(t);
    json_object *ex = json_get(last, "extras");
    expect_eq(json_get_str(ex, "diff", ""), "--- %s\n+++ %s\n@@ -1 +1 @@\n-\n+New file content", p,
              p);
    free(p);
}

static void
test_create_empty_then_view_shows_line_one(void **state)
{
    (void)state;
    char *p = P("empty_content.txt");
    EDIT("command", "create", "path", p, "file_text", "");
    expect_eq(EDIT("command", "view", "path", p),
              "Here's the result of running `cat -n` on %s:\n     1\t\n", p);
    free(p);
}

static void
test_create_refuses_existing_file(void **state)
{
    (void)state;
    put("test.txt", "Line 1\nLine 2");
    char *p = P("test.txt");
    expect_eq(
        EDIT("command", "create", "path", p, "file_text", "New content"),
        "ERROR:\nInvalid `path` parameter: %s. File already exists at: %s. Cannot overwrite files "
        "using command `create`.",
        p, p);
    free(p);
}

static void
test_create_without_file_text(void **state)
{
    (void)state;
    char *p = P("none_content.txt");
    expect_eq(EDIT("command", "create", "path", p),
              "ERROR:\nParameter `file_text` is required for command: create.");
    free(p);
}

static void
test_create_in_missing_directory_reports_oserror(void **state)
{
    (void)state;
    char *p = P("no/such/dir.txt");
    expect_eq(
        EDIT("command", "create", "path", p, "file_text", "x"),
        "ERROR:\nRan into [Errno 2] No such file or directory: '%s' while trying to write to %s", p,
        p);
    free(p);
}

/* ---- str_replace ---- */

static void
test_str_replace_shows_snippet(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    char *p = P("test.txt");
    expect_eq(
        EDIT("command", "str_replace", "path", p, "old_str", "test file", "new_str", "sample file"),
        "The file %s has been edited. Here's the result of running `cat -n` on a snippet of %s:\n"
        "     1\tThis is a sample file.\n     2\tThis file is for testing purposes.\n"
        "Review the changes and make sure they are as expected. Edit the file again if necessary.",
        p, p);
    char *t = get("test.txt");
    assert_string_equal(t, "This is a sample file.\nThis file is for testing purposes.");
    free(t);
    json_object *ex = json_get(last, "extras");
    assert_string_equal(json_get_str(ex, "old_content", ""), "test file");
    assert_string_equal(json_get_str(ex, "new_content", ""), "sample file");
    char *diff = xasprintf(
        "--- %s\n+++ %s\n@@ -1 +1 @@\n-This is a test file.\n+This is a sample file.", p, p);
    assert_string_equal(json_get_str(ex, "diff", ""), diff);
    free(diff);
    free(p);
}

static void
test_str_replace_multi_line_with_tabs(void **state)
{
    (void)state;
    char *p = P("test.py");
    EDIT("command", "create", "path", p, "file_text", "def test():\n\tprint(\"Hello, World!\")");
    expect_eq(
        EDIT("command", "str_replace", "path", p, "old_str",
             "def test():\n\tprint(\"Hello, World!\")", "new_str",
             "def test():\n\tprint(\"Hello, Universe!\")"),
        "The file %s has been edited. Here's the result of running `cat -n` on a snippet of %s:\n"
        "     1\tdef test():\n     2\t\tprint(\"Hello, Universe!\")\n"
        "Review the changes and make sure they are as expected. Edit the file again if necessary.",
        p, p);
    free(p);
}

static void
test_str_replace_refuses_two_matches(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    char *p = P("test.txt");
    expect_eq(EDIT("command", "str_replace", "path", p, "old_str", "test", "new_str", "sample"),
              "ERROR:\nNo replacement was performed. Multiple occurrences of old_str `test` in "
              "lines [1, 2]. "
              "Please ensure it is unique.");
    free(p);
}

static void
test_str_replace_multiline_matches_name_start_lines(void **state)
{
    (void)state;
    const char *block = "def example():\n    print(\"Hello\")\n    return True";
    char *text = xasprintf("%s\n\nprint('separator')\n\n%s", block, block);
    put("test.txt", text);
    char *p = P("test.txt");
    assert_has(EDIT("command", "str_replace", "path", p, "old_str", block, "new_str",
                    "def new():\n    print(\"World\")"),
               "Multiple occurrences of old_str `def example():\n    print(\"Hello\")\n    return "
               "True` in lines [1, 7].");
    free(text);
    free(p);
}

static void
test_str_replace_reports_missing_text(void **state)
{
    (void)state;
    put("test.txt", "Line 1\nLine 2");
    char *p = P("test.txt");
    expect_eq(EDIT("command", "str_replace", "path", p, "old_str", "Non-existent Line", "new_str",
                   "New Line"),
              "ERROR:\nNo replacement was performed, old_str `Non-existent Line` did not appear "
              "verbatim in %s.",
              p);
    free(p);
}

static void
test_str_replace_empty_old_str_lists_every_line(void **state)
{
    (void)state;
    put("test.txt", "Line 1\nLine 2\nLine 3");
    char *p = P("test.txt");
    expect_eq(EDIT("command", "str_replace", "path", p, "old_str", "", "new_str", "New string"),
              "ERROR:\nNo replacement was performed. Multiple occurrences of old_str `` in lines "
              "[1, 2, 3]. "
              "Please ensure it is unique.");
    /* written by the write action, the file gains a final newline: four lines, as upstream's
     * runtime test */
    WRITE("path", "test.txt", "content", "Line 1\nLine 2\nLine 3");
    assert_has(EDIT("command", "str_replace", "path", p, "old_str", "", "new_str", "New string"),
               "in lines [1, 2, 3, 4].");
    free(p);
}

static void
test_str_replace_refuses_identical_strings(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    char *p = P("test.txt");
    expect_eq(
        EDIT("command", "str_replace", "path", p, "old_str", "test file", "new_str", "test file"),
        "ERROR:\nInvalid `new_str` parameter: test file. No replacement was performed. `new_str` "
        "and "
        "`old_str` must be different.");
    expect_eq(EDIT("command", "str_replace", "path", p, "new_str", "sample"),
              "ERROR:\nParameter `old_str` is required for command: str_replace.");
    free(p);
}

static void
test_str_replace_deletes_line_and_retries_stripped(void **state)
{
    (void)state;
    put("test.txt", "Line 1\nLine to remove\nLine 3");
    char *p = P("test.txt");
    const char *c =
        EDIT("command", "str_replace", "path", p, "old_str", "Line to remove\n", "new_str", "");
    assert_lacks(c, "Line to remove");
    char *t = get("test.txt");
    assert_string_equal(t, "Line 1\nLine 3");
    free(t);
    /* whitespace around old_str is dropped on a second attempt, and around new_str too */
    EDIT("command", "str_replace", "path", p, "old_str", "  Line 3\n\n", "new_str",
         " Third line\n");
    t = get("test.txt");
    assert_string_equal(t, "Line 1\nThird line");
    free(t);
    free(p);
}

static void
test_str_replace_snippet_on_large_file(void **state)
{
    (void)state;
    put("test.txt", "");
    char *p = P("test.txt");
    buf_t b = BUF_INIT;
    for (int i = 1; i <= 700; i++)
        buf_printf(&b, "Line %d\n", i);
    put("test.txt", b.data);
    buf_free(&b);
    /* the snippet starts at max(0, line - 4) + 1 and, as the lines keep their "\n", ends with
     * an empty numbered line */
    const char *c =
        EDIT("command", "str_replace", "path", p, "old_str", "Line 500", "new_str", "500 new");
    expect_eq(
        c,
        "The file %s has been edited. Here's the result of running `cat -n` on a snippet of %s:\n"
        "   497\tLine 497\n   498\tLine 498\n   499\tLine 499\n   500\t500 new\n   501\tLine 501\n"
        "   502\tLine 502\n   503\tLine 503\n   504\tLine 504\n   505\t\n"
        "Review the changes and make sure they are as expected. Edit the file again if necessary.",
        p, p);
    c = EDIT("command", "str_replace", "path", p, "old_str", "500 new\n", "new_str", "");
    assert_has(c, "   499\tLine 499\n   500\tLine 501\n");
    c = edit_insert(p, 499, "Inserted line at 500");
    assert_has(c, "   500\tInserted line at 500\n");
    free(p);
}

/* ---- insert ---- */

static void
test_insert_after_line(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    char *p = P("test.txt");
    expect_eq(
        edit_insert(p, 1, "Inserted line"),
        "The file %s has been edited. Here's the result of running `cat -n` on a snippet of the "
        "edited "
        "file:\n     1\tThis is a test file.\n     2\tInserted line\n     3\tThis file is for "
        "testing "
        "purposes.\nReview the changes and make sure they are as expected (correct indentation, no "
        "duplicate lines, etc). Edit the file again if necessary.",
        p);
    free(p);
}

static void
test_insert_at_top_with_unicode(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    char *p = P("test.txt");
    expect_eq(
        edit_insert(p, 0, "中文文本"),
        "The file %s has been edited. Here's the result of running `cat -n` on a snippet of the "
        "edited "
        "file:\n     1\t中文文本\n     2\tThis is a test file.\n     3\tThis file is for testing "
        "purposes.\nReview the changes and make sure they are as expected (correct indentation, no "
        "duplicate lines, etc). Edit the file again if necessary.",
        p);
    free(p);
}

static void
test_insert_empty_string_adds_blank_line(void **state)
{
    (void)state;
    put("test.txt", "Line 1\nLine 2");
    char *p = P("test.txt");
    const char *c = edit_insert(p, 1, "");
    assert_has(c, "1\tLine 1");
    assert_has(c, "2\t\n");
    assert_has(c, "3\tLine 2");
    char *t = get("test.txt");
    assert_string_equal(t, "Line 1\n\nLine 2");
    free(t);
    free(p);
}

static void
test_insert_refuses_line_out_of_range(void **state)
{
    (void)state;
    put("test.txt", "Line 1\nLine 2");
    char *p = P("test.txt");
    expect_eq(edit_insert(p, 10, "Invalid Insert"),
              "ERROR:\nInvalid `insert_line` parameter: 10. It should be within the range of "
              "allowed values: [0, 2]");
    expect_eq(edit_insert(p, -1, "x"), "ERROR:\nInvalid `insert_line` parameter: -1. It should be "
                                       "within the range of allowed values: [0, 2]");
    free(p);
}

static void
test_insert_missing_parameters(void **state)
{
    (void)state;
    put("test.txt", "Line 1\nLine 2");
    char *p = P("test.txt");
    expect_eq(EDIT("command", "insert", "path", p, "new_str", "Missing insert line"),
              "ERROR:\nParameter `insert_line` is required for command: insert.");
    json_object *a = args("command", "insert", "path", p, NULL);
    json_set_int(a, "insert_line", 1);
    expect_eq(edit_in(a), "ERROR:\nParameter `new_str` is required for command: insert.");
    free(p);
}

static void
test_insert_line_given_as_string(void **state)
{
    (void)state;
    put("test.txt", "Line 1\nLine 2");
    char *p = P("test.txt");
    assert_has(EDIT("command", "insert", "path", p, "insert_line", " 1 ", "new_str", "Line 1.5"),
               "     2\tLine 1.5\n");
    expect_eq(EDIT("command", "insert", "path", p, "insert_line", "abc", "new_str", "x"),
              "ERROR:\nInvalid insert_line value: 'abc'. Expected an integer.");
    assert_string_equal(json_get_str(json_get(last, "extras"), "diff", "?"), "");
    free(p);
}

static void
test_insert_at_end_without_final_newline_joins_lines(void **state)
{
    (void)state;
    /* upstream copies the last line as it is, without adding its missing "\n" */
    put("test.txt", "Line 1\nLine 2");
    char *p = P("test.txt");
    edit_insert(p, 2, "Line 3");
    char *t = get("test.txt");
    assert_string_equal(t, "Line 1\nLine 2Line 3\n");
    free(t);
    free(p);
}

/* ---- undo_edit ---- */

static void
test_undo_edit_restores_previous_text(void **state)
{
    (void)state;
    put("test.txt", "This is a test file.");
    char *p = P("test.txt");
    assert_has(EDIT("command", "str_replace", "path", p, "old_str", "test", "new_str", "sample"),
               "This is a sample file.");
    expect_eq(EDIT("command", "undo_edit", "path", p),
              "Last edit to %s undone successfully. Here's the result of running `cat -n` on %s:\n"
              "     1\tThis is a test file.\n",
              p, p);
    char *t = get("test.txt");
    assert_string_equal(t, "This is a test file.");
    free(t);
    free(p);
}

static void
test_undo_edit_steps_back_twice(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    char *p = P("test.txt");
    EDIT("command", "str_replace", "path", p, "old_str", "test file", "new_str", "sample file v1");
    EDIT("command", "str_replace", "path", p, "old_str", "sample file v1", "new_str",
         "sample file v2");
    assert_has(EDIT("command", "undo_edit", "path", p), "Last edit to");
    char *t = get("test.txt");
    assert_has(t, "sample file v1");
    free(t);
    EDIT("command", "undo_edit", "path", p);
    t = get("test.txt");
    assert_string_equal(t, TEST_TXT);
    free(t);
    free(p);
}

static void
test_undo_edit_without_history(void **state)
{
    (void)state;
    put("empty.txt", "");
    char *p = P("empty.txt");
    expect_eq(EDIT("command", "undo_edit", "path", p), "ERROR:\nNo edit history found for %s.", p);
    free(p);
}

static void
test_undo_history_keeps_ten_entries_and_create_adds_one(void **state)
{
    (void)state;
    char *p = P("h.txt");
    EDIT("command", "create", "path", p, "file_text", "v0");
    for (int i = 0; i < 11; i++) {
        char o[16], n[16];
        snprintf(o, sizeof o, "v%d", i);
        snprintf(n, sizeof n, "v%d", i + 1);
        EDIT("command", "str_replace", "path", p, "old_str", o, "new_str", n);
    }
    for (int i = 0; i < 10; i++)
        assert_has(EDIT("command", "undo_edit", "path", p), "undone successfully");
    char *t = get("h.txt");
    assert_string_equal(t, "v1"); /* the create entry and v0 were pushed out */
    free(t);
    expect_eq(EDIT("command", "undo_edit", "path", p), "ERROR:\nNo edit history found for %s.", p);
    free(p);

    /* create's own entry holds the created text: undo rewrites it unchanged */
    p = P("c.txt");
    EDIT("command", "create", "path", p, "file_text", "hello");
    expect_eq(EDIT("command", "undo_edit", "path", p),
              "Last edit to %s undone successfully. Here's the result of running `cat -n` on %s:\n "
              "    1\thello\n",
              p, p);
    free(p);
}

/* ---- paths and commands ---- */

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_create_writes_file),
        T(test_create_empty_then_view_shows_line_one),
        T(test_create_refuses_existing_file),
        T(test_create_without_file_text),
        T(test_create_in_missing_directory_reports_oserror),
        T(test_str_replace_shows_snippet),
        T(test_str_replace_multi_line_with_tabs),
        T(test_str_replace_refuses_two_matches),
        T(test_str_replace_multiline_matches_name_start_lines),
        T(test_str_replace_reports_missing_text),
        T(test_str_replace_empty_old_str_lists_every_line),
        T(test_str_replace_refuses_identical_strings),
        T(test_str_replace_deletes_line_and_retries_stripped),
        T(test_str_replace_snippet_on_large_file),
        T(test_insert_after_line),
        T(test_insert_at_top_with_unicode),
        T(test_insert_empty_string_adds_blank_line),
        T(test_insert_refuses_line_out_of_range),
        T(test_insert_missing_parameters),
        T(test_insert_line_given_as_string),
        T(test_insert_at_end_without_final_newline_joins_lines),
        T(test_undo_edit_restores_previous_text),
        T(test_undo_edit_steps_back_twice),
        T(test_undo_edit_without_history),
        T(test_undo_history_keeps_ten_entries_and_create_adds_one),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    json_object_put(last);
    return rc;
}
