/* gw_test_sandbox_priv.c — what a bwrap sandbox's processes may do on the host: each sandbox is
 * its own unprivileged host uid (processes, workspace, uid claims), one sandbox's uid can
 * neither signal nor read another's, setuid binaries grant nothing, and the seccomp filter
 * refuses what it should (probed from inside by this binary itself, --seccomp-probe). Real kernel,
 * real bubblewrap, real executor (provider_fixture.h). Needs root. */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "need.h"

#include "exec_client.h"
#include "gateway/sandbox/provider.h"
#include "gateway/sandbox/sandbox_uid.h"
#include "json_util.h"
#include "xalloc.h"

#include "provider_fixture.h"

#include "exec_sync.h"

/* ---- host-side views of a sandbox's processes ---- */

static pid_t
parent_of(pid_t pid)
{
    char p[64], buf[512];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *s = strrchr(buf, ')');
    int ppid = -1;
    return s && sscanf(s + 2, "%*c %d", &ppid) == 1 ? (pid_t)ppid : -1;
}

/* The sandbox's processes as the host sees them: its top process and all descendants. */
static size_t
tree_of(pid_t top, pid_t *out, size_t max)
{
    size_t n = 0;
    out[n++] = top;
    for (size_t i = 0; i < n; i++) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        while (d && (de = readdir(d)) && n < max) {
            pid_t pid = (pid_t)atoi(de->d_name);
            if (pid > 0 && parent_of(pid) == out[i])
                out[n++] = pid;
        }
        if (d)
            closedir(d);
    }
    return n;
}

/* "Uid:" or "Gid:" of /proc/<pid>/status: all four ids equal to want (real, effective, saved,
 * filesystem), and "Groups:" empty. */
static bool
runs_as(pid_t pid, uid_t want_uid, gid_t want_gid)
{
    char p[64], line[256];
    snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return true; /* gone meanwhile: nothing ran as anyone else */
    bool ok = true;
    while (fgets(line, sizeof line, f)) {
        unsigned a, b, c, d;
        if (sscanf(line, "Uid: %u %u %u %u", &a, &b, &c, &d) == 4)
            ok = ok && a == want_uid && b == want_uid && c == want_uid && d == want_uid;
        else if (sscanf(line, "Gid: %u %u %u %u", &a, &b, &c, &d) == 4)
            ok = ok && a == want_gid && b == want_gid && c == want_gid && d == want_gid;
        else if (strncmp(line, "Groups:", 7) == 0)
            ok = ok && strspn(line + 7, " \t\n") == strlen(line + 7);
    }
    fclose(f);
    return ok;
}

/* The host pid of the executor under a sandbox's top process. */
static pid_t
executor_of(const sandbox_t *sb)
{
    pid_t pids[256];
    size_t n = tree_of(sb->pid, pids, 256);
    for (size_t i = 0; i < n; i++) {
        char p[64], cmd[256] = "";
        snprintf(p, sizeof p, "/proc/%d/cmdline", (int)pids[i]);
        FILE *f = fopen(p, "re");
        if (!f)
            continue;
        size_t r = fread(cmd, 1, sizeof cmd - 1, f);
        fclose(f);
        cmd[r] = '\0';
        if (strstr(cmd, "sandpipe-executor") && !strstr(cmd, "bwrap"))
            return pids[i];
    }
    return -1;
}

