/* gw_test_cgroup.c — cgroup.c on its own against the real kernel: limits, membership, kill,
 * removal, the v2 freezer on a unified mount, and graceful degradation when nothing is
 * writable. Needs root and writable cgroups (a missing precondition fails, see NEED). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "need.h"

#include "gateway/sandbox/cgroup.h"
#include "json_util.h"
#include "xalloc.h"

#define MiB (1024 * 1024)

static void
sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static pid_t
spawn_sleeper(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("sleep", "sleep", "60", (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void
reap(pid_t pid)
{
    for (int i = 0; i < 200 && waitpid(pid, NULL, WNOHANG) == 0; i++)
        sleep_ms(10);
}

/* Limits land in the controller files, a process can be put in, counted, killed, removed. */
static void
test_cgroup_limits_membership_kill_remove(void **state)
{
    (void)state;
    cgroup_t cg;
    err_t err = {0};
    char id[64];
    snprintf(id, sizeof id, "t%d-cg", (int)getpid());
    cgroup_limits_t lim = {128 * MiB, 500, 64};
    assert_int_equal(cgroup_create(&cg, NULL, id, &lim, &err), 0);
    NEED(cg.version != 0, "cgroups are not writable here");
    char buf[64];
    char path[CGROUP_DIR_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", cg.dir[CG_PIDS], "pids.max");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_int_equal(atoi(buf), 64);
    pid_t pid = spawn_sleeper();
    assert_int_equal(cgroup_enter(&cg, pid), 0);
    assert_int_equal(cgroup_nprocs(&cg), 1);
    json_object *u = cgroup_usage(&cg);
    assert_int_equal(json_get_int(u, "memory_limit_bytes", -1), 128 * MiB);
    assert_int_equal(json_get_int(u, "pids", -1), 1);
    json_object_put(u);
    cgroup_t again;
    assert_int_equal(cgroup_open(&again, NULL, cg.version, cg.rel), 0);
    assert_string_equal(again.dir[CG_MEMORY], cg.dir[CG_MEMORY]);
    assert_int_equal(cgroup_kill(&again, &err), 1);
    reap(pid);
    assert_int_equal(cgroup_remove(&again, &err), 0);
    assert_int_equal(access(cg.dir[CG_PIDS], F_OK), -1);
    assert_int_equal(cgroup_open(&again, NULL, cg.version, cg.rel), -ENOENT);
}

/* cgroup v2 code (cgroup.freeze/events/kill) on the hybrid unified mount when there is one. */
static void
test_cgroup_v2_freeze_and_kill_on_unified_mount(void **state)
{
    (void)state;
    const char *mnt = "/sys/fs/cgroup/unified";
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/cgroup.controllers", mnt);
    NEED(access(p, F_OK) == 0, "no cgroup v2 mount with cgroup.controllers");
    cgroup_t cg;
    err_t err = {0};
    char id[64];
    snprintf(id, sizeof id, "t%d-v2", (int)getpid());
    cgroup_limits_t lim = {64 * MiB, 0, 0};
    assert_int_equal(cgroup_create(&cg, mnt, id, &lim, &err), 0);
    NEED(cg.version != 0, "cgroups are not writable here");
    assert_int_equal(cg.version, 2);
    pid_t pid = spawn_sleeper();
    assert_int_equal(cgroup_enter(&cg, pid), 0);
    assert_int_equal(cgroup_freeze(&cg, &err), 0);
    json_object *u = cgroup_usage(&cg);
    assert_true(json_get_bool(u, "frozen", false));
    json_object_put(u);
    assert_int_equal(cgroup_thaw(&cg, &err), 0);
    assert_int_equal(cgroup_kill(&cg, &err), 1);
    reap(pid);
    assert_int_equal(cgroup_remove(&cg, &err), 0);
    assert_int_equal(access(cg.dir[CG_FREEZER], F_OK), -1);
}

/* No cgroup filesystem: create still works, says version 0 and why. */
static void
test_cgroup_unwritable_degrades_with_warning(void **state)
{
    (void)state;
    char dir[] = "/tmp/sp-nocg-XXXXXX";
    assert_non_null(mkdtemp(dir));
    cgroup_t cg;
    err_t err = {0};
    cgroup_limits_t lim = {128 * MiB, 0, 0};
    int e = cgroup_create(&cg, dir, "x1", &lim, &err);
    rmdir(dir);
    assert_int_equal(e, 0);
    assert_int_equal(cg.version, 0);
    assert_true(strlen(cg.warning) > 0);
    assert_int_equal(cgroup_enter(&cg, getpid()), 0);
    assert_int_equal(cgroup_freeze(&cg, &err), -ENOTSUP);
    assert_int_equal(cgroup_create(&cg, NULL, "../etc", &lim, &err), -EINVAL);
}

int
main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cgroup_limits_membership_kill_remove),
        cmocka_unit_test(test_cgroup_v2_freeze_and_kill_on_unified_mount),
        cmocka_unit_test(test_cgroup_unwritable_degrades_with_warning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
