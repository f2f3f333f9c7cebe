/* gw_test_sandbox_etc.c — a sandbox's /etc as one directory of copies
 * (gateway/sandbox/sandbox_etc.c), made from this host's real /etc: the named files' bytes and
 * modes, a named symlink followed, symlinks inside a named directory kept as they are, missing
 * names left out, the generated files, root's and not writable by others; the same version gives
 * the same directory, a changed generated file a new one, and the old one is left for the sandboxes
 * that bound it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox_etc.h"

static char state[] = "/tmp/sp-sandbox-etc-XXXXXX";

static int
setup(void **s)
{
    (void)s;
    assert_non_null(mkdtemp(state));
    return 0;
}

static int
teardown(void **s)
{
    (void)s;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "%s/" SANDBOX_ETC_STORE, state);
    umount2(cmd, MNT_DETACH); /* its tmpfs, where the test may mount */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", state);
    return system(cmd);
}

static char *
slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static void
assert_same_file(const char *host, const char *copy)
{
    size_t a = 0, b = 0;
    char *x = slurp(host, &a), *y = slurp(copy, &b);
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(a, b);
    assert_memory_equal(x, y, a);
    free(x);
    free(y);
    struct stat hs, cs;
    assert_int_equal(stat(host, &hs), 0);
    assert_int_equal(lstat(copy, &cs), 0);
    assert_true(S_ISREG(cs.st_mode));
    assert_int_equal(cs.st_mode & 0777, hs.st_mode & 0777);
    assert_int_equal(cs.st_uid, 0);
}

static void
test_a_copy_of_the_named_host_files_and_the_generated_ones(void **s)
{
    (void)s;
    const char *const host[] = {"/etc/os-release",   "/etc/nsswitch.conf",     "/etc/localtime",
                                "/etc/alternatives", "/etc/no-such-file-here", NULL};
    const sandbox_etc_file_t gen[] = {{"passwd", "user:x:1000:1000::/workspace:/bin/bash\n"},
                                      {"resolv.conf", ""}};
    char dir[PATH_MAX], again[PATH_MAX], p[PATH_MAX + 64];
    err_t err = {0};
    assert_int_equal(sandbox_etc_dir(state, host, gen, 2, dir, sizeof dir, &err), 0);
    assert_true(strncmp(dir, state, strlen(state)) == 0);
    assert_non_null(strstr(dir, "/" SANDBOX_ETC_STORE "/" SANDBOX_ETC_PREFIX));
    if (geteuid() == 0) { /* root: the copies are on a tmpfs of their own */
        struct stat top, store;
        char s2[PATH_MAX];
        snprintf(s2, sizeof s2, "%s/" SANDBOX_ETC_STORE, state);
        assert_int_equal(stat(state, &top), 0);
        assert_int_equal(stat(s2, &store), 0);
        assert_true(top.st_dev != store.st_dev);
    }
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);
    snprintf(p, sizeof p, "%s/os-release", dir);
    assert_same_file("/etc/os-release", p);
    snprintf(p, sizeof p, "%s/localtime", dir); /* a symlink on the host: followed, as a bind */
    if (access("/etc/localtime", R_OK) == 0)
        assert_same_file("/etc/localtime", p);
    snprintf(p, sizeof p, "%s/no-such-file-here", dir);
    assert_int_equal(access(p, F_OK), -1);
    /* inside a named directory, symlinks are kept as links (resolved in the sandbox's root) */
    DIR *d = opendir("/etc/alternatives");
    struct dirent *e;
    int links = 0;
    while (d && (e = readdir(d)) && links < 3) {
        char h[PATH_MAX], c[2 * PATH_MAX], ht[PATH_MAX] = "", ct[PATH_MAX] = "";
        snprintf(h, sizeof h, "/etc/alternatives/%s", e->d_name);
        snprintf(c, sizeof c, "%s/alternatives/%s", dir, e->d_name);
        if (lstat(h, &st) < 0 || !S_ISLNK(st.st_mode))
            continue;
        assert_true(readlink(h, ht, sizeof ht - 1) > 0);
        assert_true(readlink(c, ct, sizeof ct - 1) > 0);
        assert_string_equal(ht, ct);
        links++;
    }
    if (d)
        closedir(d);
    size_t len = 0;
    snprintf(p, sizeof p, "%s/passwd", dir);
    char *text = slurp(p, &len);
    assert_int_equal(len, strlen(gen[0].text));
    assert_memory_equal(text, gen[0].text, len);
    free(text);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    /* the same version: the same directory (looked at again after the second's wait) */
    sleep(1);
    assert_int_equal(sandbox_etc_dir(state, host, gen, 2, again, sizeof again, &err), 0);
    assert_string_equal(dir, again);
    /* another version: another directory, the first one kept */
    const sandbox_etc_file_t changed[] = {{"passwd", "user:x:1000:1000::/home:/bin/sh\n"},
                                          {"resolv.conf", ""}};
    sleep(1);
    assert_int_equal(sandbox_etc_dir(state, host, changed, 2, again, sizeof again, &err), 0);
    assert_string_not_equal(dir, again);
    assert_int_equal(access(dir, F_OK), 0);
}

static void
test_a_path_outside_etc_is_refused(void **s)
{
    (void)s;
    const char *const host[] = {"/etc/../root/.ssh", NULL};
    char dir[PATH_MAX];
    err_t err = {0};
    sleep(1); /* past the previous test's cache */
    assert_true(sandbox_etc_dir(state, host, NULL, 0, dir, sizeof dir, &err) < 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_copy_of_the_named_host_files_and_the_generated_ones),
        cmocka_unit_test(test_a_path_outside_etc_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
