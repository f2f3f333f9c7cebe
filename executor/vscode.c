/* vscode.c — the VS Code plugin (vscode.h). code-server's stdout and stderr are read as they
 * come (a full pipe would stop it) and only their last bytes kept: they say why it exited. It
 * counts as listening once the sandbox's listen table shows its port held by a process of its
 * group (not a connect(), which another program on that port would answer too). */
#include "vscode.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "env.h"
#include "executor.h"
#include "json_util.h"
#include "plugins.h"
#include "port_scan.h"
#include "proc_launch.h"
#include "utf8.h"

#define POLL_MS    100  /* how often a starting code-server is looked for among the listeners */
#define LAST_WORDS 1024 /* the end of its output kept */
#define OWNED_MAX  8    /* listeners of one port looked at (IPv4, IPv6, a few addresses) */

static struct {
    pid_t pid, pgid; /* its main process and group; 0 when not running */
    unsigned port;
    int out, err;
    watch_t w_out, w_err;
    char last[LAST_WORDS];
    size_t last_len;
    char why_stopped[160]; /* set when we stopped it (a start that took too long) */
    uint64_t started_at;
    long start_ms; /* how long it took to listen */
    ltimer_t poll;
    channel_t *waiters[VSCODE_WAITERS_MAX];
} vs = {.out = -1, .err = -1};

bool
vscode_find(char *out, size_t cap)
{
    const char *path = env_get(g_exec.base_env, "PATH");
    for (const char *p = path; p && *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && p[0] == '/' &&
            (size_t)snprintf(out, cap, "%.*s/code-server", (int)n, p) < cap &&
            access(out, X_OK) == 0)
            return true;
        p += n + (p[n] == ':');
    }
    snprintf(out, cap, "/usr/local/bin/code-server");
    return access(out, X_OK) == 0;
}

/* VSCODE_PORT of the session's environment (OpenHands' Runtime API sets it), else 60001. */
static unsigned
port_wanted(void)
{
    const char *v = env_get(g_exec.base_env, "VSCODE_PORT");
    char *end;
    long n = v && *v ? strtol(v, &end, 10) : 0;
    return n >= 1 && n <= 65535 && *end == '\0' ? (unsigned)n : VSCODE_PORT_DEFAULT;
}

/* ---- its output ---- */

static void
keep_last(const char *p, size_t n)
{
    if (n > sizeof vs.last) {
        p += n - sizeof vs.last;
        n = sizeof vs.last;
    }
    size_t keep = vs.last_len + n > sizeof vs.last ? sizeof vs.last - n : vs.last_len;
    memmove(vs.last, vs.last + vs.last_len - keep, keep);
    memcpy(vs.last + keep, p, n);
    vs.last_len = keep + n;
}

static void
close_pipe(watch_t *w, int *fd)
{
    if (*fd < 0)
        return;
    loop_watch_del(g_exec.loop, w);
    close(*fd);
    *fd = -1;
}

/* Reads what is there (at most 16 reads: back to the loop after that); EOF closes the pipe. */
static void
drain(watch_t *w, int *fd)
{
    char chunk[4096];
    for (int turn = 0; turn < 16 && *fd >= 0; turn++) {
        ssize_t r = read(*fd, chunk, sizeof chunk);
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (r <= 0) {
            close_pipe(w, fd);
            return;
        }
        keep_last(chunk, (size_t)r);
    }
}

static void
on_output(watch_t *w, uint32_t events)
{
    (void)events;
    drain(w, w == &vs.w_out ? &vs.out : &vs.err);
}

/* Its last non-empty line as valid UTF-8 of at most WORDS_MAX bytes, into out ("" none). */
#define WORDS_MAX 160
static void
last_line(char out[UTF8_REPAIRED_MAX(WORDS_MAX) + 1])
{
    size_t end = vs.last_len;
    while (end > 0 && strchr("\r\n \t", vs.last[end - 1]))
        end--;
    size_t start = end;
    while (start > 0 && vs.last[start - 1] != '\n')
        start--;
    size_t n = end - start > WORDS_MAX ? WORDS_MAX : end - start;
    size_t len = utf8_repair(vs.last + start, n, out);
    /* the plugin's reason holds 255 bytes: at most WORDS_MAX of them, no character split */
    out[utf8_complete_prefix(out, len < WORDS_MAX ? len : WORDS_MAX)] = '\0';
}

