/* test_file_actions.c — the OpenHands read/write/edit actions and the OHEditor core, on real files
 * in a fresh mkdtemp tree per test:  base/ws (the root, cwd and workspace)  base/outside/secret.
 * Expected texts are those of openhands-aci 0.3.2 tests/integration/test_oh_editor.py,
 * tests/integration/editor/ (basic operations, error handling) and OpenHands 0.62.0
 * tests/runtime/test_aci_edit.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define _XOPEN_SOURCE_EXTENDED 1
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "executor/file_actions.h"
#include "json_util.h"
#include "xalloc.h"

static char base[256], ws[300];
static path_roots_t roots;
static fa_ctx_t ctx;
static editor_t *ed;

static int
rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int
setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sp_fa.XXXXXX";
    if (!mkdtemp(tmpl) || !realpath(tmpl, base))
        return -1;
    snprintf(ws, sizeof ws, "%s/ws", base);
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/outside", base);
    if (mkdir(ws, 0755) < 0 || mkdir(out, 0755) < 0)
        return -1;
    memset(&roots, 0, sizeof roots);
    err_t err;
    if (path_roots_add(&roots, ws, &err) < 0)
        return -1;
    ctx.cwd = ws;
    ctx.workspace = ws;
    ctx.roots = &roots;
    ed = editor_new();
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    editor_free(ed);
    ed = NULL;
    return nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- helpers ---- */

static char *
P(const char *rel) /* absolute path in ws; caller frees */
{
    return xasprintf("%s/%s", ws, rel);
}

