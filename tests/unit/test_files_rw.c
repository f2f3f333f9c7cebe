/* test_files_rw.c — file.read, file.write and atomic_file_* on real files (fixture:
 * files_fixture.h). The other ops: test_files.c. */
#include "files_fixture.h"

/* ---- read ---- */

static json_object *
read_ok(const char *extra)
{
    json_object *r = run(files_read, "{\"path\": \"t.txt\"%s}", extra);
    if (!r)
        fail_msg("read failed: %s", err.msg);
    return r;
}

static void
expect_read(json_object *r, const char *content, int total, int start, int end, bool truncated)
{
    assert_string_equal(str(r, "content"), content);
    assert_int_equal(json_get_int(r, "total_lines", -9), total);
    assert_int_equal(json_get_int(r, "start_line", -9), start);
    assert_int_equal(json_get_int(r, "end_line", -9), end);
    assert_int_equal(json_get_bool(r, "truncated", !truncated), truncated);
    json_object_put(r);
}

static void
test_read_whole_file_and_ranges(void **state)
{
    (void)state;
    put_str("t.txt", "one\ntwo\nthree\nfour\nfive\n");
    json_object *r = read_ok("");
    assert_string_equal(str(r, "path"), at("t.txt"));
    expect_read(r, "one\ntwo\nthree\nfour\nfive\n", 5, 1, 5, false);
    expect_read(read_ok(", \"start_line\": 2, \"end_line\": 3"), "two\nthree\n", 5, 2, 3, false);
    expect_read(read_ok(", \"start_line\": 4, \"end_line\": -1"), "four\nfive\n", 5, 4, 5, false);
    expect_read(read_ok(", \"start_line\": 5, \"end_line\": 99"), "five\n", 5, 5, 5, false);
    expect_read(read_ok(", \"start_line\": 3, \"end_line\": 3"), "three\n", 5, 3, 3, false);
    put_str("t.txt", "a\nb");
    expect_read(read_ok(""), "a\nb", 2, 1, 2, false);
    expect_read(read_ok(", \"start_line\": 2"), "b", 2, 2, 2, false);
    put_str("t.txt", "");
    expect_read(read_ok(""), "", 0, 1, 0, false);
    put_str("t.txt", "\n\n");
    expect_read(read_ok(", \"start_line\": 2"), "\n", 2, 2, 2, false);
}

static void
test_read_max_bytes_cuts_at_lines_then_characters(void **state)
{
    (void)state;
    put_str("t.txt", "aaa\nbbb\nccc\n");
    expect_read(read_ok(", \"max_bytes\": 9"), "aaa\nbbb\n", 3, 1, 2, true);
    expect_read(read_ok(", \"max_bytes\": 8"), "aaa\nbbb\n", 3, 1, 2, true);
    expect_read(read_ok(", \"max_bytes\": 12"), "aaa\nbbb\nccc\n", 3, 1, 3, false);
    expect_read(read_ok(", \"start_line\": 2, \"max_bytes\": 5"), "bbb\n", 3, 2, 2, true);
    /* A first line longer than max_bytes is cut inside, never inside a character. */
    put_str("t.txt", "abcdef\nx\n");
    expect_read(read_ok(", \"max_bytes\": 3"), "abc", 2, 1, 1, true);
    put_str("t.txt", "\xc3\xa9\xc3\xa9\xc3\xa9\n");
    expect_read(read_ok(", \"max_bytes\": 3"), "\xc3\xa9", 1, 1, 1, true);
    put_str("t.txt", "\xe2\x82\xac\xe2\x82\xac\n");
    expect_read(read_ok(", \"max_bytes\": 5"), "\xe2\x82\xac", 1, 1, 1, true);
}

