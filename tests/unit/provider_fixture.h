/* provider_fixture.h — what the provider tests share (gw_test_provider.c, gw_test_sandbox_priv.c):
 * the state directory (a mkdtemp removed at the end), the executor binary (SANDPIPE_EXECUTOR,
 * else <repo>/build/{$MODE,release}/sandpipe-executor from this binary's path or the cwd), and
 * the bookkeeping that destroys (purges) every sandbox a test made in teardown, also when an
 * assertion failed. The test process is a child subreaper. Header-only; include after
 * <cmocka.h> and need.h, once per test binary. */
#ifndef SP_TEST_PROVIDER_FIXTURE_H
#define SP_TEST_PROVIDER_FIXTURE_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gateway/sandbox/provider.h"

static char g_state[PATH_MAX];    /* mkdtemp state dir */
static char g_executor[PATH_MAX]; /* "" when not found: sandbox tests fail (NEED) */
static bool g_have_bwrap;

/* Sandboxes to destroy in teardown. */
static struct {
    const provider_t *p;
    sandbox_t sb;
} g_made[8];
static int g_nmade;

/* ---- sandbox bookkeeping ---- */

static inline sandbox_spec_t
spec_for(const char *name, char *id, size_t idn)
{
    snprintf(id, idn, "t%d-%s", (int)getpid(), name);
    sandbox_spec_t s = {
        .id = id, .profile = "default", .state_dir = g_state, .executor_path = g_executor};
    return s;
}

static inline sandbox_t *
track(const provider_t *p, const sandbox_t *sb)
{
    assert_true(g_nmade < (int)(sizeof g_made / sizeof g_made[0]));
    g_made[g_nmade].p = p;
    g_made[g_nmade].sb = *sb;
    return &g_made[g_nmade++].sb;
}

static inline sandbox_t *
make(const provider_t *p, const sandbox_spec_t *spec)
{
    sandbox_t sb;
    err_t err = {0};
    int e = p->create(spec, &sb, &err);
    if (e < 0)
        fail_msg("create %s: %s", spec->id, err.msg);
    return track(p, &sb);
}

static inline bool
cgroup_dirs_gone(const sandbox_t *sb)
{
    static const char *const ctrls[] = {"memory", "pids", "cpu", "cpuacct", "freezer", ""};
    for (size_t i = 0; i < sizeof ctrls / sizeof ctrls[0]; i++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "/sys/fs/cgroup/%s%s%s", ctrls[i], ctrls[i][0] ? "/" : "",
                 sb->cgroup);
        if (sb->cgroup[0] && access(p, F_OK) == 0)
            return false;
    }
    return true;
}

static inline int
setup(void **state)
{
    (void)state;
    g_nmade = 0;
    NEED(g_executor[0], "no sandpipe-executor binary found (build it first)");
    return 0;
}

/* This process is a child subreaper (main), so the sandboxes' processes are reparented to it
 * rather than to init once their starter exits; it reaps them here (a test process has no
 * other children to steal from). */
static inline void
reap_orphans(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

static inline int
teardown(void **state)
{
    (void)state;
    for (int i = 0; i < g_nmade; i++) {
        err_t err = {0};
        if (g_made[i].p->destroy(&g_made[i].sb, true, &err) < 0)
            fprintf(stderr, "teardown: destroy %s: %s\n", g_made[i].sb.id, err.msg);
    }
    g_nmade = 0;
    reap_orphans();
    return 0;
}

static inline void
need_bwrap(void)
{
    NEED(g_have_bwrap && geteuid() == 0, "bubblewrap and root are required");
}

static inline bool
try_executor(const char *path)
{
    if (access(path, X_OK) == 0 && realpath(path, g_executor))
        return true;
    g_executor[0] = '\0';
    return false;
}

static inline void
find_executor(void)
{
    const char *env = getenv("SANDPIPE_EXECUTOR"), *mode = getenv("MODE");
    if (env && try_executor(env))
        return;
    char self[PATH_MAX], p[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    /* <root>/build/<mode>/tests/unit/<test>: four levels up is the repo root. */
    for (int i = 0; i < 5; i++) {
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
    }
    const char *roots[] = {self, "."};
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/build/%s/sandpipe-executor", roots[i], mode ? mode : "release");
        if (try_executor(p))
            return;
        snprintf(p, sizeof p, "%s/build/release/sandpipe-executor", roots[i]);
        if (try_executor(p))
            return;
    }
    fprintf(stderr, "no sandpipe-executor (set SANDPIPE_EXECUTOR): sandbox tests will fail\n");
}

/* main()'s first and last steps. */
static inline int
fixture_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    find_executor();
    g_have_bwrap = system("bwrap --version >/dev/null 2>&1") == 0;
    snprintf(g_state, sizeof g_state, "/tmp/sp-gwtest-XXXXXX");
    return mkdtemp(g_state) ? 0 : -1;
}

static inline void
fixture_done(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "%s/.etc", g_state); /* the /etc copies' tmpfs (sandbox_etc.h) */
    umount2(cmd, MNT_DETACH);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_state);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_state);
}

#endif