/* Runs probe() in a child process that has become uid:gid (no groups); returns its exit code. */
static int
as_user(uid_t uid, gid_t gid, int (*probe)(const void *), const void *arg)
{
    pid_t c = fork();
    if (c == 0) {
        if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
            _exit(99);
        _exit(probe(arg));
    }
    int status = 0;
    waitpid(c, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 98;
}

typedef struct {
    pid_t victim_pid, victim_top;
    const char *victim_workspace, *victim_ctl, *state;
} cross_t;

/* Exit code: bit per thing that worked but must not have. */
static int
probe_other_sandbox(const void *arg)
{
    const cross_t *x = arg;
    int bad = 0;
    if (kill(x->victim_pid, 0) == 0 || errno != EPERM)
        bad |= 1;
    if (kill(x->victim_top, SIGKILL) == 0 || errno != EPERM)
        bad |= 2;
    if (opendir(x->victim_workspace) || errno != EACCES)
        bad |= 4;
    if (opendir(x->victim_ctl) || errno != EACCES)
        bad |= 8;
    if (opendir(x->state) || errno != EACCES) /* searchable, not listable */
        bad |= 16;
    return bad;
}

/* ---- tests ---- */

static void
test_bwrap_sandboxes_are_distinct_unprivileged_host_users(void **state)
{
    (void)state;
    need_bwrap();
    char ida[64], idb[64];
    sandbox_spec_t sa = spec_for("uid-a", ida, sizeof ida),
                   sb2 = spec_for("uid-b", idb, sizeof idb);
    sandbox_t *a = make(&provider_bwrap, &sa);
    sandbox_t *b = make(&provider_bwrap, &sb2);
    const sandbox_t *both[] = {a, b};
    for (int i = 0; i < 2; i++) {
        const sandbox_t *s = both[i];
        assert_true(s->uid >= PROVIDER_UID_BASE && s->uid < PROVIDER_UID_BASE + PROVIDER_UID_COUNT);
        assert_int_equal(s->gid, s->uid);
        /* Every process, bwrap included, is that uid on the host, with no groups. */
        free(run_ok(s, "sleep 0.01")); /* the shell exists */
        pid_t pids[256];
        size_t n = tree_of(s->pid, pids, 256);
        assert_true(n >= 3); /* bwrap, the sandbox's init, the executor (and its shell) */
        for (size_t k = 0; k < n; k++)
            if (!runs_as(pids[k], s->uid, s->gid))
                fail_msg("pid %d of sandbox %s does not run as %u", (int)pids[k], s->id,
                         (unsigned)s->uid);
        /* Its directory admits that uid alone (and root); the workspace and what the sandbox
         * writes are that uid's. */
        struct stat st;
        assert_int_equal(stat(s->dir, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0710);
        assert_int_equal(st.st_uid, 0);
        assert_int_equal(st.st_gid, s->gid);
        assert_int_equal(stat(s->workspace, &st), 0);
        assert_int_equal(st.st_uid, s->uid);
        char *out = run_ok(s, "id -u; echo x > /workspace/made-inside; stat -c %U /workspace");
        assert_string_equal(out, "1000\nuser\n");
        free(out);
        char p[PATH_MAX + 32];
        snprintf(p, sizeof p, "%s/made-inside", s->workspace);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_uid, s->uid);
        /* The claim names the sandbox. */
        snprintf(p, sizeof p, "%s/" SANDBOX_UID_DIR "/%u", g_state, (unsigned)s->uid);
        FILE *f = fopen(p, "re");
        assert_non_null(f);
        char owner[64] = "";
        assert_non_null(fgets(owner, sizeof owner, f));
        fclose(f);
        assert_string_equal(owner, s->id);
    }
    assert_int_not_equal(a->uid, b->uid);
    struct stat st;
    assert_int_equal(stat(g_state, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0711);
    /* Outside every namespace, a's uid still cannot touch b. */
    char ctl[PATH_MAX + 16];
    snprintf(ctl, sizeof ctl, "%s/ctl", b->dir);
    cross_t x = {executor_of(b), b->pid, b->workspace, ctl, g_state};
    assert_true(x.victim_pid > 0);
    assert_int_equal(as_user(a->uid, a->gid, probe_other_sandbox, &x), 0);
    /* The uid goes back with the purge. */
    err_t err = {0};
    assert_int_equal(provider_bwrap.destroy(a, true, &err), 0);
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/" SANDBOX_UID_DIR "/%u", g_state, (unsigned)a->uid);
    assert_int_equal(access(p, F_OK), -1);
}

/* A claim whose sandbox directory never came (a gateway died in between) is taken over once
 * old; a live one never is, and the range runs out visibly. */
static void
test_uid_claims_are_exclusive_and_stale_ones_reused(void **state)
{
    (void)state;
    const uint32_t W = SANDBOX_UID_WIDTH;
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/claims", g_state);
    assert_int_equal(mkdir(dir, 0711), 0);
    uid_t u1, u2, u3;
    err_t err = {0};
    assert_int_equal(sandbox_uid_claim(dir, "one", 5000000, 2 * W, W, &u1, &err), 0);
    assert_int_equal(sandbox_uid_claim(dir, "two", 5000000, 2 * W, W, &u2, &err), 0);
    /* Blocks of W from the base, apart: no uid of one sandbox is another's. */
    assert_int_equal((u1 - 5000000) % W, 0);
    assert_int_equal((u2 - 5000000) % W, 0);
    assert_int_equal(u1 > u2 ? u1 - u2 : u2 - u1, W);
    assert_int_equal(sandbox_uid_claim(dir, "three", 5000000, 2 * W + 7, W, &u3, &err), -ERR_BUSY);
    /* "one" has no directory, but its claim is fresh: still taken. */
    assert_int_equal(sandbox_uid_claim(dir, "three", 5000000, 2 * W + 7, W, &u3, &err), -ERR_BUSY);
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/" SANDBOX_UID_DIR "/%u", dir, (unsigned)u1);
    struct timespec old[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
    assert_int_equal(sandbox_uid_claim(dir, "three", 5000000, 2 * W + 7, W, &u3, &err), 0);
    assert_int_equal(u3, u1);
    /* Release only by the holder. */
    sandbox_uid_release(dir, "one", u3);
    assert_int_equal(access(p, F_OK), 0);
    sandbox_uid_release(dir, "three", u3);
    assert_int_equal(access(p, F_OK), -1);
    assert_int_equal(sandbox_uid_claim(dir, "x", 0, 2 * W, W, &u3, &err), -ERR_BAD_REQ);
    /* A range narrower than one block has none. */
    assert_int_equal(sandbox_uid_claim(dir, "x", 5000000, W - 1, W, &u3, &err), -ERR_BAD_REQ);
}

/* Setuid binaries grant nothing: the host's su, a setuid-root copy the host placed in the
 * workspace, a setuid copy the sandbox made itself; sudo (sandpipe's, where one uid is mapped)
 * runs as the user. */
static void
test_bwrap_setuid_binaries_grant_nothing(void **state)
{
    (void)state;
    need_bwrap();
    char id[64];
    sandbox_spec_t s = spec_for("suid", id, sizeof id);
    sandbox_t *sb = make(&provider_bwrap, &s);
    char cmd[PATH_MAX * 2 + 64];
    snprintf(cmd, sizeof cmd,
             "cp /usr/bin/id '%s/id-suid' && chown 0:0 '%s/id-suid' && "
             "chmod 4755 '%s/id-suid'",
             sb->workspace, sb->workspace, sb->workspace);
    assert_int_equal(system(cmd), 0);
    char *out = run_ok(sb, "/workspace/id-suid -u; "
                           "cp /usr/bin/id /workspace/mine && chmod u+s /workspace/mine && "
                           "/workspace/mine -u; "
                           "su -c 'echo SU-WORKED' root </dev/null 2>/dev/null; "
                           /* sandpipe's sudo, one uid mapped: the user again */
                           "sudo -n id -u; "
                           "grep -E '^(NoNewPrivs|CapEff|CapPrm|CapBnd):' /proc/self/status | "
                           "tr -s '\\t' ' '; "
                           "grep -c ' /workspace .*nosuid' /proc/self/mountinfo");
    assert_string_equal(out, "1000\n1000\n1000\n"
                             "CapPrm: 0000000000000000\nCapEff: 0000000000000000\n"
                             "CapBnd: 0000000000000000\nNoNewPrivs: 1\n1\n");
    free(out);
}

/* ---- seccomp ---- */

/* Run inside a sandbox (this binary, copied into its workspace, with --seccomp-probe): one
 * "name errno-name" line per call, "0" when it succeeded. Arguments are harmless: the point is
 * whether the filter lets the call reach the kernel. */
static long
probe_call(const char *name)
{
    char zero[128] = {0};
    if (!strcmp(name, "unshare(NEWUSER)"))
        return syscall(SYS_unshare, CLONE_NEWUSER);
    if (!strcmp(name, "unshare(FILES)")) /* not a namespace: allowed */
        return syscall(SYS_unshare, CLONE_FILES);
    if (!strcmp(name, "clone(NEWUSER)")) {
        long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
        if (r == 0)
            _exit(0);
        return r;
    }
    if (!strcmp(name, "clone3")) {
        long r = syscall(SYS_clone3, zero, 64);
        if (r == 0) /* a child: only without the filter */
            _exit(0);
        return r;
    }
    if (!strcmp(name, "setns")) /* EBADF without the filter */
        return syscall(SYS_setns, -1, 0);
    if (!strcmp(name, "mount"))
        return syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL);
    if (!strcmp(name, "umount2"))
        return syscall(SYS_umount2, "/tmp", 0);
    if (!strcmp(name, "pivot_root"))
        return syscall(SYS_pivot_root, "/tmp", "/tmp");
    if (!strcmp(name, "fsopen"))
        return syscall(SYS_fsopen, "tmpfs", 0);
    if (!strcmp(name, "open_tree"))
        return syscall(SYS_open_tree, AT_FDCWD, "/tmp", 0);
    if (!strcmp(name, "keyctl")) /* KEYCTL_GET_KEYRING_ID of the session keyring */
        return syscall(SYS_keyctl, 0, -3, 0);
    if (!strcmp(name, "add_key"))
        return syscall(SYS_add_key, "user", "k", "v", 1, -3);
    if (!strcmp(name, "request_key"))
        return syscall(SYS_request_key, "user", "k", NULL, 0);
    if (!strcmp(name, "bpf"))
        return syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, zero, 64);
    if (!strcmp(name, "perf_event_open"))
        return syscall(SYS_perf_event_open, zero, 0, -1, -1, 0);
    if (!strcmp(name, "userfaultfd"))
        return syscall(SYS_userfaultfd, 0);
    if (!strcmp(name, "io_uring_setup"))
        return syscall(SYS_io_uring_setup, 1, zero);
    if (!strcmp(name, "open_by_handle_at"))
        return syscall(SYS_open_by_handle_at, AT_FDCWD, zero, 0);
    if (!strcmp(name, "init_module"))
        return syscall(SYS_init_module, zero, 0, "");
    if (!strcmp(name, "kexec_load"))
        return syscall(SYS_kexec_load, 0, 0, NULL, 0);
    if (!strcmp(name, "reboot"))
        return syscall(SYS_reboot, 0, 0, 0, NULL);
    if (!strcmp(name, "swapoff"))
        return syscall(SYS_swapoff, "/nonexistent");
    if (!strcmp(name, "acct"))
        return syscall(SYS_acct, NULL);
    if (!strcmp(name, "quotactl"))
        return syscall(SYS_quotactl, 0, NULL, 0, NULL);
    if (!strcmp(name, "syslog")) /* SYSLOG_ACTION_SIZE_BUFFER */
        return syscall(SYS_syslog, 10, NULL, 0);
    if (!strcmp(name, "settimeofday"))
        return syscall(SYS_settimeofday, NULL, NULL);
    if (!strcmp(name, "clock_settime"))
        return syscall(SYS_clock_settime, CLOCK_REALTIME, zero);
    if (!strcmp(name, "ptrace")) { /* allowed: a child asks to be traced */
        pid_t c = fork();
        if (c == 0)
            _exit(syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0) == 0 ? 0 : errno);
        int st = 0;
        waitpid(c, &st, 0);
        errno = WIFEXITED(st) ? WEXITSTATUS(st) : EIO;
        return errno ? -1 : 0;
    }
    errno = EINVAL;
    return -1;
}