static void
test_read_large_file_counts_every_line(void **state)
{
    (void)state;
    char line[64];
    FILE *f = fopen(at("t.txt"), "w");
    assert_non_null(f);
    for (int i = 1; i <= 50000; i++)
        fprintf(f, "line %d\n", i);
    fclose(f);
    json_object *r = read_ok(", \"start_line\": 40000, \"end_line\": 40001");
    expect_read(r, "line 40000\nline 40001\n", 50000, 40000, 40001, false);
    r = read_ok(", \"start_line\": 49999, \"max_bytes\": 100");
    snprintf(line, sizeof line, "line 49999\nline 50000\n");
    expect_read(r, line, 50000, 49999, 50000, false);
}

static void
test_read_refuses_binary(void **state)
{
    (void)state;
    put("t.txt", "ab\0cd\n", 6);
    FAILS(EINVAL, files_read, "{\"path\": \"t.txt\"}");
    assert_non_null(strstr(err.msg, "binary file, use file.download"));
    put_str("t.txt", "ok\n\xff\xfe\n");
    FAILS(EINVAL, files_read, "{\"path\": \"t.txt\"}");
    assert_non_null(strstr(err.msg, "binary file"));
    /* Only the returned lines are checked. */
    expect_read(read_ok(", \"end_line\": 1"), "ok\n", 2, 1, 1, false);
    put_str("t.txt", "\xc0\xaf\n"); /* overlong "/" */
    FAILS(EINVAL, files_read, "{\"path\": \"t.txt\"}");
    put_str("t.txt", "\xed\xa0\x80\n"); /* surrogate */
    FAILS(EINVAL, files_read, "{\"path\": \"t.txt\"}");
}

static void
test_read_errors(void **state)
{
    (void)state;
    put_str("t.txt", "a\nb\n");
    FAILS(EINVAL, files_read, "{\"path\": \"t.txt\", \"start_line\": 4}");
    assert_non_null(strstr(err.msg, "past the end"));
    FAILS(ERR_BAD_REQ, files_read, "{\"path\": \"t.txt\", \"start_line\": 0}");
    FAILS(ERR_BAD_REQ, files_read, "{\"path\": \"t.txt\", \"start_line\": 2, \"end_line\": 1}");
    FAILS(ERR_BAD_REQ, files_read, "{\"path\": \"t.txt\", \"end_line\": -2}");
    FAILS(ERR_BAD_REQ, files_read, "{\"path\": \"t.txt\", \"start_line\": \"1\"}");
    FAILS(ERR_BAD_REQ, files_read, "{\"path\": \"t.txt\", \"max_bytes\": 0}");
    FAILS(ERR_BAD_REQ, files_read, "{\"path\": \"t.txt\", \"max_bytes\": 999999999}");
    FAILS(ENOENT, files_read, "{\"path\": \"missing\"}");
    FAILS(EISDIR, files_read, "{\"path\": \".\"}");
    FAILS(ERR_ESCAPE, files_read, "{\"path\": \"/dev/null\"}");
    char secret[PATH_MAX];
    snprintf(secret, sizeof secret, "%s/secret", outside);
    put_str(secret, "s\n");
    assert_int_equal(symlink(secret, at("s")), 0);
    FAILS(ERR_ESCAPE, files_read, "{\"path\": \"s\"}");
    assert_int_equal(symlink("t.txt", at("in")), 0);
    json_object *r = run(files_read, "{\"path\": \"in\"}");
    assert_non_null(r);
    assert_string_equal(str(r, "path"), at("t.txt"));
    json_object_put(r);
}

/* ---- write ---- */

static void
test_write_creates_file_and_parents(void **state)
{
    (void)state;
    json_object *r = run(files_write, "{\"path\": \"new/dir/f.txt\", \"content\": \"hi\\n\"}");
    assert_non_null(r);
    assert_string_equal(str(r, "path"), at("new/dir/f.txt"));
    assert_int_equal(json_get_int(r, "size", -1), 3);
    json_object_put(r);
    assert_string_equal(get("new/dir/f.txt", NULL), "hi\n");
    assert_int_equal(mode_of("new/dir/f.txt"), 0644);
    assert_int_equal(mode_of("new/dir") & ~0755, 0); /* 0755 less the umask */
    FAILS(ENOENT, files_write, "{\"path\": \"other/f\", \"content\": \"x\", \"parents\": false}");
    assert_false(exists("other"));
    OK(files_write, "{\"path\": \"empty\", \"content\": \"\"}");
    assert_string_equal(get("empty", NULL), "");
}

