/* test_editor_view.c — the OHEditor `view` command: files with `cat -n` numbering, view ranges,
 * directories to depth 2. Expected texts are those of openhands-aci 0.3.2
 * tests/integration/test_oh_editor.py, tests/integration/editor/ and OpenHands 0.62.0
 * tests/runtime/test_aci_edit.py. */
#include "file_actions_fixture.h"

/* ---- view ---- */

static void
test_view_file_numbers_lines_like_cat_n(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    char *p = P("test.txt");
    expect_eq(EDIT("command", "view", "path", p),
              "Here's the result of running `cat -n` on %s:\n     1\tThis is a test file.\n"
              "     2\tThis file is for testing purposes.\n",
              p);
    free(p);
}

static void
test_view_file_trailing_newline_shows_empty_numbered_line(void **state)
{
    (void)state;
    put("x.txt", "a\n\tb\n");
    char *p = P("x.txt");
    expect_eq(EDIT("command", "view", "path", p),
              "Here's the result of running `cat -n` on %s:\n     1\ta\n     2\t\tb\n     3\t\n",
              p);
    free(p);
}

static void
test_view_directory_lists_entries_with_slash(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    expect_eq(
        EDIT("command", "view", "path", ws),
        "Here's the files and directories up to 2 levels deep in %s, excluding hidden items:\n"
        "%s/\n%s/test.txt",
        ws, ws, ws);
}

static void
test_view_directory_counts_hidden_entries(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    char *d = P(".downloads");
    mkdir(d, 0755);
    free(d);
    expect_eq(
        EDIT("command", "view", "path", ws),
        "Here's the files and directories up to 2 levels deep in %s, excluding hidden items:\n"
        "%s/\n%s/test.txt\n\n1 hidden files/directories in this directory are excluded. You can "
        "use 'ls -la %s' to see them.",
        ws, ws, ws, ws);
}

static void
test_view_directory_depth_two_sorted_without_hidden(void **state)
{
    (void)state;
    char *d = P(".hidden_test_dir"), *p;
    mkdir(d, 0755);
    put(".hidden_test_dir/visible1.txt", "c");
    put(".hidden_test_dir/.hidden1", "h");
    mkdir(p = P(".hidden_test_dir/visible_dir"), 0755), free(p);
    put(".hidden_test_dir/visible_dir/visible2.txt", "c");
    put(".hidden_test_dir/visible_dir/.hidden2", "h");
    mkdir(p = P(".hidden_test_dir/visible_dir/deeper"), 0755), free(p);
    put(".hidden_test_dir/visible_dir/deeper/too_deep.txt", "c");
    mkdir(p = P(".hidden_test_dir/.hidden_dir"), 0755), free(p);
    put(".hidden_test_dir/.hidden_dir/visible3.txt", "c");
    mkdir(p = P(".hidden_test_dir/a-b"), 0755), free(p);
    expect_eq(
        EDIT("command", "view", "path", d),
        "Here's the files and directories up to 2 levels deep in %s, excluding hidden items:\n"
        "%s/\n%s/a-b/\n%s/visible1.txt\n%s/visible_dir/\n%s/visible_dir/deeper/\n"
        "%s/visible_dir/visible2.txt\n\n2 hidden files/directories in this directory are "
        "excluded. You can use 'ls -la %s' to see them.",
        d, d, d, d, d, d, d, d);
    free(d);
}

static void
test_view_symlinked_directory_follows_link(void **state)
{
    (void)state;
    char *src = P("source_dir"), *sub = P("source_dir/subdir"), *link = P("symlink_dir");
    mkdir(src, 0755);
    mkdir(sub, 0755);
    put("source_dir/file1.txt", "1");
    put("source_dir/subdir/file3.txt", "3");
    assert_int_equal(symlink(src, link), 0);
    expect_eq(
        EDIT("command", "view", "path", link),
        "Here's the files and directories up to 2 levels deep in %s, excluding hidden items:\n"
        "%s/\n%s/file1.txt\n%s/subdir/\n%s/subdir/file3.txt",
        link, link, link, link, link);
    free(src), free(sub), free(link);
}

static void
test_view_large_directory_truncated(void **state)
{
    (void)state;
    char *d = P("large_dir");
    mkdir(d, 0755);
    for (int i = 0; i < 1000; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "large_dir/file_%d.txt", i);
        put(rel, "content");
    }
    const char *c = EDIT("command", "view", "path", d);
    assert_has(c,
               "<response clipped><NOTE>Due to the max output limit, only part of this directory "
               "has been shown to you. You should use `ls -la` instead to view large directories "
               "incrementally.</NOTE>");
    free(d);
}

