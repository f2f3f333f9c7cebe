/* test_files.c — file.stat, file.list, file.mkdir, file.move, file.remove and OpenHands'
 * /list_files on real files (fixture: files_fixture.h). Read and write: test_files_rw.c. */
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>

#include "files_fixture.h"

/* ---- stat ---- */

static void
test_stat_reports_file_fields(void **state)
{
    (void)state;
    put_str("f.txt", "hello");
    chmod(at("f.txt"), 0640);
    json_object *r = run(files_stat, "{\"path\": \"f.txt\"}");
    assert_non_null(r);
    assert_string_equal(str(r, "path"), at("f.txt"));
    assert_string_equal(str(r, "type"), "file");
    assert_string_equal(str(r, "mode"), "0640");
    assert_int_equal(json_get_int(r, "size", -1), 5);
    assert_int_equal(json_get_int(r, "uid", -1), getuid());
    assert_int_equal(json_get_int(r, "gid", -1), getgid());
    assert_true(json_object_is_type(json_get(r, "mtime"), json_type_double));
    assert_true(json_get_double(r, "mtime", 0) > 1e9);
    assert_null(json_get(r, "target"));
    json_object_put(r);
}

static void
test_stat_does_not_follow_final_symlink(void **state)
{
    (void)state;
    assert_int_equal(symlink(outside, at("out")), 0);
    json_object *r = run(files_stat, "{\"path\": \"out\"}");
    assert_non_null(r);
    assert_string_equal(str(r, "type"), "symlink");
    assert_string_equal(str(r, "target"), outside);
    json_object_put(r);
    r = run(files_stat, "{\"path\": \".\"}");
    assert_string_equal(str(r, "type"), "directory");
    assert_string_equal(str(r, "path"), root);
    json_object_put(r);
}

static void
test_stat_errors(void **state)
{
    (void)state;
    FAILS(ENOENT, files_stat, "{\"path\": \"missing\"}");
    assert_non_null(strstr(err.msg, at("missing")));
    FAILS(ERR_ESCAPE, files_stat, "{\"path\": \"../outside\"}");
    assert_int_equal(symlink(outside, at("out")), 0);
    FAILS(ERR_ESCAPE, files_stat, "{\"path\": \"out/x\"}");
    FAILS(ERR_BAD_REQ, files_stat, "{}");
    FAILS(ERR_BAD_REQ, files_stat, "{\"path\": 3}");
    FAILS(ERR_BAD_REQ, files_stat, "{\"path\": \"\"}");
    FAILS(ERR_BAD_REQ, files_stat, "{\"path\": \"a\\u0000b\"}");
    FAILS(ERR_BAD_REQ, files_stat, "[1]");
}

/* ---- list ---- */

static void
test_list_sorted_with_types_and_hidden(void **state)
{
    (void)state;
    put_str("b", "bb");
    put_str("a", "a");
    put_str(".hidden", "");
    assert_int_equal(mkdir(at("d"), 0700), 0);
    assert_int_equal(symlink("a", at("l")), 0);
    json_object *r = run(files_list, "{\"path\": \".\"}");
    assert_non_null(r);
    assert_string_equal(str(r, "path"), root);
    json_object *e = json_get(r, "entries");
    const char *want[] = {".hidden", "a", "b", "d", "l"};
    const char *types[] = {"file", "file", "file", "directory", "symlink"};
    assert_int_equal(json_object_array_length(e), 5);
    for (size_t i = 0; i < 5; i++) {
        json_object *en = json_object_array_get_idx(e, i);
        assert_string_equal(str(en, "name"), want[i]);
        assert_string_equal(str(en, "type"), types[i]);
    }
    assert_int_equal(json_get_int(json_object_array_get_idx(e, 2), "size", -1), 2);
    assert_string_equal(str(json_object_array_get_idx(e, 3), "mode"), "0700");
    assert_string_equal(str(json_object_array_get_idx(e, 4), "target"), "a");
    assert_false(json_get_bool(r, "truncated", true));
    assert_int_equal(json_get_int(r, "total", -1), 5);
    json_object_put(r);

    r = run(files_list, "{\"path\": \"%s\", \"hidden\": false}", root);
    assert_int_equal(json_object_array_length(json_get(r, "entries")), 4);
    json_object_put(r);
}