static void
put(const char *rel, const char *text)
{
    char *p = P(rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(p);
}

static char *
get(const char *rel)
{
    char *p = P(rel);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    buf_t b = BUF_INIT;
    size_t n;
    while ((n = fread(buf_reserve(&b, 4096), 1, 4096, f)) > 0)
        buf_advance(&b, n);
    fclose(f);
    free(p);
    return buf_steal(&b);
}

/* Builds args from key/value string pairs, NULL-terminated. */
static json_object *
args(const char *k, ...)
{
    json_object *o = json_object_new_object();
    va_list ap;
    va_start(ap, k);
    for (; k; k = va_arg(ap, const char *))
        json_set_str(o, k, va_arg(ap, const char *));
    va_end(ap);
    return o;
}

static json_object *last;

/* Returns obs's content; obs becomes `last`, which owns it until the next observation. */
static const char *
content(json_object *obs)
{
    if (obs != last)
        json_object_put(last);
    last = obs;
    return json_get_str(obs, "content", NULL);
}

static const char *
edit_in(json_object *a)
{
    json_object *o = fa_edit(ed, &ctx, a);
    json_object_put(a);
    return content(o);
}

#define EDIT(...) edit_in(args(__VA_ARGS__, NULL))

/* fa_read / fa_write on args built in place; the observation is kept in `last`. */
static json_object *
run_args(json_object *(*fn)(editor_t *, const fa_ctx_t *, json_object *), json_object *a)
{
    json_object *o = fn(ed, &ctx, a);
    json_object_put(a);
    content(o);
    return o;
}

#define READ(...)  run_args(fa_read, args(__VA_ARGS__, NULL))
#define WRITE(...) run_args(fa_write, args(__VA_ARGS__, NULL))

static const char *
edit_insert(const char *path, int line, const char *new_str)
{
    json_object *a = args("command", "insert", "path", path, "new_str", new_str, NULL);
    json_set_int(a, "insert_line", line);
    return edit_in(a);
}

static const char *
view_range(const char *path, const char *range_json)
{
    json_object *a = args("command", "view", "path", path, "impl_source", "oh_aci", NULL);
    json_set(a, "view_range", json_tokener_parse(range_json));
    json_object *o = fa_read(ed, &ctx, a);
    json_object_put(a);
    return content(o);
}

static void
assert_has(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("expected to find\n%s\nin\n%s", needle, hay);
}

static void
assert_lacks(const char *hay, const char *needle)
{
    if (strstr(hay, needle))
        fail_msg("did not expect\n%s\nin\n%s", needle, hay);
}

static void expect_eq(const char *got, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
expect_eq(const char *got, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *want = NULL;
    assert_true(vasprintf(&want, fmt, ap) >= 0);
    va_end(ap);
    assert_string_equal(got, want);
    free(want);
}

static const char *TEST_TXT = "This is a test file.\nThis file is for testing purposes.";

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

static void
test_relative_path_refused_with_suggestion(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    expect_eq(EDIT("command", "view", "path", "test.txt"),
              "ERROR:\nInvalid `path` parameter: test.txt. The path should be an absolute path, "
              "starting with "
              "`/`. Maybe you meant %s/test.txt?",
              ws);
    expect_eq(EDIT("command", "view", "path", "nope.txt"),
              "ERROR:\nInvalid `path` parameter: nope.txt. The path should be an absolute path, "
              "starting with `/`.");
    ctx.workspace = NULL;
    expect_eq(EDIT("command", "view", "path", "test.txt"),
              "ERROR:\nInvalid `path` parameter: test.txt. The path should be an absolute path, "
              "starting with `/`.");
}

static void
test_missing_path_and_directory_errors(void **state)
{
    (void)state;
    char *p = P("nonexistent.txt");
    expect_eq(EDIT("command", "view", "path", p),
              "ERROR:\nInvalid `path` parameter: %s. The path %s does not exist. Please provide a "
              "valid path.",
              p, p);
    expect_eq(EDIT("command", "str_replace", "path", ws, "old_str", "something", "new_str", "new"),
              "ERROR:\nInvalid `path` parameter: %s. The path %s is a directory and only the "
              "`view` command can "
              "be used on directories.",
              ws, ws);
    put("doc.pdf", "%PDF-1.4 text");
    char *pdf = P("doc.pdf");
    expect_eq(EDIT("command", "str_replace", "path", pdf, "old_str", "a", "new_str", "b"),
              "ERROR:\nInvalid `path` parameter: %s. The path %s points to a binary file (.pdf) "
              "and only the "
              "`view` command can be used on supported binary files.",
              pdf, pdf);
    put("t.txt", "x");
    char *t = P("t.txt");
    expect_eq(EDIT("command", "write", "path", t),
              "ERROR:\nUnrecognized command write. The allowed commands for the oh_editor tool "
              "are: view, "
              "create, str_replace, insert, undo_edit");
    free(p), free(pdf), free(t);
}

static void
test_path_outside_roots_is_an_error_observation(void **state)
{
    (void)state;
    char *secret = xasprintf("%s/outside/secret", base);
    FILE *f = fopen(secret, "w");
    fputs("s", f);
    fclose(f);
    json_object *o = run_args(fa_edit, args("command", "view", "path", secret, NULL));
    expect_eq(content(o),
              "You're not allowed to access this path: %s. You can only access paths inside the "
              "workspace.",
              secret);
    assert_string_equal(json_get_str(o, "observation", ""), "error");
    o = READ("path", "../outside/secret");
    assert_string_equal(json_get_str(o, "observation", ""), "error");
    assert_has(content(o), "You're not allowed to access this path: ../outside/secret.");
    o = WRITE("path", secret, "content", "x");
    assert_string_equal(json_get_str(o, "observation", ""), "error");
    content(o);
    free(secret);
}

static void
test_binary_files(void **state)
{
    (void)state;
    char *p = P("blob.bin");
    FILE *f = fopen(p, "wb");
    for (int i = 0; i < 512; i++)
        fputc(i % 7 == 0 ? 0 : i & 0xff, f);
    fclose(f);
    json_object *o = READ("path", p, "impl_source", "oh_aci");
    assert_string_equal(content(o), "ERROR_BINARY_FILE");
    assert_string_equal(json_get_str(o, "observation", ""), "error");
    assert_string_equal(json_get_str(o, "message", ""), "ERROR_BINARY_FILE");
    expect_eq(EDIT("command", "str_replace", "path", p, "old_str", "a", "new_str", "b"),
              "ERROR:\nFile validation failed for %s: File appears to be binary and this file type "
              "cannot be read "
              "or edited by this tool.",
              p);
    assert_true(fa_is_binary(p));
    free(p);
    put("utf8.txt", "héllo wörld ünïcode ✓ text\n");
    p = P("utf8.txt");
    assert_false(fa_is_binary(p));
    free(p);
}

/* ---- the read and write actions ---- */

static void
test_write_appends_newline_and_returns_absolute_path(void **state)
{
    (void)state;
    json_object *o = WRITE("path", "hello.sh", "content", "echo \"Hello, World!\"");
    assert_string_equal(content(o), "");
    char *p = P("hello.sh");
    assert_string_equal(json_get_str(o, "observation", ""), "write");
    assert_string_equal(json_get_str(json_get(o, "extras"), "path", ""), p);
    expect_eq(json_get_str(o, "message", ""), "I wrote to the file %s.", p);
    assert_int_equal(json_object_object_length(json_get(o, "extras")), 1);
    char *t = get("hello.sh");
    assert_string_equal(t, "echo \"Hello, World!\"\n");
    free(t);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0664);

    WRITE("path", "a.txt", "content", "a\n");
    t = get("a.txt");
    assert_string_equal(t, "a\n\n");
    free(t);
    free(p);
}

static void
test_write_creates_parents_and_keeps_mode(void **state)
{
    (void)state;
    WRITE("path", ".openhands/setup.sh", "content", "#!/bin/bash\necho hi\n");
    char *t = get(".openhands/setup.sh");
    assert_string_equal(t, "#!/bin/bash\necho hi\n\n");
    free(t);
    char *p = P(".openhands/setup.sh");
    chmod(p, 0751);
    WRITE("path", p, "content", "x");
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0751);
    t = get(".openhands/setup.sh");
    assert_string_equal(t, "x\n");
    free(t);
    json_object *o = WRITE("path", ".openhands", "content", "x");
    expect_eq(content(o), "Path is a directory: %s/.openhands. You can only write to files", ws);
    free(p);
}