/* ---- the ones waiting for it ---- */

static void
on_waiter_detach(channel_t *ch)
{
    for (int i = 0; i < VSCODE_WAITERS_MAX; i++)
        if (vs.waiters[i] == ch)
            vs.waiters[i] = NULL;
}

static const channel_ops_t waiter_ops = {.detach = on_waiter_detach};

static json_object *
ready_reply(void)
{
    json_object *r = json_object_new_object();
    json_set_int(r, "port", vs.port);
    json_set_int(r, "pid", vs.pid);
    json_set_int(r, "start_ms", vs.start_ms);
    return r;
}

/* Answers every waiter: ready (code 0) or the error. */
static void
answer_waiters(int code, const char *msg)
{
    for (int i = 0; i < VSCODE_WAITERS_MAX; i++) {
        channel_t *ch = vs.waiters[i];
        if (!ch)
            continue;
        vs.waiters[i] = NULL;
        ch->owner = NULL;
        if (code)
            chan_close_error(ch, code, msg);
        else
            chan_close(ch, ready_reply());
    }
}

/* ---- starting ---- */

/* Whether the sandbox's listen table shows vs.port held by a process of code-server's group. */
static bool
listening(void)
{
    port_table_t t = PORT_TABLE_INIT;
    if (port_scan(&t) < 0)
        return false;
    port_sock_t *on_port[OWNED_MAX];
    size_t n = 0;
    for (size_t i = 0; i < t.n && n < OWNED_MAX; i++)
        if (t.v[i].port == vs.port)
            on_port[n++] = &t.v[i];
    bool ours = false;
    if (n) {
        port_scan_owners(on_port, n);
        for (size_t i = 0; i < n && !ours; i++)
            ours = on_port[i]->pid > 0 && getpgid(on_port[i]->pid) == vs.pgid;
    }
    port_table_free(&t);
    return ours;
}

static void
on_poll(ltimer_t *t)
{
    (void)t;
    if (!vs.pid)
        return;
    uint64_t took = loop_now_ms() - vs.started_at;
    if (listening()) {
        vs.start_ms = (long)took;
        plugins_set_state(PLUGIN_VSCODE, PLUGIN_RUNNING, vs.pid, vs.pgid, NULL);
        answer_waiters(0, NULL);
        return;
    }
    if (took >= VSCODE_START_MS) {
        /* the exit that follows tells the waiters, with these words */
        snprintf(vs.why_stopped, sizeof vs.why_stopped,
                 "code-server did not listen on 127.0.0.1:%u within %d s", vs.port,
                 VSCODE_START_MS / 1000);
        kill(-vs.pgid, SIGKILL);
        return;
    }
    loop_timer_start(g_exec.loop, &vs.poll, POLL_MS, on_poll, NULL);
}

static int
start(const char *path, err_t *err)
{
    vs.port = port_wanted();
    char bind[32];
    snprintf(bind, sizeof bind, "127.0.0.1:%u", vs.port);
    char *av[] = {(char *)path,
                  "--bind-addr",
                  bind,
                  "--auth",
                  "none",
                  "--disable-telemetry",
                  "--disable-update-check",
                  "--disable-workspace-trust",
                  g_exec.workspace,
                  NULL};
    char **env = env_copy(g_exec.base_env);
    /* code-server lets these override --bind-addr */
    env_unset(env, "PORT");
    env_unset(env, "CODE_SERVER_HOST");
    proc_launch_t l;
    int rc = proc_launch(av, env, g_exec.workspace, -1, -1, &l);
    env_free(env);
    if (rc != 0) {
        err_set(err, ERR_INTERNAL, "cannot start %s: %s", path, strerror(rc));
        plugins_set_state(PLUGIN_VSCODE, PLUGIN_EXITED, 0, 0, err->msg);
        return -1;
    }
    close(l.in); /* it reads nothing */
    vs.pid = vs.pgid = l.pid;
    vs.out = l.out;
    vs.err = l.err;
    vs.last_len = 0;
    vs.why_stopped[0] = '\0';
    vs.start_ms = 0;
    fcntl(vs.out, F_SETFL, fcntl(vs.out, F_GETFL) | O_NONBLOCK);
    fcntl(vs.err, F_SETFL, fcntl(vs.err, F_GETFL) | O_NONBLOCK);
    loop_watch_add(g_exec.loop, &vs.w_out, vs.out, EPOLLIN, on_output, NULL);
    loop_watch_add(g_exec.loop, &vs.w_err, vs.err, EPOLLIN, on_output, NULL);
    vs.started_at = loop_now_ms();
    plugins_set_state(PLUGIN_VSCODE, PLUGIN_STARTING, vs.pid, vs.pgid, NULL);
    loop_timer_start(g_exec.loop, &vs.poll, POLL_MS, on_poll, NULL);
    return 0;
}