/* A name that is not UTF-8 is listed as text (U+FFFD for each bad byte) with its bytes in
 * name_b64, and path_b64 takes it back: stat, move and remove act on that very file. */
static void
test_names_that_are_not_utf8_go_both_ways(void **state)
{
    (void)state;
    char want[PATH_MAX];
    assert_int_equal(mkdir(at("d\xFE"), 0755), 0);
    put_str("d\xFE/a\xFF"
            "b",
            "x");
    assert_int_equal(symlink("a\xFF"
                             "b",
                             at("d\xFE/l")),
                     0);
    json_object *r = run(files_list, "{\"path_b64\": \"ZP4=\"}"); /* d\xFE */
    assert_non_null(r);
    snprintf(want, sizeof want, "%s/d\xEF\xBF\xBD", root);
    assert_string_equal(str(r, "path"), want);
    json_object *e = json_get(r, "entries");
    assert_int_equal(json_object_array_length(e), 2);
    json_object *f = json_object_array_get_idx(e, 0), *l = json_object_array_get_idx(e, 1);
    assert_string_equal(str(f, "name"), "a\xEF\xBF\xBD"
                                        "b");
    assert_string_equal(str(f, "name_b64"), "Yf9i");
    assert_string_equal(str(l, "name"), "l");
    assert_null(json_get(l, "name_b64"));
    assert_string_equal(str(l, "target"), "a\xEF\xBF\xBD"
                                          "b");
    assert_string_equal(str(l, "target_b64"), "Yf9i");
    json_object_put(r);

    /* the exact bytes in, the same file out: path and path_b64 of the reply are its name */
    r = run(files_stat, "{\"path\": \"shown only\", \"path_b64\": \"ZP4vYf9i\"}");
    assert_non_null(r);
    assert_int_equal(json_get_int(r, "size", -1), 1);
    char raw[PATH_MAX];
    assert_true(json_get_name(r, "path", raw, sizeof raw, NULL) > 0);
    assert_string_equal(raw, at("d\xFE/a\xFF"
                                "b"));
    json_object_put(r);
    OK(files_move, "{\"from_b64\": \"ZP4vYf9i\", \"to\": \"plain\"}");
    assert_string_equal(get("plain", NULL), "x");
    OK(files_move, "{\"from\": \"plain\", \"to_b64\": \"ZP4vYf9i\"}");
    OK(files_remove, "{\"path_b64\": \"ZP4vYf9i\"}");
    assert_false(exists("d\xFE/a\xFF"
                        "b"));
    FAILS(ERR_BAD_REQ, files_stat, "{\"path_b64\": \"%%%%\"}");
    FAILS(ERR_BAD_REQ, files_stat, "{}");
}

static void
test_list_caps_at_10000_and_says_so(void **state)
{
    (void)state;
    char name[32];
    assert_int_equal(mkdir(at("big"), 0755), 0);
    for (int i = 0; i < 10005; i++) {
        snprintf(name, sizeof name, "big/f%05d", 10004 - i);
        int fd = open(at(name), O_WRONLY | O_CREAT, 0644);
        assert_true(fd >= 0);
        close(fd);
    }
    json_object *r = run(files_list, "{\"path\": \"big\"}");
    assert_non_null(r);
    json_object *e = json_get(r, "entries");
    assert_int_equal(json_object_array_length(e), 10000);
    assert_true(json_get_bool(r, "truncated", false));
    assert_int_equal(json_get_int(r, "total", -1), 10005);
    assert_string_equal(str(json_object_array_get_idx(e, 0), "name"), "f00000");
    assert_string_equal(str(json_object_array_get_idx(e, 9999), "name"), "f09999");
    json_object_put(r);
}

static void
test_list_errors(void **state)
{
    (void)state;
    put_str("f", "x");
    FAILS(ENOTDIR, files_list, "{\"path\": \"f\"}");
    FAILS(ENOENT, files_list, "{\"path\": \"nope\"}");
    FAILS(ERR_ESCAPE, files_list, "{\"path\": \"/\"}");
    FAILS(ERR_BAD_REQ, files_list, "{\"path\": \".\", \"hidden\": \"yes\"}");
}