static void
test_view_directory_refuses_view_range(void **state)
{
    (void)state;
    expect_eq(view_range(ws, "[1, 2]"),
              "ERROR:\nInvalid `view_range` parameter: [1, 2]. The `view_range` parameter is not "
              "allowed when `path` points to a directory.");
}

static void
test_view_range_shows_requested_lines(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    char *p = P("test.txt");
    EDIT("command", "str_replace", "path", p, "old_str", TEST_TXT, "new_str", "");
    for (int i = 0; i < 200; i++) {
        char line[32];
        snprintf(line, sizeof line, "Line %d", i + 1);
        edit_insert(p, i, line);
    }
    const char *c = view_range(p, "[50, 100]");
    assert_has(c, "Here's the result of running `cat -n` on ");
    assert_lacks(c, "    49\tLine 49");
    assert_has(c, "    50\tLine 50\n");
    assert_has(c, "   100\tLine 100\n");
    assert_lacks(c, "101");
    /* FileReadObservation with oh_aci: path as given, impl_source oh_aci */
    assert_string_equal(json_get_str(json_get(last, "extras"), "impl_source", ""), "oh_aci");
    assert_string_equal(json_get_str(last, "observation", ""), "read");
    free(p);
}

static void
test_view_range_minus_one_reads_to_end(void **state)
{
    (void)state;
    put("f.txt", "line 1\nline 2\nline 3\n");
    char *p = P("f.txt");
    expect_eq(view_range(p, "[2, -1]"),
              "Here's the result of running `cat -n` on %s:\n     2\tline 2\n     3\tline 3\n", p);
    free(p);
}

static void
test_view_range_past_end_adds_note(void **state)
{
    (void)state;
    put("f.txt", "line 1\nline 2\nline 3\n");
    char *p = P("f.txt");
    expect_eq(view_range(p, "[1, 10]"),
              "NOTE: We only show up to 3 since there're only 3 lines in this file.\n"
              "Here's the result of running `cat -n` on %s:\n     1\tline 1\n     2\tline 2\n     "
              "3\tline 3\n",
              p);
    free(p);
}

static void
test_view_range_errors_use_python_lists(void **state)
{
    (void)state;
    put("f.txt", "line 1\nline 2\nline 3\n");
    char *p = P("f.txt");
    expect_eq(view_range(p, "[1]"),
              "ERROR:\nInvalid `view_range` parameter: [1]. It should be a list of two integers.");
    expect_eq(
        view_range(p, "[1, \"x\"]"),
        "ERROR:\nInvalid `view_range` parameter: [1, 'x']. It should be a list of two integers.");
    expect_eq(view_range(p, "[0, 2]"), "ERROR:\nInvalid `view_range` parameter: [0, 2]. Its first "
                                       "element `0` should be within the "
                                       "range of lines of the file: [1, 3].");
    expect_eq(view_range(p, "[3, 1]"), "ERROR:\nInvalid `view_range` parameter: [3, 1]. Its second "
                                       "element `1` should be greater than "
                                       "or equal to the first element `3`.");
    free(p);
}

static void
test_view_large_file_truncated_at_16000_chars(void **state)
{
    (void)state;
    buf_t b = BUF_INIT;
    for (int i = 0; i < 16000; i++)
        buf_puts(&b, "Line 1\n");
    put("large_test.txt", b.data);
    buf_free(&b);
    char *p = P("large_test.txt");
    const char *c = EDIT("command", "view", "path", p);
    assert_has(
        c,
        "Line <response clipped><NOTE>Due to the max output limit, only part of this file has "
        "been shown to you. You should retry this tool after you have searched inside the file "
        "with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>\n");
    /* 16,000 characters = 2285 lines of 7 + "Line " */
    assert_has(c, "  2285\tLine 1\n  2286\tLine <response clipped>");
    assert_lacks(c, "  2287\t");
    free(p);
}

/* ---- create ---- */

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_view_file_numbers_lines_like_cat_n),
        T(test_view_file_trailing_newline_shows_empty_numbered_line),
        T(test_view_directory_lists_entries_with_slash),
        T(test_view_directory_counts_hidden_entries),
        T(test_view_directory_depth_two_sorted_without_hidden),
        T(test_view_symlinked_directory_follows_link),
        T(test_view_large_directory_truncated),
        T(test_view_directory_refuses_view_range),
        T(test_view_range_shows_requested_lines),
        T(test_view_range_minus_one_reads_to_end),
        T(test_view_range_past_end_adds_note),
        T(test_view_range_errors_use_python_lists),
        T(test_view_large_file_truncated_at_16000_chars),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    json_object_put(last);
    return rc;
}