static void
test_write_is_atomic_and_keeps_mode(void **state)
{
    (void)state;
    put_str("f.sh", "old content that is longer\n");
    assert_int_equal(chmod(at("f.sh"), 0751), 0);
    OK(files_write, "{\"path\": \"f.sh\", \"content\": \"new\\n\"}");
    assert_string_equal(get("f.sh", NULL), "new\n");
    assert_int_equal(mode_of("f.sh"), 0751);
    /* The temp file is gone: only f.sh is left. */
    json_object *r = run(files_list, "{\"path\": \".\"}");
    assert_int_equal(json_object_array_length(json_get(r, "entries")), 1);
    json_object_put(r);
    /* An explicit mode wins, for new and existing files alike. */
    OK(files_write, "{\"path\": \"f.sh\", \"content\": \"x\", \"mode\": \"0600\"}");
    assert_int_equal(mode_of("f.sh"), 0600);
    OK(files_write, "{\"path\": \"g\", \"content\": \"x\", \"mode\": \"755\"}");
    assert_int_equal(mode_of("g"), 0755);
}

static void
test_write_keeps_owner_when_permitted(void **state)
{
    (void)state;
    struct stat st;
    NEED(geteuid() == 0, "only root may give a file away");
    put_str("owned", "x");
    assert_int_equal(chown(at("owned"), 1234, 4321), 0);
    assert_int_equal(chmod(at("owned"), 02750), 0);
    OK(files_write, "{\"path\": \"owned\", \"content\": \"y\"}");
    assert_int_equal(lstat(at("owned"), &st), 0);
    assert_int_equal(st.st_uid, 1234);
    assert_int_equal(st.st_gid, 4321);
    assert_int_equal(st.st_mode & 07777, 02750); /* set-gid survives the chown */
}

static void
test_write_append(void **state)
{
    (void)state;
    put_str("log", "a\n");
    assert_int_equal(chmod(at("log"), 0604), 0);
    json_object *r =
        run(files_write, "{\"path\": \"log\", \"content\": \"b\\n\", \"append\": true}");
    assert_non_null(r);
    assert_int_equal(json_get_int(r, "size", -1), 4);
    json_object_put(r);
    assert_string_equal(get("log", NULL), "a\nb\n");
    assert_int_equal(mode_of("log"), 0604);
    OK(files_write, "{\"path\": \"fresh/log\", \"content\": \"1\", \"append\": true}");
    OK(files_write, "{\"path\": \"fresh/log\", \"content\": \"2\", \"append\": true}");
    assert_string_equal(get("fresh/log", NULL), "12");
}

static void
test_write_base64(void **state)
{
    (void)state;
    size_t n;
#define B64(s) "{\"path\": \"b\", \"content\": \"" s "\", \"encoding\": \"base64\"}"
    OK(files_write, B64("aGVsbG8gd29ybGQ="));
    assert_string_equal(get("b", NULL), "hello world");
    OK(files_write, "{\"path\": \"b\", \"content\": \"AAEC/w==\\n\", \"encoding\": \"base64\"}");
    const char *p = get("b", &n);
    assert_int_equal(n, 4);
    assert_memory_equal(p, "\0\1\2\377", 4);
    OK(files_write, "{\"path\": \"b\", \"content\": \"QQ\", \"encoding\": \"base64\"}");
    assert_string_equal(get("b", NULL), "A");
    FAILS(ERR_BAD_REQ, files_write, B64("@@@@"));
    FAILS(ERR_BAD_REQ, files_write, B64("Q"));
    FAILS(ERR_BAD_REQ, files_write, B64("QQ==QQ"));
    assert_string_equal(get("b", NULL), "A");
    /* utf-8 content may carry a NUL (JSON \u0000): written as is. */
    OK(files_write, "{\"path\": \"b\", \"content\": \"a\\u0000b\", \"encoding\": \"utf-8\"}");
    get("b", &n);
    assert_int_equal(n, 3);
}