/* ---- mkdir ---- */

static void
test_mkdir(void **state)
{
    (void)state;
    json_object *r = run(files_mkdir, "{\"path\": \"x/y/z\"}");
    assert_non_null(r);
    assert_string_equal(str(r, "path"), at("x/y/z"));
    assert_true(json_get_bool(r, "created", false));
    json_object_put(r);
    r = run(files_mkdir, "{\"path\": \"x/y/z\"}");
    assert_false(json_get_bool(r, "created", true));
    json_object_put(r);
    FAILS(EEXIST, files_mkdir, "{\"path\": \"x/y/z\", \"parents\": false}");
    FAILS(ENOENT, files_mkdir, "{\"path\": \"p/q\", \"parents\": false}");
    OK(files_mkdir, "{\"path\": \"x/solo\", \"parents\": false, \"mode\": \"0700\"}");
    assert_int_equal(mode_of("x/solo"), 0700);
    OK(files_mkdir, "{\"path\": \"m/n\", \"mode\": \"0777\"}");
    assert_int_equal(mode_of("m/n"), 0777); /* exact, whatever the umask */
    put_str("f", "");
    FAILS(EEXIST, files_mkdir, "{\"path\": \"f\"}");
    FAILS(EEXIST, files_mkdir, "{\"path\": \"f/g\"}");
    FAILS(ERR_ESCAPE, files_mkdir, "{\"path\": \"../evil\"}");
}

/* ---- move ---- */

static void
test_move(void **state)
{
    (void)state;
    put_str("a", "A");
    json_object *r = run(files_move, "{\"from\": \"a\", \"to\": \"b\"}");
    assert_non_null(r);
    assert_string_equal(str(r, "from"), at("a"));
    assert_string_equal(str(r, "to"), at("b"));
    json_object_put(r);
    assert_false(exists("a"));
    assert_string_equal(get("b", NULL), "A");
    put_str("c", "C");
    FAILS(EEXIST, files_move, "{\"from\": \"b\", \"to\": \"c\"}");
    assert_string_equal(get("b", NULL), "A");
    assert_string_equal(get("c", NULL), "C");
    OK(files_move, "{\"from\": \"b\", \"to\": \"c\", \"overwrite\": true}");
    assert_string_equal(get("c", NULL), "A");
    /* A symlink is moved as a link, even one pointing out of the root. */
    assert_int_equal(symlink(outside, at("l")), 0);
    OK(files_move, "{\"from\": \"l\", \"to\": \"l2\"}");
    assert_int_equal(mode_of("l2"), 0777);
    FAILS(ENOENT, files_move, "{\"from\": \"nope\", \"to\": \"x\"}");
    FAILS(EPERM, files_move, "{\"from\": \".\", \"to\": \"x\"}");
    assert_int_equal(mkdir(at("d"), 0755), 0);
    FAILS(EINVAL, files_move, "{\"from\": \"d\", \"to\": \"d/inner\"}");
    FAILS(ERR_ESCAPE, files_move, "{\"from\": \"c\", \"to\": \"../c\"}");
    FAILS(ERR_ESCAPE, files_move, "{\"from\": \"l2/x\", \"to\": \"y\"}");
    FAILS(ERR_BAD_REQ, files_move, "{\"from\": \"c\"}");
}

