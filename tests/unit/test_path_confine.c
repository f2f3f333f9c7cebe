/* test_path_confine.c — path_resolve() against a real tree in a mkdtemp directory:
 *   base/root/            the sandbox root
 *     a/b/file
 *     link_in -> a        deep -> a/b        chain1 -> chain2 -> a
 *     link_out -> base/outside (absolute)    link_out_rel -> ../outside
 *     link_file_out -> base/outside/secret   dangling_out -> /nonexistent-sp/x
 *     dangling_in -> newfile                 loop1 <-> loop2
 *     abs_in -> base/root/a (absolute, inside)
 *   base/outside/secret
 *   base/rootlink -> root (a root given through a symlink) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/path_confine.h"

/* Small enough that every path built from them fits PATH_MAX (no truncation to check). */
static char base[512];
static char root[520];
static path_roots_t roots;

static void
mk(const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    assert_int_equal(mkdir(p, 0755), 0);
}

static void
ln(const char *target, const char *name)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/root/%s", base, name);
    assert_int_equal(symlink(target, p), 0);
}

static void
touch(const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static int
group_setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sp_path_XXXXXX";
    char t[PATH_MAX], real[PATH_MAX];
    if (!mkdtemp(tmpl) || !realpath(tmpl, real) || strlen(real) >= sizeof base)
        return -1;
    memcpy(base, real, strlen(real) + 1);
    mk("root");
    mk("root/a");
    mk("root/a/b");
    mk("outside");
    touch("root/a/b/file");
    touch("outside/secret");
    ln("a", "link_in");
    ln("a/b", "deep");
    ln("chain2", "chain1");
    ln("a", "chain2");
    snprintf(t, sizeof t, "%s/outside", base);
    ln(t, "link_out");
    ln("../outside", "link_out_rel");
    snprintf(t, sizeof t, "%s/outside/secret", base);
    ln(t, "link_file_out");
    ln("/nonexistent-sp/x", "dangling_out");
    ln("newfile", "dangling_in");
    ln("loop2", "loop1");
    ln("loop1", "loop2");
    snprintf(t, sizeof t, "%s/root/a", base);
    ln(t, "abs_in");
    snprintf(t, sizeof t, "%s/rootlink", base);
    if (symlink("root", t) < 0)
        return -1;
    snprintf(root, sizeof root, "%s/root", base);
    memset(&roots, 0, sizeof roots);
    return path_roots_add(&roots, t, NULL);
}

