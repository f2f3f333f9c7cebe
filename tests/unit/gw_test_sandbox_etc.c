/* gw_test_sandbox_etc.c — a sandbox's /etc as one directory of copies
 * (gateway/sandbox/sandbox_etc.c), made from this host's real /etc: the named files' bytes and
 * modes, a named symlink followed, symlinks inside a named directory kept as they are, missing
 * names left out, the generated files, root's and not writable by others; the same version gives
 * the same directory, a changed generated file a new one, the old one left while recently handed
 * out; an old copy no mount namespace binds is removed at the next version, one bound is kept. */
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
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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

/* dir's copy made for the generated passwd `text` (after the previous call's one-second cache) */
static void
version(const char *text, char *dir, size_t cap)
{
    const char *const host[] = {"/etc/os-release", NULL};
    const sandbox_etc_file_t gen[] = {{"passwd", text}};
    err_t err = {0};
    sleep(1);
    assert_int_equal(sandbox_etc_dir(state, host, gen, 1, dir, cap, &err), 0);
}

/* last handed out two minutes ago: past the grace a copy just handed out is kept for */
static void
age(const char *dir)
{
    struct timespec old[2] = {{.tv_sec = time(NULL) - 120}, {.tv_sec = time(NULL) - 120}};
    assert_int_equal(utimensat(AT_FDCWD, dir, old, 0), 0);
}

/* A child in a mount namespace of its own with dir bound in it, as a sandbox binds its /etc;
 * it exits when *hold is closed. */
static pid_t
bind_in_namespace(const char *dir, int *hold)
{
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s/pin", state);
    mkdir(target, 0700);
    int ready[2], wait_for[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(wait_for), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        close(wait_for[1]);
        char c = 1;
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount(dir, target, NULL, MS_BIND, NULL) < 0 || write(ready[1], &c, 1) != 1)
            _exit(1);
        while (read(wait_for[0], &c, 1) > 0)
            ;
        _exit(0);
    }
    close(ready[1]);
    close(wait_for[0]);
    char c = 0;
    assert_int_equal(read(ready[0], &c, 1), 1); /* bound */
    close(ready[0]);
    *hold = wait_for[1];
    return pid;
}

static void
test_an_old_copy_is_removed_unless_a_mount_namespace_binds_it(void **s)
{
    (void)s;
    char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX], d[PATH_MAX];
    version("a\n", a, sizeof a);
    version("b\n", b, sizeof b);
    int hold = -1, status = 0;
    pid_t user = bind_in_namespace(a, &hold);
    age(a);
    age(b);
    version("c\n", c, sizeof c);
    assert_int_equal(access(a, F_OK), 0); /* bound in the child's namespace */
    assert_int_equal(access(c, F_OK), 0);
    assert_int_equal(access(b, F_OK), -1);
    close(hold); /* A's user exits: its namespace, and A's bind, are gone */
    assert_int_equal(waitpid(user, &status, 0), user);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    version("d\n", d, sizeof d);
    assert_int_equal(access(a, F_OK), -1);
    assert_int_equal(access(c, F_OK), 0); /* handed out within the minute */
    assert_int_equal(access(d, F_OK), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_copy_of_the_named_host_files_and_the_generated_ones),
        cmocka_unit_test(test_a_path_outside_etc_is_refused),
        cmocka_unit_test(test_an_old_copy_is_removed_unless_a_mount_namespace_binds_it),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
