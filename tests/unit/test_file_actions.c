/* test_file_actions.c — the OpenHands read/write/edit actions around the editor: paths,
 * confinement, binary files, write splicing, read ranges, observation fields, the unified diff.
 * Expected texts are those of openhands-aci 0.3.2 tests/integration/test_oh_editor.py,
 * tests/integration/editor/ and OpenHands 0.62.0 tests/runtime/test_aci_edit.py. */
#include "file_actions_fixture.h"

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

/* In a sandbox the root is "/" (the sandbox is the boundary, as upstream): paths outside the
 * workspace are acted on, and a missing one gets upstream's texts, not the workspace refusal. */
static void
test_sandbox_root_reaches_paths_outside_the_workspace(void **state)
{
    (void)state;
    path_roots_t all = {0};
    assert_int_equal(path_roots_add(&all, "/", NULL), 0);
    ctx.roots = &all;
    char *secret = xasprintf("%s/outside/secret", base);
    char *fresh = xasprintf("%s/outside/new.py", base);
    char *missing = xasprintf("%s/outside/none/x.py", base);
    FILE *f = fopen(secret, "w");
    fputs("s\n", f);
    fclose(f);
    json_object *o = READ("path", "../outside/secret");
    assert_string_equal(json_get_str(o, "observation", ""), "read");
    assert_string_equal(content(o), "s\n");
    expect_eq(EDIT("command", "create", "path", fresh, "file_text", "x"),
              "File created successfully at: %s", fresh);
    expect_eq(EDIT("command", "view", "path", missing),
              "ERROR:\nInvalid `path` parameter: %s. The path %s does not exist. Please provide a "
              "valid path.",
              missing, missing);
    o = READ("path", missing);
    assert_string_equal(json_get_str(o, "observation", ""), "error");
    expect_eq(content(o), "File not found: %s. Your current working directory is %s.", missing, ws);
    o = WRITE("path", secret, "content", "t");
    assert_string_equal(json_get_str(o, "observation", ""), "write");
    content(o);
    ctx.roots = &roots;
    free(secret), free(fresh), free(missing);
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
    /* Nothing but multi-byte characters: text when they are UTF-8 (emoji), binary when they
     * only look like it (the same emoji as CESU-8 surrogate pairs, which Python's decoder
     * refuses; before issue 16 this check let surrogates through and called it text). */
    buf_t emoji = BUF_INIT, cesu = BUF_INIT;
    for (int i = 0; i < 50; i++) {
        buf_puts(&emoji, "\xF0\x9F\x98\x80");
        buf_puts(&cesu, "\xED\xA0\xBD\xED\xB8\x80");
    }
    put("emoji.txt", emoji.data);
    put("cesu.txt", cesu.data);
    p = P("emoji.txt");
    assert_false(fa_is_binary(p));
    free(p);
    p = P("cesu.txt");
    assert_true(fa_is_binary(p));
    free(p);
    assert_string_equal(content(READ("path", "cesu.txt")), "ERROR_BINARY_FILE");
    buf_free(&emoji);
    buf_free(&cesu);
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
        T(test_relative_path_refused_with_suggestion),
        T(test_missing_path_and_directory_errors),
        T(test_path_outside_roots_is_an_error_observation),
        T(test_sandbox_root_reaches_paths_outside_the_workspace),
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