static void
test_write_splices_lines_by_start_and_end(void **state)
{
    (void)state;
    put("s.txt", "l0\nl1\nl2\nl3\nl4\n");
    json_object *a = args("path", "s.txt", "content", "X\nY", NULL);
    json_set_int(a, "start", 1);
    json_set_int(a, "end", 3);
    json_object_put(fa_write(ed, &ctx, a));
    json_object_put(a);
    char *t = get("s.txt");
    assert_string_equal(t, "l0\nX\nY\nl3\nl4\n");
    free(t);
}

static void
test_read_plain_and_errors(void **state)
{
    (void)state;
    json_object *o = READ("path", "hello.sh");
    expect_eq(content(o), "File not found: %s/hello.sh. Your current working directory is %s.", ws,
              ws);
    assert_string_equal(json_get_str(json_get(o, "extras"), "error_id", "?"), "");
    put("hello.sh", "echo \"Hello, World!\"\n");
    o = READ("path", "hello.sh");
    assert_string_equal(content(o), "echo \"Hello, World!\"\n");
    char *p = P("hello.sh");
    assert_string_equal(json_get_str(o, "observation", ""), "read");
    expect_eq(json_get_str(o, "message", ""), "I read the file %s.", p);
    assert_string_equal(json_get_str(json_get(o, "extras"), "path", ""), p);
    assert_string_equal(json_get_str(json_get(o, "extras"), "impl_source", ""), "default");
    o = READ("path", ws);
    expect_eq(content(o), "Path is a directory: %s. You can only read files", ws);
    free(p);
}

static void
test_read_start_end_follow_read_lines(void **state)
{
    (void)state;
    put("r.txt", "a\nb\nc\nd\n");
    json_object *a = args("path", "r.txt", NULL);
    json_set_int(a, "start", 1);
    json_set_int(a, "end", 3);
    assert_string_equal(content(fa_read(ed, &ctx, a)), "b\nc\n");
    json_set_int(a, "start", 2);
    json_set_int(a, "end", -1);
    assert_string_equal(content(fa_read(ed, &ctx, a)), "c\nd\n");
    json_set_int(a, "start", 3);
    json_set_int(a, "end", 3); /* begin = min(start, n-2), end = max(begin+1, end) */
    assert_string_equal(content(fa_read(ed, &ctx, a)), "c\n");
    json_object_put(a);
}

