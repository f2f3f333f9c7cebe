/* gw_test_provider.c — the bwrap and local providers against the real kernel,
 * real bubblewrap and the real sandpipe-executor (provider_fixture.h finds it and cleans up).
 * Commands run through the executor protocol (proc.spawn) over a blocking unix socket.
 * Needs root. cgroup.c on its own: gw_test_cgroup.c; users, setuid and seccomp:
 * gw_test_sandbox_priv.c; a sandbox's record and environment: gw_test_sandbox_record.c. */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "need.h"

#include "exec_client.h"
#include "gateway/sandbox/cgroup.h"
#include "gateway/sandbox/provider.h"
#include "gateway/sandbox/sandbox_host.h"
#include "json_util.h"
#include "xalloc.h"

#define MiB (1024 * 1024)

#include "provider_fixture.h"

#include "exec_sync.h"

/* ---- bwrap sandboxes ---- */

/* uid 1000, hostname sandbox, only lo, no /root, no other sandbox's directory, no shadow. */
static void
test_bwrap_identity_network_and_filesystem_isolation(void **state)
{
    (void)state;
    need_bwrap();
    char ida[64], idb[64];
    sandbox_spec_t sa = spec_for("iso-a", ida, sizeof ida),
                   sb2 = spec_for("iso-b", idb, sizeof idb);
    json_object *env = json_tokener_parse("{\"GREETING\": \"hi there\"}");
    sa.env = env;
    sandbox_t *a = make(&provider_bwrap, &sa);
    sandbox_t *b = make(&provider_bwrap, &sb2);
    json_object_put(env);
    char *out = run_ok(a, "id -u; id -g; hostname; echo \"$HOME|$GREETING\"; "
                          "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    assert_string_equal(out, "1000\n1000\nsandbox\n/workspace|hi there\nlo\n");
    free(out);
    char cmd[PATH_MAX * 3];
    snprintf(
        cmd, sizeof cmd,
        "for p in /root %s %s /etc/shadow /sys/fs/cgroup; do test -e $p && echo visible $p; done; "
        "test -e /run/sandpipe && echo visible /run/sandpipe; "
        "touch /usr/x 2>/dev/null && echo wrote-usr; true",
        b->dir, b->workspace);
    out = run_ok(a, cmd);
    assert_string_equal(out, "");
    free(out);
    /* A file the sandbox writes is in its workspace on the host, not in the other one. */
    free(run_ok(a, "echo data > /workspace/mine.txt"));
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/mine.txt", a->workspace);
    assert_int_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/mine.txt", b->workspace);
    assert_int_equal(access(p, F_OK), -1);
}

/* No host path of ours in what the sandbox reads about its processes (bwrap's argv, the
 * executor's, environments); in mountinfo only the workspace bind names its source (documented
 * in docs/operations.md). The executor's socket on the host is in a directory only we can
 * write, and the sandbox holds no path to it. */
static void
test_bwrap_sandbox_sees_no_host_state_path(void **state)
{
    (void)state;
    need_bwrap();
    char id[64];
    sandbox_spec_t s = spec_for("nopath", id, sizeof id);
    sandbox_t *sb = make(&provider_bwrap, &s);
    char *out = run_ok(sb, "cat /proc/1/cmdline /proc/[0-9]*/cmdline /proc/[0-9]*/environ "
                           "2>/dev/null | tr '\\0' '\\n'");
    assert_non_null(strstr(out, "sandpipe-executor"));
    assert_null(strstr(out, g_state));
    assert_null(strstr(out, id));
    free(out);
    out = run_ok(sb, "tr '\\0' ' ' < /proc/1/cmdline");
    assert_null(strstr(out, "/sandboxes"));
    free(out);
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "grep -F '%s' /proc/self/mountinfo | cut -d' ' -f5", g_state);
    out = run_ok(sb, cmd);
    assert_string_equal(out, "/workspace\n");
    free(out);
    struct stat st;
    char ctl[PATH_MAX + 16];
    snprintf(ctl, sizeof ctl, "%s/ctl", sb->dir);
    assert_int_equal(stat(ctl, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(lstat(sb->socket_path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
}

/* A 512 MiB allocation in a 128 MiB sandbox is OOM-killed; the executor keeps answering. */
static void
test_bwrap_memory_hog_is_killed_executor_survives(void **state)
{
    (void)state;
    need_bwrap();
    char id[64];
    sandbox_spec_t s = spec_for("mem", id, sizeof id);
    s.memory_bytes = 128 * MiB;
    sandbox_t *sb = make(&provider_bwrap, &s);
    NEED(sb->cgroup_version != 0, "cgroups are not writable here");
    json_object *res = run(sb->socket_path, "python3 -c \"b = b'x' * (512 << 20)\"", 30, NULL);
    assert_non_null(res);
    int64_t code = json_get_int(res, "exit_code", -1), sig = json_get_int(res, "signal", 0);
    if (!(sig == 9 || code == 137))
        fail_msg("memory hog not killed: %s", json_object_to_json_string(res));
    json_object_put(res);
    char *out = run_ok(sb, "echo still here");
    assert_string_equal(out, "still here\n");
    free(out);
    json_object *u = provider_find(sb->provider)->usage(sb);
    assert_true(json_get_int(u, "oom_kills", 1) >= 1);
    assert_true(json_get_int(u, "memory_limit_bytes", 0) == 128 * MiB);
    json_object_put(u);
}

static bool
health_done(conn_t *k)
{
    return k->result != NULL;
}

/* A fork bomb under pids_max=64 (and half a core) stays contained; destroy ends it. */
static void
test_bwrap_fork_bomb_is_contained_and_destroyed(void **state)
{
    (void)state;
    need_bwrap();
    char id[64];
    sandbox_spec_t s = spec_for("bomb", id, sizeof id);
    s.pids_max = 64;
    s.cpu_millicores = 500;
    sandbox_t *sb = make(&provider_bwrap, &s);
    NEED(sb->cgroup_version != 0, "cgroups are not writable here");
    conn_t k;
    assert_int_equal(conn_open(&k, sb->socket_path, 10), 0);
    conn_spawn(&k, "bomb() { bomb | bomb & }; bomb; sleep 30");
    assert_int_equal(pump(&k, 10, got_started), 0);
    conn_close(&k); /* detach: the bomb keeps going */
    sleep_ms(1500);
    json_object *u = provider_find(sb->provider)->usage(sb);
    int64_t pids = json_get_int(u, "pids", 0);
    json_object_put(u);
    assert_true(pids <= 64);
    assert_true(pids >= 32); /* the bomb did run into the limit */
    /* The executor still answers a health request (it needs no new process). */
    assert_int_equal(conn_open(&k, sb->socket_path, 5), 0);
    json_object *req = json_tokener_parse("{\"op\":\"health\"}");
    k.ch = exec_client_open(k.c, req, NULL);
    json_object_put(req);
    assert_int_equal(pump(&k, 10, health_done), 0);
    assert_true(json_get_bool(k.result, "alive", false));
    conn_close(&k);
    err_t err = {0};
    double t0 = now();
    assert_int_equal(provider_bwrap.destroy(sb, true, &err), 0);
    assert_true(now() - t0 < 10);
    assert_int_equal(provider_bwrap.alive(sb), 0);
    assert_true(cgroup_dirs_gone(sb));
    assert_int_equal(access(sb->dir, F_OK), -1);
}

/* The sandbox outlives the process that created it (and survives the JSON round trip). */
static void
test_bwrap_sandbox_survives_its_creator(void **state)
{
    (void)state;
    need_bwrap();
    char id[64];
    sandbox_spec_t s = spec_for("orphan", id, sizeof id);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        sandbox_t sb;
        err_t err = {0};
        if (provider_bwrap.create(&s, &sb, &err) < 0)
            _exit(1);
        json_object *o = sandbox_to_json(&sb);
        const char *t = json_object_to_json_string(o);
        ssize_t w = write(fds[1], t, strlen(t));
        _exit(w > 0 ? 0 : 1);
    }
    close(fds[1]);
    char text[8192];
    size_t n = 0;
    ssize_t r;
    while ((r = read(fds[0], text + n, sizeof text - 1 - n)) > 0)
        n += (size_t)r;
    close(fds[0]);
    text[n] = '\0';
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    sandbox_t got;
    err_t err = {0};
    assert_int_equal(sandbox_from_json(o, &got, &err), 0);
    json_object_put(o);
    sandbox_t *sb = track(&provider_bwrap, &got);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    sleep_ms(100);
    assert_int_equal(provider_bwrap.alive(sb), 1);
    char *out = run_ok(sb, "echo orphan ok");
    assert_string_equal(out, "orphan ok\n");
    free(out);
    /* A recorded start time that does not match means another process: its top process is
     * not the sandbox's; alive is whether its executor answers (it does). */
    sandbox_t other = *sb;
    other.start_time++;
    assert_int_equal(provider_top_alive(&other), 0);
    assert_int_equal(provider_bwrap.alive(&other), 1);
    snprintf(other.dir, sizeof other.dir, "%.200s/none", g_state);
    assert_int_equal(provider_bwrap.alive(&other), 0);
}

/* Killing the top process (the outer bwrap) leaves the sandbox running: it is still alive (its
 * executor answers, a command runs) and destroy still ends every process of it. */
static void
test_bwrap_alive_by_its_executor_not_its_top_pid(void **state)
{
    (void)state;
    need_bwrap();
    char id[64];
    sandbox_spec_t s = spec_for("toppid", id, sizeof id);
    sandbox_t *sb = make(&provider_bwrap, &s);
    sleep_ms(100);
    char *out = run_ok(sb, "echo before");
    free(out);
    assert_int_equal(kill(sb->pid, SIGKILL), 0);
    for (int i = 0; i < 100 && provider_top_alive(sb); i++)
        sleep_ms(10);
    assert_int_equal(provider_top_alive(sb), 0);
    assert_int_equal(provider_bwrap.alive(sb), 1);
    out = run_ok(sb, "echo after");
    assert_string_equal(out, "after\n");
    free(out);
    err_t err = {0};
    assert_int_equal(provider_bwrap.destroy(sb, false, &err), 0);
    assert_int_equal(provider_bwrap.alive(sb), 0);
}

static long
read_counter(const sandbox_t *sb)
{
    char p[PATH_MAX + 16], buf[32] = "";
    snprintf(p, sizeof p, "%s/counter", sb->workspace);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    if (!fgets(buf, sizeof buf, f))
        buf[0] = '\0';
    fclose(f);
    return atol(buf);
}

/* pause stops a counting loop, resume lets it go on. */
static void
test_bwrap_pause_freezes_resume_thaws(void **state)
{
    (void)state;
    need_bwrap();
    char id[64];
    sandbox_spec_t s = spec_for("pause", id, sizeof id);
    sandbox_t *sb = make(&provider_bwrap, &s);
    NEED(sb->cgroup_version != 0, "cgroups are not writable here");
    conn_t k;
    assert_int_equal(conn_open(&k, sb->socket_path, 10), 0);
    conn_spawn(&k, "i=0; while :; do i=$((i+1)); echo $i > /workspace/counter.new; "
                   "mv /workspace/counter.new /workspace/counter; sleep 0.02; done");
    assert_int_equal(pump(&k, 10, got_started), 0);
    conn_close(&k);
    for (int i = 0; i < 200 && read_counter(sb) < 3; i++)
        sleep_ms(10);
    assert_true(read_counter(sb) >= 3);
    err_t err = {0};
    assert_int_equal(provider_bwrap.pause(sb, &err), 0);
    long frozen = read_counter(sb);
    sleep_ms(400);
    assert_int_equal(read_counter(sb), frozen);
    json_object *u = provider_find(sb->provider)->usage(sb);
    assert_true(json_get_bool(u, "frozen", false));
    json_object_put(u);
    assert_int_equal(provider_bwrap.resume(sb, &err), 0);
    sleep_ms(400);
    assert_true(read_counter(sb) > frozen + 3);
}

/* destroy kills every process (a detached sleeper too) and removes cgroup and directory. */
static void
test_bwrap_destroy_leaves_nothing_behind(void **state)
{
    (void)state;
    need_bwrap();
    char id[64];
    sandbox_spec_t s = spec_for("gone", id, sizeof id);
    sandbox_t *sb = make(&provider_bwrap, &s);
    conn_t k;
    assert_int_equal(conn_open(&k, sb->socket_path, 10), 0);
    conn_spawn(&k, "setsid sleep 1000 & sleep 1000");
    assert_int_equal(pump(&k, 10, got_started), 0);
    conn_close(&k);
    sleep_ms(100);
    json_object *u = provider_find(sb->provider)->usage(sb);
    if (sb->cgroup_version)
        assert_true(json_get_int(u, "pids", 0) >= 4); /* bwrap x2, executor, shell, sleeps */
    json_object_put(u);
    err_t err = {0};
    assert_int_equal(provider_bwrap.destroy(sb, true, &err), 0);
    assert_int_equal(provider_bwrap.alive(sb), 0);
    assert_true(cgroup_dirs_gone(sb));
    assert_int_equal(access(sb->dir, F_OK), -1);
    /* Once reaped, nothing of the sandbox is left, not even a zombie. */
    reap_orphans();
    char p[64];
    snprintf(p, sizeof p, "/proc/%d", (int)sb->pid);
    assert_int_equal(access(p, F_OK), -1);
    assert_int_equal(system("pgrep -f 'slee[p] 1000' >/dev/null"), 256); /* pgrep: none */
    assert_int_equal(provider_bwrap.destroy(sb, true, &err), 0);         /* idempotent */
}

/* ---- local ---- */

/* One file op (file.read / file.write) through the executor; returns its CLOSE result:
 * {"path", ...} or {"error": {"code", "message"}} (caller puts it). */
static json_object *
file_op(const sandbox_t *sb, const char *op, const char *path, const char *content)
{
    conn_t k;
    assert_int_equal(conn_open(&k, sb->socket_path, 10), 0);
    json_object *req = json_object_new_object();
    json_set_str(req, "op", op);
    json_set_str(req, "path", path);
    if (content)
        json_set_str(req, "content", content);
    k.ch = exec_client_open(k.c, req, NULL);
    json_object_put(req);
    assert_int_equal(pump(&k, 20, got_result), 0);
    json_object *res = json_object_get(k.result);
    conn_close(&k);
    return res;
}

static const char *
error_code(json_object *res)
{
    return json_get_str(json_get(res, "error"), "code", "");
}

/* The executor reaches every path the sandbox user may access under bwrap (--root /, as
 * upstream OpenHands: the sandbox is the boundary), and a host file stays out of reach; the local
 * provider, which has no sandbox, keeps file paths inside the workspace. */
static void
test_file_paths_reach_the_sandbox_under_bwrap_the_workspace_under_local(void **state)
{
    (void)state;
    need_bwrap();
    char host[PATH_MAX + 32];
    snprintf(host, sizeof host, "%s/host-secret.txt", g_state);
    FILE *f = fopen(host, "w");
    assert_non_null(f);
    fputs("host secret\n", f);
    fclose(f);

    char id[64];
    sandbox_spec_t s = spec_for("paths-bwrap", id, sizeof id);
    sandbox_t *sb = make(&provider_bwrap, &s);
    json_object *r = file_op(sb, "file.read", "/etc/hostname", NULL);
    assert_string_equal(json_get_str(r, "content", ""), "sandbox\n");
    json_object_put(r);
    r = file_op(sb, "file.write", "/tmp/out/x.txt", "in the sandbox");
    assert_string_equal(json_get_str(r, "path", ""), "/tmp/out/x.txt");
    json_object_put(r);
    r = file_op(sb, "file.read", host, NULL); /* the host's file is not in the sandbox */
    assert_string_equal(error_code(r), "not_found");
    json_object_put(r);
    r = file_op(sb, "file.write", host, "pwned"); /* written in the sandbox's own /tmp, if at all */
    json_object_put(r);
    r = file_op(sb, "file.write", "/usr/x", "pwned");
    assert_string_equal(error_code(r), "permission_denied"); /* read-only */
    json_object_put(r);
    char buf[64] = "";
    f = fopen(host, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "host secret\n");

    s = spec_for("paths-local", id, sizeof id);
    sb = make(&provider_local, &s);
    r = file_op(sb, "file.read", "/etc/hostname", NULL);
    assert_string_equal(error_code(r), "path_escape");
    json_object_put(r);
    r = file_op(sb, "file.read", host, NULL);
    assert_string_equal(error_code(r), "path_escape");
    json_object_put(r);
    r = file_op(sb, "file.write", "in-workspace.txt", "fine");
    assert_non_null(strstr(json_get_str(r, "path", ""), sb->workspace));
    json_object_put(r);
}

static void
test_local_runs_a_command_in_its_workspace(void **state)
{
    (void)state;
    char id[64];
    sandbox_spec_t s = spec_for("local", id, sizeof id);
    sandbox_t *sb = make(&provider_local, &s);
    assert_string_equal(sb->provider, "local");
    assert_non_null(strstr(sb->warning, "NO ISOLATION"));
    sandbox_t dup;
    err_t derr = {0};
    assert_int_equal(provider_local.create(&s, &dup, &derr), -ERR_BUSY); /* id in use */
    char *out = run_ok(sb, "pwd; id -u");
    char expect[PATH_MAX + 32];
    snprintf(expect, sizeof expect, "%s\n%d\n", sb->workspace, (int)geteuid());
    assert_string_equal(out, expect);
    free(out);
    err_t err = {0};
    assert_int_equal(provider_local.destroy(sb, true, &err), 0);
    assert_int_equal(provider_local.alive(sb), 0);
    assert_int_equal(access(sb->dir, F_OK), -1);
}

/* ---- main ---- */

int
main(void)
{
    if (fixture_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bwrap_identity_network_and_filesystem_isolation, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bwrap_sandbox_sees_no_host_state_path, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bwrap_memory_hog_is_killed_executor_survives, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bwrap_fork_bomb_is_contained_and_destroyed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bwrap_sandbox_survives_its_creator, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bwrap_alive_by_its_executor_not_its_top_pid, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bwrap_pause_freezes_resume_thaws, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bwrap_destroy_leaves_nothing_behind, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_paths_reach_the_sandbox_under_bwrap_the_workspace_under_local, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_local_runs_a_command_in_its_workspace, setup,
                                        teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fixture_done();
    return rc;
}