static void
test_move_across_filesystems_copies_files(void **state)
{
    (void)state;
    char shm[] = "/dev/shm/sp_files_XXXXXX", p[PATH_MAX];
    struct stat a, b;
    NEED(mkdtemp(shm) != NULL, "/dev/shm is not usable");
    if (stat(shm, &a) < 0 || stat(root, &b) < 0 || a.st_dev == b.st_dev) {
        rmdir(shm);
        NEED(false, "/dev/shm is not a different filesystem from the test directory");
    }
    path_roots_add(&roots, shm, NULL);
    put_str("f", "data");
    chmod(at("f"), 0610);
    snprintf(p, sizeof p, "%s/f", shm);
    OK(files_move, "{\"from\": \"f\", \"to\": \"%s\"}", p);
    assert_false(exists("f"));
    assert_string_equal(get(p, NULL), "data");
    assert_int_equal(mode_of(p), 0610);
    assert_int_equal(mkdir(at("d"), 0755), 0);
    snprintf(p, sizeof p, "%s/d", shm);
    FAILS(EXDEV, files_move, "{\"from\": \"d\", \"to\": \"%s\"}", p);
    nftw(shm, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* ---- remove ---- */

static void
test_remove(void **state)
{
    (void)state;
    put_str("f", "");
    json_object *r = run(files_remove, "{\"path\": \"f\"}");
    assert_non_null(r);
    assert_string_equal(str(r, "path"), at("f"));
    json_object_put(r);
    assert_false(exists("f"));
    assert_int_equal(mkdir(at("d"), 0755), 0);
    put_str("d/x", "");
    FAILS(ENOTEMPTY, files_remove, "{\"path\": \"d\"}");
    assert_non_null(strstr(err.msg, "recursive"));
    OK(files_remove, "{\"path\": \"d/x\"}");
    OK(files_remove, "{\"path\": \"d\"}");
    assert_false(exists("d"));
    FAILS(ENOENT, files_remove, "{\"path\": \"d\"}");
    FAILS(EPERM, files_remove, "{\"path\": \".\", \"recursive\": true}");
    FAILS(EPERM, files_remove, "{\"path\": \"%s/\", \"recursive\": true}", root);
    FAILS(ERR_ESCAPE, files_remove, "{\"path\": \"..\", \"recursive\": true}");
}

static void
test_remove_recursive_does_not_follow_symlinks(void **state)
{
    (void)state;
    char keep[PATH_MAX];
    snprintf(keep, sizeof keep, "%s/keep", outside);
    put_str(keep, "precious");
    assert_int_equal(mkdir(at("tree"), 0755), 0);
    assert_int_equal(mkdir(at("tree/sub"), 0755), 0);
    assert_int_equal(mkdir(at("tree/sub/deeper"), 0755), 0);
    put_str("tree/sub/deeper/f", "x");
    put_str("tree/.hidden", "x");
    assert_int_equal(symlink(outside, at("tree/out")), 0);
    assert_int_equal(symlink(outside, at("tree/sub/deeper/out2")), 0);
    assert_int_equal(symlink("nowhere", at("tree/dangling")), 0);
    OK(files_remove, "{\"path\": \"tree\", \"recursive\": true}");
    assert_false(exists("tree"));
    assert_string_equal(get(keep, NULL), "precious");
    /* A symlink to a directory is removed as a link, even written "lnk/"; the target stays. */
    assert_int_equal(symlink(outside, at("lnk")), 0);
    OK(files_remove, "{\"path\": \"lnk/\", \"recursive\": true}");
    assert_false(exists("lnk"));
    assert_string_equal(get(keep, NULL), "precious");
}

/* ---- OpenHands /list_files ---- */

/* Asserts the oh_list reply for the request is exactly the names in want (NULL-terminated). */
static void
expect_oh(const char *reqtext, const char *const *want)
{
    json_object *r = run(files_oh_list, "%s", reqtext);
    if (!r)
        fail_msg("oh_list failed: %s", err.msg);
    json_object *files = json_get(r, "files");
    assert_non_null(files);
    size_t n = 0;
    while (want[n])
        n++;
    if (json_object_array_length(files) != n)
        fail_msg("got %s", json_text(r, NULL));
    for (size_t i = 0; i < n; i++)
        assert_string_equal(json_object_get_string(json_object_array_get_idx(files, i)), want[i]);
    json_object_put(r);
}

static void
test_oh_list_dirs_first_case_insensitive(void **state)
{
    (void)state;
    put_str("b.txt", "");
    put_str("A.txt", "");
    put_str("c", "");
    put_str(".hidden", "");
    assert_int_equal(mkdir(at("Zdir"), 0755), 0);
    assert_int_equal(mkdir(at("adir"), 0755), 0);
    assert_int_equal(mkdir(at(".git"), 0755), 0);
    assert_int_equal(mkdir(at("a-b"), 0755), 0);
    assert_int_equal(symlink("adir", at("ldir")), 0); /* a link to a directory is one */
    assert_int_equal(symlink("c", at("lfile")), 0);
    assert_int_equal(symlink("missing", at("broken")), 0); /* os.path.exists: left out */
    const char *const want[] = {".git/", "a-b/",  "adir/", "ldir/", "Zdir/", ".hidden",
                                "A.txt", "b.txt", "c",     "lfile", NULL};
    expect_oh("{}", want);
    expect_oh("{\"path\": null}", want);
    expect_oh("{\"path\": \"\"}", want);
    expect_oh("{\"path\": \".\"}", want);
}

static void
test_oh_list_unicode_lowercase_order(void **state)
{
    (void)state;
    put_str("\xc3\x8a"
            "b",
            ""); /* "Êb": lowered "êb" (U+EA) sorts after "éa" (U+E9) */
    put_str("\xc3\xa9"
            "a",
            "");
    put_str("Zz", "");
    put_str("aa", "");
    const char *const want[] = {"aa", "Zz",
                                "\xc3\xa9"
                                "a",
                                "\xc3\x8a"
                                "b",
                                NULL};
    expect_oh("{}", want);
}

static void
test_oh_list_paths(void **state)
{
    (void)state;
    const char *const none[] = {NULL};
    const char *const sub[] = {"inner/", "f", NULL};
    assert_int_equal(mkdir(at("sub"), 0755), 0);
    assert_int_equal(mkdir(at("sub/inner"), 0755), 0);
    put_str("sub/f", "");
    expect_oh("{\"path\": \"sub\"}", sub);
    char text[PATH_MAX + 32];
    snprintf(text, sizeof text, "{\"path\": \"%s/sub/\"}", root);
    expect_oh(text, sub);
    expect_oh("{\"path\": \"missing\"}", none);
    expect_oh("{\"path\": \"sub/f\"}", none);
    expect_oh("{\"path\": \"sub/inner\"}", none);
    /* ctx.cwd is the initial working directory: relative paths resolve there. */
    char cwd[PATH_MAX];
    snprintf(cwd, sizeof cwd, "%s/sub", root);
    ctx.cwd = cwd;
    const char *const inner[] = {NULL};
    expect_oh("{\"path\": \"inner\"}", inner);
    expect_oh("{}", sub);
    ctx.cwd = root;
    FAILS(ERR_ESCAPE, files_oh_list, "{\"path\": \"/etc\"}");
    FAILS(ERR_BAD_REQ, files_oh_list, "{\"path\": 1}");
}

/* ---- details, depth, move with parents (what E2B's envd needs) ---- */

static void
test_stat_details_names_owner_and_resolves_links(void **state)
{
    (void)state;
    put_str("f.txt", "hello");
    assert_int_equal(mkdir(at("d"), 0750), 0);
    assert_int_equal(symlink("d", at("to_dir")), 0);
    assert_int_equal(symlink("f.txt", at("to_file")), 0);
    assert_int_equal(symlink("gone", at("dangling")), 0);
    struct passwd *pw = getpwuid(getuid());
    struct group *gr = getgrgid(getgid());
    char num[16];
    json_object *r = run(files_stat, "{\"path\": \"f.txt\", \"details\": true}");
    assert_non_null(r);
    assert_string_equal(str(r, "kind"), "file");
    if (pw) {
        assert_string_equal(str(r, "owner"), pw->pw_name);
    } else {
        snprintf(num, sizeof num, "%u", (unsigned)getuid());
        assert_string_equal(str(r, "owner"), num);
    }
    if (gr)
        assert_string_equal(str(r, "group"), gr->gr_name);
    struct stat st;
    assert_int_equal(lstat(at("f.txt"), &st), 0);
    assert_int_equal(json_get_int(r, "mtime_ns", 0),
                     (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
    assert_null(json_get(r, "resolved"));
    json_object_put(r);
    r = run(files_stat, "{\"path\": \"to_dir\", \"details\": true}");
    assert_string_equal(str(r, "type"), "symlink");
    assert_string_equal(str(r, "kind"), "symlink");
    assert_string_equal(str(r, "resolved"), at("d"));
    assert_string_equal(str(r, "resolved_kind"), "directory");
    assert_string_equal(str(r, "resolved_mode"), "0750");
    json_object_put(r);
    r = run(files_stat, "{\"path\": \"to_file\", \"details\": true}");
    assert_string_equal(str(r, "resolved_kind"), "file");
    json_object_put(r);
    r = run(files_stat, "{\"path\": \"dangling\", \"details\": true}");
    assert_string_equal(str(r, "kind"), "symlink");
    assert_null(json_get(r, "resolved"));
    assert_null(json_get(r, "resolved_kind"));
    json_object_put(r);
    /* without details the reply is as it always was */
    r = run(files_stat, "{\"path\": \"f.txt\"}");
    assert_null(json_get(r, "owner"));
    assert_null(json_get(r, "kind"));
    json_object_put(r);
}

static void
test_list_depth_walks_subdirectories_in_order_without_following_links(void **state)
{
    (void)state;
    assert_int_equal(mkdir(at("t"), 0755), 0);
    assert_int_equal(mkdir(at("t/b"), 0755), 0);
    assert_int_equal(mkdir(at("t/b/c"), 0755), 0);
    put_str("t/a.txt", "a");
    put_str("t/b/x", "x");
    put_str("t/b/c/deep", "d");
    assert_int_equal(symlink(at("t/b"), at("t/link")), 0);
    const char *const one[] = {"a.txt", "b", "link", NULL};
    const char *const two[] = {"a.txt", "b", "b/c", "b/x", "link", NULL};
    const char *const three[] = {"a.txt", "b", "b/c", "b/c/deep", "b/x", "link", NULL};
    const char *const *want[] = {one, two, three};
    for (int depth = 1; depth <= 3; depth++) {
        json_object *r = run(files_list, "{\"path\": \"t\", \"depth\": %d}", depth);
        assert_non_null(r);
        json_object *e = json_get(r, "entries");
        size_t n = 0;
        while (want[depth - 1][n])
            n++;
        assert_int_equal(json_object_array_length(e), n);
        for (size_t i = 0; i < n; i++)
            assert_string_equal(str(json_object_array_get_idx(e, i), "name"), want[depth - 1][i]);
        assert_false(json_get_bool(r, "truncated", true));
        assert_int_equal(json_get_int(r, "total", -1), (int64_t)n);
        json_object_put(r);
    }
    json_object *r = run(files_list, "{\"path\": \"t\", \"depth\": 2, \"details\": true}");
    json_object *link = json_object_array_get_idx(json_get(r, "entries"), 4);
    assert_string_equal(str(link, "name"), "link");
    assert_string_equal(str(link, "resolved_kind"), "directory");
    assert_non_null(json_get(link, "owner"));
    json_object_put(r);
    FAILS(ERR_BAD_REQ, files_list, "{\"path\": \"t\", \"depth\": 0}");
    FAILS(ERR_BAD_REQ, files_list, "{\"path\": \"t\", \"depth\": \"2\"}");
}

static void
test_move_with_parents_creates_the_destination_directory(void **state)
{
    (void)state;
    put_str("m.txt", "m");
    FAILS(ENOENT, files_move, "{\"from\": \"m.txt\", \"to\": \"new/dir/m.txt\"}");
    OK(files_move, "{\"from\": \"m.txt\", \"to\": \"new/dir/m.txt\", \"parents\": true}");
    assert_string_equal(get("new/dir/m.txt", NULL), "m");
    /* a missing source creates nothing */
    FAILS(ENOENT, files_move, "{\"from\": \"none\", \"to\": \"other/x\", \"parents\": true}");
    assert_false(exists("other"));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_stat_reports_file_fields),
        T(test_stat_does_not_follow_final_symlink),
        T(test_stat_errors),
        T(test_list_sorted_with_types_and_hidden),
        T(test_names_that_are_not_utf8_go_both_ways),
        T(test_list_caps_at_10000_and_says_so),
        T(test_list_errors),
        T(test_mkdir),
        T(test_move),
        T(test_move_across_filesystems_copies_files),
        T(test_remove),
        T(test_remove_recursive_does_not_follow_symlinks),
        T(test_oh_list_dirs_first_case_insensitive),
        T(test_oh_list_unicode_lowercase_order),
        T(test_oh_list_paths),
        T(test_stat_details_names_owner_and_resolves_links),
        T(test_list_depth_walks_subdirectories_in_order_without_following_links),
        T(test_move_with_parents_creates_the_destination_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