static int
rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int
group_teardown(void **state)
{
    (void)state;
    return nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Resolves path (relative to cwd_rel under root, or root) and returns the code. */
static int
resolve(const char *cwd_rel, const char *path, int flags, char out[PATH_MAX])
{
    char cwd[PATH_MAX];
    err_t err = {0};
    snprintf(cwd, sizeof cwd, "%s%s%s", root, cwd_rel ? "/" : "", cwd_rel ? cwd_rel : "");
    int rc = path_resolve(&roots, cwd, path, flags, out, &err);
    if (rc < 0) {
        assert_int_equal(err.code, -rc);
        assert_true(err.msg[0] != '\0');
    }
    return rc;
}

/* Asserts path resolves to root + want ("" for the root itself). */
static void
expect_ok(const char *cwd_rel, const char *path, int flags, const char *want)
{
    char out[PATH_MAX], exp[PATH_MAX];
    int rc = resolve(cwd_rel, path, flags, out);
    if (rc != 0)
        fail_msg("%s: expected success, got %d", path, rc);
    snprintf(exp, sizeof exp, "%s%s", root, want);
    assert_string_equal(out, exp);
}

static void
expect_rc(const char *cwd_rel, const char *path, int flags, int code)
{
    char out[PATH_MAX];
    int rc = resolve(cwd_rel, path, flags, out);
    if (rc != -code)
        fail_msg("%s: expected %d, got %d", path, -code, rc);
}

static void
test_root_is_canonicalised(void **state)
{
    (void)state;
    assert_int_equal(roots.n, 1);
    assert_string_equal(roots.root[0], root);
}

static void
test_relative_and_absolute_inside(void **state)
{
    (void)state;
    char abs[PATH_MAX];
    expect_ok(NULL, "a/b/file", PATH_FOLLOW, "/a/b/file");
    expect_ok("a", "b/file", PATH_FOLLOW, "/a/b/file");
    snprintf(abs, sizeof abs, "%s/a/b", root);
    expect_ok(NULL, abs, PATH_FOLLOW, "/a/b");
    expect_ok(NULL, ".", PATH_FOLLOW, "");
    expect_ok("a/b", "../..", PATH_FOLLOW, "");
}

static void
test_dots_and_slashes_are_normalised(void **state)
{
    (void)state;
    expect_ok(NULL, "a//b///file", PATH_FOLLOW, "/a/b/file");
    expect_ok(NULL, "./a/./b/.", PATH_FOLLOW, "/a/b");
    expect_ok(NULL, "a/b/", PATH_FOLLOW, "/a/b");
    expect_ok(NULL, "a/b/..//b/file", PATH_FOLLOW, "/a/b/file");
}

static void
test_dotdot_escapes_are_refused(void **state)
{
    (void)state;
    expect_rc(NULL, "../../etc/passwd", PATH_FOLLOW, ERR_ESCAPE);
    expect_rc("a/b", "../../../../../../etc/passwd", PATH_FOLLOW, ERR_ESCAPE);
    expect_rc(NULL, "..", PATH_FOLLOW, ERR_ESCAPE);
    expect_rc(NULL, "a/../../outside/secret", PATH_FOLLOW, ERR_ESCAPE);
}

static void
test_absolute_outside_is_refused(void **state)
{
    (void)state;
    char p[PATH_MAX];
    expect_rc(NULL, "/etc/passwd", PATH_FOLLOW, ERR_ESCAPE);
    expect_rc(NULL, "/", PATH_FOLLOW, ERR_ESCAPE);
    snprintf(p, sizeof p, "%s/outside/secret", base);
    expect_rc(NULL, p, PATH_NOFOLLOW, ERR_ESCAPE);
    /* A sibling sharing the root's name as a prefix is not inside it. */
    snprintf(p, sizeof p, "%s/rootlink", base);
    expect_rc(NULL, p, PATH_NOFOLLOW, ERR_ESCAPE);
}

static void
test_symlink_in_the_middle_to_outside_is_refused(void **state)
{
    (void)state;
    expect_rc(NULL, "link_out/secret", PATH_FOLLOW, ERR_ESCAPE);
    expect_rc(NULL, "link_out/secret", PATH_NOFOLLOW, ERR_ESCAPE);
    expect_rc(NULL, "link_out_rel/secret", PATH_NOFOLLOW, ERR_ESCAPE);
    expect_rc(NULL, "link_out/new/file", PATH_FOLLOW, ERR_ESCAPE);
}

static void
test_symlink_at_the_end_depends_on_flags(void **state)
{
    (void)state;
    expect_rc(NULL, "link_file_out", PATH_FOLLOW, ERR_ESCAPE);
    expect_ok(NULL, "link_file_out", PATH_NOFOLLOW, "/link_file_out");
    expect_rc(NULL, "link_out", PATH_FOLLOW, ERR_ESCAPE);
    expect_ok(NULL, "link_out", PATH_NOFOLLOW, "/link_out");
    /* A trailing slash names the same entry: the link itself is kept. */
    expect_ok(NULL, "link_out/", PATH_NOFOLLOW, "/link_out");
    expect_rc(NULL, "link_out/", PATH_FOLLOW, ERR_ESCAPE);
    /* "link/." is the directory the link points to. */
    expect_rc(NULL, "link_out/.", PATH_NOFOLLOW, ERR_ESCAPE);
}

static void
test_dangling_symlinks_resolve_to_their_target(void **state)
{
    (void)state;
    expect_rc(NULL, "dangling_out", PATH_FOLLOW, ERR_ESCAPE);
    expect_ok(NULL, "dangling_out", PATH_NOFOLLOW, "/dangling_out");
    expect_ok(NULL, "dangling_in", PATH_FOLLOW, "/newfile");
}

static void
test_symlinks_inside_are_followed(void **state)
{
    (void)state;
    expect_ok(NULL, "link_in/b/file", PATH_FOLLOW, "/a/b/file");
    expect_ok(NULL, "chain1/b/file", PATH_NOFOLLOW, "/a/b/file");
    expect_ok(NULL, "abs_in/b", PATH_FOLLOW, "/a/b");
    expect_ok(NULL, "link_in", PATH_FOLLOW, "/a");
    expect_ok("link_in", "b/file", PATH_FOLLOW, "/a/b/file"); /* cwd through a symlink */
}

static void
test_dotdot_after_symlink_uses_the_target(void **state)
{
    (void)state;
    /* As the kernel does: deep -> a/b, so deep/.. is a, not the root. */
    expect_ok(NULL, "deep/../new", PATH_FOLLOW, "/a/new");
    expect_ok(NULL, "deep/..", PATH_NOFOLLOW, "/a");
    /* Lexically link_out/.. would be the root; really it is base, outside. */
    expect_rc(NULL, "link_out/..", PATH_FOLLOW, ERR_ESCAPE);
    expect_rc(NULL, "link_out/../outside", PATH_FOLLOW, ERR_ESCAPE);
    /* ... and base/root/a is back inside. */
    expect_ok(NULL, "link_out/../root/a", PATH_FOLLOW, "/a");
    expect_rc(NULL, "deep/../../..", PATH_FOLLOW, ERR_ESCAPE);
}

static void
test_nonexistent_tail_is_lexical(void **state)
{
    (void)state;
    expect_ok(NULL, "new/dir/file", PATH_FOLLOW, "/new/dir/file");
    expect_ok(NULL, "new/dir/../../a", PATH_FOLLOW, "/a");
    expect_ok(NULL, "new/x/../..", PATH_FOLLOW, "");
    expect_ok(NULL, "a/b/file/x", PATH_FOLLOW, "/a/b/file/x"); /* ENOTDIR: missing too */
    expect_rc(NULL, "new/../../outside", PATH_FOLLOW, ERR_ESCAPE);
    expect_rc(NULL, "new/../../../../etc", PATH_FOLLOW, ERR_ESCAPE);
    /* After "..", components are looked up again: the symlink is seen and followed. */
    expect_rc(NULL, "new/../link_out/secret", PATH_FOLLOW, ERR_ESCAPE);
    expect_ok(NULL, "new/../link_in/b", PATH_FOLLOW, "/a/b");
}

static void
test_symlink_loop_is_eloop(void **state)
{
    (void)state;
    expect_rc(NULL, "loop1", PATH_FOLLOW, ELOOP);
    expect_rc(NULL, "loop1/x", PATH_NOFOLLOW, ELOOP);
    expect_ok(NULL, "loop1", PATH_NOFOLLOW, "/loop1");
}

static void
test_bad_input(void **state)
{
    (void)state;
    char out[PATH_MAX];
    err_t err = {0};
    expect_rc(NULL, "", PATH_FOLLOW, ERR_BAD_REQ);
    assert_int_equal(path_resolve(&roots, NULL, "a", PATH_FOLLOW, out, &err), -ERR_BAD_REQ);
    assert_int_equal(path_resolve(&roots, "rel", "a", PATH_FOLLOW, out, &err), -ERR_BAD_REQ);
    assert_int_equal(path_resolve(&roots, root, NULL, PATH_FOLLOW, out, NULL), -ERR_BAD_REQ);
    char *longp = malloc(PATH_MAX + 10);
    assert_non_null(longp);
    memset(longp, 'x', PATH_MAX + 9);
    longp[PATH_MAX + 9] = '\0';
    expect_rc(NULL, longp, PATH_FOLLOW, ENAMETOOLONG);
    /* Short missing components: under PATH_MAX alone, over it once joined to the cwd. */
    for (int i = 1; i < PATH_MAX - 10; i += 2)
        longp[i] = '/';
    longp[PATH_MAX - 10] = '\0';
    expect_rc(NULL, longp, PATH_FOLLOW, ENAMETOOLONG);
    free(longp);
}

static void
test_root_slash_allows_everything(void **state)
{
    (void)state;
    path_roots_t all = {0};
    char out[PATH_MAX];
    err_t err = {0};
    assert_int_equal(path_roots_add(&all, "/", &err), 0);
    assert_int_equal(path_resolve(&all, "/", "/", PATH_FOLLOW, out, &err), 0);
    assert_string_equal(out, "/");
    assert_int_equal(path_resolve(&all, "/", "/..", PATH_FOLLOW, out, &err), 0);
    assert_string_equal(out, "/");
    assert_int_equal(path_resolve(&all, "/", "../../nonexistent-sp", PATH_FOLLOW, out, &err), 0);
    assert_string_equal(out, "/nonexistent-sp");
    assert_int_equal(path_resolve(&all, "/", "//tmp/..//", PATH_FOLLOW, out, &err), 0);
    assert_string_equal(out, "/");
}

static void
test_several_roots(void **state)
{
    (void)state;
    path_roots_t two = roots;
    char out[PATH_MAX], p[PATH_MAX];
    err_t err = {0};
    snprintf(p, sizeof p, "%s/outside", base);
    assert_int_equal(path_roots_add(&two, p, &err), 0);
    assert_int_equal(path_resolve(&two, root, "link_out/secret", PATH_FOLLOW, out, &err), 0);
    snprintf(p, sizeof p, "%s/outside/secret", base);
    assert_string_equal(out, p);
    assert_int_equal(path_resolve(&two, root, "..", PATH_FOLLOW, out, &err), -ERR_ESCAPE);
}

static void
test_roots_add_errors(void **state)
{
    (void)state;
    path_roots_t r = {0};
    char p[PATH_MAX];
    err_t err = {0};
    assert_int_equal(path_roots_add(&r, "/nonexistent-sp", &err), -ENOENT);
    snprintf(p, sizeof p, "%s/outside/secret", base);
    assert_int_equal(path_roots_add(&r, p, &err), -ENOTDIR);
    for (int i = 0; i < PATH_ROOTS_MAX; i++)
        assert_int_equal(path_roots_add(&r, "/", &err), 0);
    assert_int_equal(path_roots_add(&r, "/", &err), -ERR_BAD_REQ);
}

static void
test_is_within(void **state)
{
    (void)state;
    assert_true(path_is_within("/a", "/a"));
    assert_true(path_is_within("/a/b", "/a"));
    assert_false(path_is_within("/ab", "/a"));
    assert_false(path_is_within("/", "/a"));
    assert_true(path_is_within("/anything", "/"));
    assert_true(path_is_within("/", "/"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_root_is_canonicalised),
        cmocka_unit_test(test_relative_and_absolute_inside),
        cmocka_unit_test(test_dots_and_slashes_are_normalised),
        cmocka_unit_test(test_dotdot_escapes_are_refused),
        cmocka_unit_test(test_absolute_outside_is_refused),
        cmocka_unit_test(test_symlink_in_the_middle_to_outside_is_refused),
        cmocka_unit_test(test_symlink_at_the_end_depends_on_flags),
        cmocka_unit_test(test_dangling_symlinks_resolve_to_their_target),
        cmocka_unit_test(test_symlinks_inside_are_followed),
        cmocka_unit_test(test_dotdot_after_symlink_uses_the_target),
        cmocka_unit_test(test_nonexistent_tail_is_lexical),
        cmocka_unit_test(test_symlink_loop_is_eloop),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_root_slash_allows_everything),
        cmocka_unit_test(test_several_roots),
        cmocka_unit_test(test_roots_add_errors),
        cmocka_unit_test(test_is_within),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