static const struct {
    const char *call, *expect;
} probes[] = {
    {"unshare(NEWUSER)", "EPERM"},
    {"unshare(FILES)", "0"},
    {"clone(NEWUSER)", "EPERM"},
    {"clone3", "ENOSYS"},
    {"setns", "EPERM"},
    {"mount", "EPERM"},
    {"umount2", "EPERM"},
    {"pivot_root", "EPERM"},
    {"fsopen", "EPERM"},
    {"open_tree", "EPERM"},
    {"keyctl", "EPERM"},
    {"add_key", "EPERM"},
    {"request_key", "EPERM"},
    {"bpf", "EPERM"},
    {"perf_event_open", "EPERM"},
    {"userfaultfd", "EPERM"},
    {"io_uring_setup", "ENOSYS"},
    {"open_by_handle_at", "EPERM"},
    {"init_module", "EPERM"},
    {"kexec_load", "EPERM"},
    {"reboot", "EPERM"},
    {"swapoff", "EPERM"},
    {"acct", "EPERM"},
    {"quotactl", "EPERM"},
    {"syslog", "EPERM"},
    {"settimeofday", "EPERM"},
    {"clock_settime", "EPERM"},
    {"ptrace", "0"},
};

static int
seccomp_probe_main(void)
{
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        errno = 0;
        long r = probe_call(probes[i].call);
        printf("%s %s\n", probes[i].call, r >= 0 ? "0" : strerrorname_np(errno));
    }
    return 0;
}