static void
test_read_image_as_data_url(void **state)
{
    (void)state;
    put("pic.png", "hello");
    json_object *o = READ("path", "pic.png");
    assert_string_equal(content(o), "data:image/png;base64,aGVsbG8=");
}

static void
test_edit_observation_has_upstream_fields(void **state)
{
    (void)state;
    put("test.txt", TEST_TXT);
    char *p = P("test.txt");
    json_object *o = run_args(fa_edit, args("command", "view", "path", p, NULL));
    content(o);
    assert_int_equal(json_object_object_length(o), 4);
    expect_eq(json_get_str(o, "message", ""), "I edited the file %s.", p);
    assert_string_equal(json_get_str(o, "observation", ""), "edit");
    json_object *ex = json_get(o, "extras");
    const char *keys[] = {"path",        "prev_exist", "old_content", "new_content",
                          "impl_source", "diff",       "_diff_cache"};
    assert_int_equal(json_object_object_length(ex), 7);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        assert_true(json_object_object_get_ex(ex, keys[i], NULL));
    assert_false(json_get_bool(ex, "prev_exist", true));
    assert_true(json_object_is_type(json_get(ex, "old_content"), json_type_null));
    assert_string_equal(json_get_str(ex, "diff", "?"), "");
    free(p);
}

static void
test_unified_diff_matches_difflib(void **state)
{
    (void)state;
    char *d = fa_unified_diff("a\nb\nc\nd", 7, "a\nB\nc\nd\ne  ", 11, "f");
    assert_string_equal(d, "--- f\n+++ f\n@@ -2 +2 @@\n-b\n+B\n@@ -4,0 +5 @@\n+e");
    free(d);
    d = fa_unified_diff("x\ny\nz", 5, "z", 1, "f");
    assert_string_equal(d, "--- f\n+++ f\n@@ -1,2 +0,0 @@\n-x\n-y");
    free(d);
    d = fa_unified_diff("same", 4, "same", 4, "f");
    assert_string_equal(d, "");
    free(d);
}

static void
test_crlf_file_is_read_with_universal_newlines(void **state)
{
    (void)state;
    put("w.txt", "one\r\ntwo\r\n");
    char *p = P("w.txt");
    expect_eq(EDIT("command", "view", "path", p),
              "Here's the result of running `cat -n` on %s:\n     1\tone\n     2\ttwo\n     3\t\n",
              p);
    EDIT("command", "str_replace", "path", p, "old_str", "two", "new_str", "2");
    char *t = get("w.txt");
    assert_string_equal(t, "one\n2\n");
    free(t);
    free(p);
}

static void
test_plain_read_of_crlf_file_gives_single_newlines(void **state)
{
    (void)state;
    put("c.txt", "one\r\ntwo\rthree\n");
    json_object *a = args("path", "c.txt", NULL);
    assert_string_equal(content(fa_read(ed, &ctx, a)), "one\ntwo\nthree\n");
    json_object_put(a);
}

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
        T(test_relative_path_refused_with_suggestion),
        T(test_missing_path_and_directory_errors),
        T(test_path_outside_roots_is_an_error_observation),
        T(test_binary_files),
        T(test_write_appends_newline_and_returns_absolute_path),
        T(test_write_creates_parents_and_keeps_mode),
        T(test_write_splices_lines_by_start_and_end),
        T(test_read_plain_and_errors),
        T(test_read_start_end_follow_read_lines),
        T(test_read_image_as_data_url),
        T(test_edit_observation_has_upstream_fields),
        T(test_unified_diff_matches_difflib),
        T(test_crlf_file_is_read_with_universal_newlines),
        T(test_plain_read_of_crlf_file_gives_single_newlines),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    json_object_put(last);
    return rc;
}