static void
test_write_errors_and_symlinks(void **state)
{
    (void)state;
    FAILS(ERR_BAD_REQ, files_write, "{\"path\": \"x\"}");
    FAILS(ERR_BAD_REQ, files_write,
          "{\"path\": \"x\", \"content\": \"a\", \"encoding\": \"latin1\"}");
    FAILS(ERR_BAD_REQ, files_write, "{\"path\": \"x\", \"content\": \"a\", \"mode\": \"0999\"}");
    FAILS(ERR_BAD_REQ, files_write, "{\"path\": \"x\", \"content\": \"a\", \"mode\": \"17777\"}");
    FAILS(ERR_BAD_REQ, files_write, "{\"path\": \"x\", \"content\": \"a\", \"mode\": 420}");
    FAILS(ERR_BAD_REQ, files_write, "{\"path\": \"x\", \"content\": \"a\", \"append\": 1}");
    assert_int_equal(mkdir(at("d"), 0755), 0);
    FAILS(EISDIR, files_write, "{\"path\": \"d\", \"content\": \"a\"}");
    put_str("file", "f");
    FAILS(EEXIST, files_write, "{\"path\": \"file/sub\", \"content\": \"a\"}");
    /* Through a symlink inside the root: the target is replaced, the link stays. */
    put_str("target", "old");
    assert_int_equal(symlink("target", at("link")), 0);
    OK(files_write, "{\"path\": \"link\", \"content\": \"new\"}");
    assert_string_equal(get("target", NULL), "new");
    assert_int_equal(mode_of("link"), 0777);
    /* A symlink out of the root (existing or dangling) is refused, nothing written. */
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/victim", outside);
    put_str(p, "safe");
    assert_int_equal(symlink(p, at("out")), 0);
    FAILS(ERR_ESCAPE, files_write, "{\"path\": \"out\", \"content\": \"pwned\"}");
    assert_string_equal(get(p, NULL), "safe");
    snprintf(p, sizeof p, "%s/created", outside);
    assert_int_equal(symlink(p, at("dangling")), 0);
    FAILS(ERR_ESCAPE, files_write, "{\"path\": \"dangling\", \"content\": \"pwned\"}");
    assert_false(exists(p));
}

static void
test_atomic_file_abort_and_commit(void **state)
{
    (void)state;
    atomic_file_t af;
    err_t e = {0};
    put_str("a", "orig");
    assert_int_equal(atomic_file_open(&af, at("a"), 0600, &e), 0);
    assert_int_equal(atomic_file_write(&af, "xyz", 3, &e), 0);
    assert_true(exists(af.tmp));
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", af.tmp);
    atomic_file_abort(&af);
    assert_false(exists(tmp));
    assert_string_equal(get("a", NULL), "orig");
    atomic_file_abort(&af); /* twice is harmless */

    assert_int_equal(atomic_file_open(&af, at("b"), 0640, &e), 0);
    assert_int_equal(atomic_file_write(&af, "new", 3, &e), 0);
    assert_int_equal(atomic_file_commit(&af, &e), 0);
    assert_string_equal(get("b", NULL), "new");
    assert_int_equal(mode_of("b"), 0640);
    assert_int_equal(atomic_file_open(&af, at("nodir/c"), 0600, &e), -ENOENT);
    assert_non_null(strstr(e.msg, "parent directory"));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_read_whole_file_and_ranges),
        T(test_read_max_bytes_cuts_at_lines_then_characters),
        T(test_read_large_file_counts_every_line),
        T(test_read_refuses_binary),
        T(test_read_errors),
        T(test_write_creates_file_and_parents),
        T(test_write_is_atomic_and_keeps_mode),
        T(test_write_keeps_owner_when_permitted),
        T(test_write_append),
        T(test_write_base64),
        T(test_write_errors_and_symlinks),
        T(test_atomic_file_abort_and_commit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