/* Each probe inside a sandbox gets what the filter says, the harmless ones still work, and the
 * shell's own tools agree (unshare -U). */
static void
test_bwrap_seccomp_denies_what_docker_denies(void **state)
{
    (void)state;
    need_bwrap();
    char id[64];
    sandbox_spec_t s = spec_for("seccomp", id, sizeof id);
    sandbox_t *sb = make(&provider_bwrap, &s);
    char self[PATH_MAX], cmd[PATH_MAX * 2 + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/probe' && chmod 755 '%s/probe'", self, sb->workspace,
             sb->workspace);
    assert_int_equal(system(cmd), 0);
    char *out = run_ok(sb, "/workspace/probe --seccomp-probe");
    char want[4096] = "";
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        size_t l = strlen(want);
        snprintf(want + l, sizeof want - l, "%s %s\n", probes[i].call, probes[i].expect);
    }
    assert_string_equal(out, want);
    free(out);
    out = run_ok(sb, "grep -E '^Seccomp(_filters)?:' /proc/self/status | tr -s '\t' ' '; "
                     "unshare -U true 2>/dev/null; echo unshare=$?; "
                     "unshare -r true 2>/dev/null; echo unshare-r=$?");
    assert_string_equal(out, "Seccomp: 2\nSeccomp_filters: 1\nunshare=1\nunshare-r=1\n");
    free(out);
}

int
main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--seccomp-probe"))
        return seccomp_probe_main();
    if (fixture_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bwrap_sandboxes_are_distinct_unprivileged_host_users,
                                        setup, teardown),
        cmocka_unit_test(test_uid_claims_are_exclusive_and_stale_ones_reused),
        cmocka_unit_test_setup_teardown(test_bwrap_setuid_binaries_grant_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bwrap_seccomp_denies_what_docker_denies, setup,
                                        teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fixture_done();
    return rc;
}