void
vscode_op_start(channel_t *ch, json_object *req)
{
    (void)req;
    char path[PATH_MAX];
    if (!plugin_allowed(PLUGIN_VSCODE)) {
        chan_close_error(ch, ENOTSUP,
                         "VS Code is not among this session's plugins (its plugins list must "
                         "include vscode)");
        return;
    }
    if (!vs.pid && !vscode_find(path, sizeof path)) {
        chan_close_error(ch, ENOTSUP, VSCODE_MISSING);
        return;
    }
    if (vs.pid && plugins_state(PLUGIN_VSCODE) == PLUGIN_RUNNING) {
        chan_close(ch, ready_reply());
        return;
    }
    int slot = -1;
    for (int i = 0; i < VSCODE_WAITERS_MAX && slot < 0; i++)
        if (!vs.waiters[i])
            slot = i;
    if (slot < 0) {
        chan_close_error(ch, ERR_BUSY, "too many requests wait for VS Code to start");
        return;
    }
    err_t err = {0};
    if (!vs.pid && start(path, &err) < 0) {
        chan_close_error(ch, err.code, err.msg);
        return;
    }
    vs.waiters[slot] = ch;
    ch->ops = &waiter_ops;
    ch->owner = &vs;
}

void
vscode_status_extras(json_object *o)
{
    json_set_int(o, "port", vs.port ? vs.port : port_wanted());
    if (vs.start_ms)
        json_set_int(o, "start_ms", vs.start_ms);
}

void
vscode_on_child_exit(pid_t pid, int status)
{
    if (pid <= 0 || pid != vs.pid)
        return;
    kill(-vs.pgid, SIGKILL); /* what it started in its group must not keep the port */
    loop_timer_stop(g_exec.loop, &vs.poll);
    drain(&vs.w_out, &vs.out);
    drain(&vs.w_err, &vs.err);
    close_pipe(&vs.w_out, &vs.out);
    close_pipe(&vs.w_err, &vs.err);
    char why[256], words[UTF8_REPAIRED_MAX(WORDS_MAX) + 1];
    last_line(words);
    if (vs.why_stopped[0])
        snprintf(why, sizeof why, "%s", vs.why_stopped);
    else if (WIFSIGNALED(status))
        snprintf(why, sizeof why, "code-server was killed by signal %d%s%.160s", WTERMSIG(status),
                 words[0] ? ": " : "", words);
    else
        snprintf(why, sizeof why, "code-server exited with status %d%s%.160s", WEXITSTATUS(status),
                 words[0] ? ": " : "", words);
    vs.pid = vs.pgid = 0;
    vs.start_ms = 0;
    plugins_set_state(PLUGIN_VSCODE, PLUGIN_EXITED, 0, 0, why);
    answer_waiters(vs.why_stopped[0] ? ERR_TIMEOUT : ERR_INTERNAL, why);
}

void
vscode_shutdown(void)
{
    if (vs.pgid > 0)
        kill(-vs.pgid, SIGKILL);
    loop_timer_stop(g_exec.loop, &vs.poll);
    close_pipe(&vs.w_out, &vs.out);
    close_pipe(&vs.w_err, &vs.err);
    vs.pid = vs.pgid = 0;
}
