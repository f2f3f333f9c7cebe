/* envd_proc.c — E2B's processes in a sandbox, each on an executor channel the gateway holds
 * for its life (envd_proc.h): starting them, their followers and credit, input, signals, their
 * end. Finding and taking them up: envd_proc_adopt.c; the event log: envd_proc_record.c. */
#include "envd_proc.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "envd_proc_int.h"
#include "gw.h"
#include "json_util.h"
#include "session_int.h"
#include "xalloc.h"

uint32_t
envd_proc_pid(const envd_proc_t *p)
{
    return p->pid;
}

/* ---- followers ---- */

static void
tell_text(envd_proc_t *p, const char *msg, size_t len)
{
    for (envd_follower_t *f = p->followers; f; f = f->next)
        f->on_event(f, msg, len);
}

static void
tell(envd_proc_t *p, json_object *msg)
{
    size_t len;
    const char *t = json_text(msg, &len);
    tell_text(p, t, len);
}

/* Lets every follower go, with why (NULL: the process ended and they heard its end). */
static void
let_go(envd_proc_t *p, const char *code, const char *message)
{
    while (p->followers) {
        envd_follower_t *f = p->followers;
        p->followers = f->next;
        f->next = NULL;
        f->proc = NULL;
        f->on_gone(f, code, message);
    }
}

static bool
followers_keep_up(const envd_proc_t *p)
{
    for (const envd_follower_t *f = p->followers; f; f = f->next)
        if (f->queued((envd_follower_t *)f) >= ENVD_FOLLOW_QUEUE)
            return false;
    return true;
}

void
envd_proc_drained(envd_proc_t *p)
{
    if (p->owed && p->st && followers_keep_up(p)) {
        session_stream_grant(p->st, p->owed);
        p->owed = 0;
    }
}

static json_object *
start_msg(const envd_proc_t *p)
{
    json_object *st = json_object_new_object(), *ev = json_object_new_object(),
                *m = json_object_new_object();
    json_set_int(st, "pid", p->pid);
    json_set(ev, "start", st);
    json_set(m, "event", ev);
    return m;
}

void
envd_proc_follow(envd_proc_t *p, envd_follower_t *f)
{
    f->proc = p;
    json_object *m = start_msg(p);
    size_t len;
    const char *t = json_text(m, &len);
    f->on_event(f, t, len);
    json_object_put(m);
    if (p->ended) {
        t = json_text(p->end, &len);
        f->on_event(f, t, len);
        f->proc = NULL;
        f->on_gone(f, NULL, NULL);
        return;
    }
    f->next = p->followers;
    p->followers = f;
}

void
envd_proc_unfollow(envd_follower_t *f)
{
    envd_proc_t *p = f->proc;
    if (!p)
        return;
    for (envd_follower_t **pp = &p->followers; *pp; pp = &(*pp)->next)
        if (*pp == f) {
            *pp = f->next;
            break;
        }
    f->proc = NULL;
    f->next = NULL;
    envd_proc_drained(p); /* it may have been the slow one */
}

/* ---- the executor's channel ---- */

static void
on_json(void *ud, json_object *msg)
{
    envd_proc_t *p = ud;
    if (p->adopting && !strcmp(json_get_str(msg, "event", ""), "attached")) {
        envd_proc_take_status(p, msg);
        envd_proc_adopted(p, NULL);
        return;
    }
    if (strcmp(json_get_str(msg, "event", ""), "started") != 0 || p->pid)
        return;
    p->pid = (uint32_t)json_get_int(msg, "pid", 0);
    envd_proc_record_start(p);
    json_object *m = start_msg(p);
    tell(p, m);
    json_object_put(m);
}

/* {"event":{"data":{"<stream>":"<base64>"}}}, built once as text for every follower (base64
 * needs no escaping). */
static void
output(envd_proc_t *p, const char *stream, const uint8_t *d, size_t n)
{
    buf_t m = BUF_INIT;
    buf_printf(&m, "{\"event\":{\"data\":{\"%s\":\"", stream);
    size_t at = m.len;
    char *b64 = buf_reserve(&m, BASE64_ENCODED_LEN(n) + 1);
    size_t b64_len = base64_encode(d, n, b64);
    buf_advance(&m, b64_len);
    buf_puts(&m, "\"}}}");
    envd_proc_record_output(p, stream, d, n, m.data + at, b64_len);
    if (p->followers)
        tell_text(p, m.data, m.len);
    buf_free(&m);
    if (p->owed || !followers_keep_up(p))
        p->owed += n;
    else
        session_stream_grant(p->st, n);
}

static void
on_stdout(void *ud, const uint8_t *d, size_t n)
{
    envd_proc_t *p = ud;
    output(p, p->pty ? "pty" : "stdout", d, n);
}

static void
on_stderr(void *ud, const uint8_t *d, size_t n)
{
    output(ud, "stderr", d, n);
}

static void
pump_input(envd_proc_t *p)
{
    while (p->st && p->input.len) {
        ssize_t k = session_stream_send(p->st, p->input.data, p->input.len);
        if (k <= 0)
            break;
        buf_consume(&p->input, (size_t)k);
    }
    if (p->st && !p->input.len && p->stdin_eof_queued) {
        p->stdin_eof_queued = false;
        session_stream_eof(p->st);
    }
}

static void
on_writable(void *ud)
{
    pump_input(ud);
}

/* Go's words for how a process ended (envd's EndEvent.status and error): "exit status N",
 * "signal: killed". */
static json_object *
end_msg(json_object *res, bool pty)
{
    json_object *end = json_object_new_object();
    char status[96];
    int code = 0;
    json_object *sig = json_get(res, "signal");
    if (sig && json_object_get_int(sig) > 0) {
        const char *name = strsignal(json_object_get_int(sig));
        char low[64];
        snprintf(low, sizeof low, "%s", name ? name : "unknown signal");
        low[0] = (char)(low[0] >= 'A' && low[0] <= 'Z' ? low[0] + 32 : low[0]);
        snprintf(status, sizeof status, "signal: %s", low);
        code = -1;
    } else {
        code = (int)json_get_int(res, "exit_code", 0);
        snprintf(status, sizeof status, "exit status %d", code);
    }
    (void)pty;
    if (code)
        json_set_int(end, "exitCode", code);
    json_set_bool(end, "exited", true);
    json_set_str(end, "status", status);
    if (code)
        json_set_str(end, "error", status);
    json_object *ev = json_object_new_object(), *m = json_object_new_object();
    json_set(ev, "end", end);
    json_set(m, "event", ev);
    return m;
}

static void
on_close(void *ud, json_object *res)
{
    envd_proc_t *p = ud;
    p->st = NULL;
    if (p->adopting && envd_proc_adopt_terminal(p, json_get(res, "error")))
        return; /* no such process: the executor may have a PTY of that pid */
    p->ended = true;
    p->ended_at = gw_now();
    buf_free(&p->input);
    json_object *e = json_get(res, "error");
    if (p->adopting) {
        /* the executor has no such process: nothing to keep */
        err_t err = {0};
        const char *code = json_get_str(e, "code", "not_found");
        if (!e || !strcmp(code, "not_found"))
            err_set(&err, ERR_NOT_FOUND, "process with %s %s not found", p->pid ? "pid" : "tag",
                    p->pid ? json_get_str(p->config, "want", "") : p->tag);
        else
            err_set(&err, ERR_UNAVAILABLE, "%s",
                    json_get_str(e, "message", "the runtime went away"));
        envd_proc_adopted(p, &err);
        envd_proc_forget(p);
        return;
    }
    if (e) {
        /* it never ran, or its runtime went away: no end event, the followers hear why */
        const char *code = json_get_str(e, "code", "internal");
        const char *msg = json_get_str(e, "message", "the process failed");
        const char *cwd = json_get_str(p->config, "cwd", "");
        char m[PATH_MAX + 64];
        if (!p->pid && cwd[0] && !strcmp(code, "not_found")) {
            /* envd's words for the one thing a start misses that way */
            snprintf(m, sizeof m, "cwd '%s' does not exist", cwd);
            code = "invalid";
            msg = m;
        }
        p->end = NULL;
        let_go(p, code, msg);
        return;
    }
    p->end = end_msg(res, p->pty);
    envd_proc_record_end(p, json_get(json_get(p->end, "event"), "end"));
    tell(p, p->end);
    let_go(p, NULL, NULL);
}

static const session_stream_cbs_t proc_cbs = {
    .on_json = on_json,
    .on_data = on_stdout,
    .on_stderr = on_stderr,
    .on_writable = on_writable,
};

void
envd_proc_free(envd_proc_t *p)
{
    buf_free(&p->input);
    json_object_put(p->config);
    json_object_put(p->end);
    free(p);
}

/* Opens req on p's session with p's callbacks and a window wider than the channel's default:
 * a stream of output is not held to one window per round trip through the gateway. */
int
envd_proc_reopen(envd_proc_t *p, json_object *req, err_t *err)
{
    p->st = session_stream_open(p->s, req, &proc_cbs, on_close, p, false, err);
    if (!p->st)
        return -1;
    size_t w = session_stream_recv_window(p->st);
    if (w < ENVD_PROC_WINDOW)
        session_stream_grant(p->st, ENVD_PROC_WINDOW - w);
    return 0;
}

int
envd_proc_open(envd_proc_t *p, json_object *req, err_t *err)
{
    if (envd_proc_reopen(p, req, err) < 0) {
        envd_proc_free(p);
        return -1;
    }
    p->next = p->s->envd_procs;
    p->s->envd_procs = p;
    return 0;
}

/* ---- the table ---- */

/* Forgets ended processes kept past ENVD_ENDED_KEEP; counts those still running. */
int
envd_proc_prune(gw_session_t *s)
{
    int running = 0;
    double now = gw_now();
    for (envd_proc_t **pp = &s->envd_procs; *pp;) {
        envd_proc_t *p = *pp;
        /* ended long enough ago, or cut off by its runtime going away (then a lookup takes
         * it up again from the executor, where it may well run on) */
        if (p->ended && !p->followers && !p->adopting &&
            (now - p->ended_at > ENVD_ENDED_KEEP || !p->end)) {
            *pp = p->next;
            envd_proc_free(p);
            continue;
        }
        running += !p->ended;
        pp = &p->next;
    }
    return running;
}

/* A JSON array of strings, or absent. */
static bool
strings_or_absent(json_object *v)
{
    if (!v)
        return true;
    if (!json_object_is_type(v, json_type_array))
        return false;
    for (size_t i = 0; i < json_object_array_length(v); i++)
        if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
            return false;
    return true;
}

/* {string: string}, or absent. */
static bool
env_or_absent(json_object *v)
{
    if (!v)
        return true;
    if (!json_object_is_type(v, json_type_object))
        return false;
    json_object_object_foreach(v, k, val)
    {
        (void)k;
        if (!json_object_is_type(val, json_type_string))
            return false;
    }
    return true;
}

envd_proc_t *
envd_proc_start(gw_session_t *s, json_object *start, const char *user, envd_follower_t *f,
                err_t *err)
{
    json_object *cfg = json_get(start, "process");
    json_object *cmd = json_get(cfg, "cmd"), *args = json_get(cfg, "args"),
                *envs = json_get(cfg, "envs"), *cwd = json_get(cfg, "cwd");
    json_object *pty = json_get(start, "pty"), *tag = json_get(start, "tag");
    if (!cfg || !json_object_is_type(cfg, json_type_object) || !cmd ||
        !json_object_is_type(cmd, json_type_string) || !json_object_get_string_len(cmd)) {
        err_set(err, ERR_BAD_REQ, "process.cmd is required: the program to run");
        return NULL;
    }
    if (!strings_or_absent(args) || !env_or_absent(envs) ||
        (cwd && !json_object_is_type(cwd, json_type_string)) ||
        (tag && !json_object_is_type(tag, json_type_string)) ||
        (pty && !json_object_is_type(pty, json_type_object))) {
        err_set(err, ERR_BAD_REQ,
                "process: args a list of strings, envs a map of strings, cwd and tag strings, "
                "pty an object");
        return NULL;
    }
    if (tag && json_object_get_string_len(tag) >= TAG_MAX) {
        err_set(err, ERR_BAD_REQ, "tag: at most %d bytes", TAG_MAX - 1);
        return NULL;
    }
    if (envd_proc_prune(s) >= ENVD_PROCS_MAX) {
        err_set(err, ERR_AT_CAPACITY,
                "this sandbox runs %d processes started through envd already (the limit)",
                ENVD_PROCS_MAX);
        return NULL;
    }
    json_object *argv = json_object_new_array();
    json_object_array_add(argv, json_object_get(cmd));
    for (size_t i = 0; args && i < json_object_array_length(args); i++)
        json_object_array_add(argv, json_object_get(json_object_array_get_idx(args, i)));
    json_object *req = json_object_new_object();
    json_set(req, "argv", argv);
    if (envs)
        json_set(req, "env", json_object_get(envs));
    if (cwd && json_object_get_string_len(cwd))
        json_set(req, "cwd", json_object_get(cwd));
    if (!strcmp(user, "root"))
        json_set_int(req, "user", 0);
    if (pty) {
        json_object *size = json_get(pty, "size");
        int64_t cols = json_get_int(size, "cols", 80), rows = json_get_int(size, "rows", 24);
        json_set_str(req, "op", "terminal");
        json_set_int(req, "cols", cols > 0 && cols < 10000 ? cols : 80);
        json_set_int(req, "rows", rows > 0 && rows < 10000 ? rows : 24);
        json_object *te = json_get(envs, "TERM");
        json_set_str(req, "term", te ? json_object_get_string(te) : "xterm-256color");
        /* an id: the executor keeps it when this gateway goes, for the one that takes the
         * sandbox over (terminal.attach by pid: envd_proc_adopt.c) */
        char id[40];
        gw_random_id(id, sizeof id, "e2b-");
        json_set_str(req, "id", id);
        json_set_int(req, "grace", g_gw.cfg.term_grace > 0 ? g_gw.cfg.term_grace : 1);
    } else {
        json_set_str(req, "op", "proc.spawn");
        json_set_bool(req, "stdin", json_get_bool(start, "stdin", false));
        if (tag) /* the executor keeps it: a gateway taking the process up finds it by it */
            json_set(req, "tag", json_object_get(tag));
    }
    envd_proc_t *p = xcalloc(1, sizeof *p);
    p->s = s;
    p->pty = pty != NULL;
    p->stdin_open = p->pty || json_get_bool(start, "stdin", false);
    p->config = json_object_new_object();
    json_set(p->config, "cmd", json_object_get(cmd));
    json_set(p->config, "args", args ? json_object_get(args) : json_object_new_array());
    json_set(p->config, "envs", envs ? json_object_get(envs) : json_object_new_object());
    if (cwd)
        json_set(p->config, "cwd", json_object_get(cwd));
    if (tag)
        snprintf(p->tag, sizeof p->tag, "%s", json_object_get_string(tag));
    int rc = envd_proc_open(p, req, err);
    json_object_put(req);
    if (rc < 0)
        return NULL;
    f->proc = p;
    p->followers = f;
    return p;
}

static int
not_running(const envd_proc_t *p, err_t *err)
{
    return err_set(err, ERR_NOT_FOUND, "process with pid %u not found (it ended)", p->pid);
}

int
envd_proc_input(envd_proc_t *p, bool pty, const void *data, size_t n, err_t *err)
{
    if (p->ended || !p->st)
        return not_running(p, err);
    if (pty != p->pty)
        return err_set(err, ERR_BAD_REQ,
                       pty ? "process %u has no PTY: send input.stdin"
                           : "process %u is a PTY: send input.pty",
                       p->pid);
    if (!p->stdin_open)
        return err_set(err, ERR_INTERNAL,
                       "error writing to stdin: stdin not enabled or closed (start the "
                       "command with stdin: true)");
    if (p->input.len + n > ENVD_INPUT_MAX)
        return err_set(err, ERR_TOO_BIG,
                       "process %u has %zu bytes of input it has not taken yet (the limit is %u)",
                       p->pid, p->input.len, ENVD_INPUT_MAX);
    buf_append(&p->input, data, n);
    pump_input(p);
    return 0;
}

int
envd_proc_close_stdin(envd_proc_t *p, err_t *err)
{
    if (p->ended || !p->st)
        return not_running(p, err);
    if (p->pty)
        return err_set(err, ERR_BAD_REQ,
                       "process %u is a PTY: it has no stdin to close (send Ctrl+D, 0x04)", p->pid);
    if (p->stdin_open) {
        p->stdin_open = false;
        p->stdin_eof_queued = true;
        pump_input(p);
    }
    return 0;
}

int
envd_proc_signal(envd_proc_t *p, int signo, err_t *err)
{
    if (p->ended || !p->st)
        return not_running(p, err);
    json_object *m = json_object_new_object();
    json_set_int(m, "signal", signo);
    int rc = session_stream_json(p->st, m);
    json_object_put(m);
    return rc < 0 ? err_set(err, ERR_UNAVAILABLE, "the sandbox's executor is not connected") : 0;
}

int
envd_proc_resize(envd_proc_t *p, unsigned cols, unsigned rows, err_t *err)
{
    if (p->ended || !p->st)
        return not_running(p, err);
    if (!p->pty)
        return err_set(err, ERR_BAD_REQ, "process %u has no PTY to resize", p->pid);
    if (!cols || !rows || cols > 10000 || rows > 10000)
        return err_set(err, ERR_BAD_REQ, "pty.size: cols and rows from 1 to 10000");
    json_object *m = json_object_new_object(), *rs = json_object_new_object();
    json_set_int(rs, "cols", cols);
    json_set_int(rs, "rows", rows);
    json_set(m, "resize", rs);
    int rc = session_stream_json(p->st, m);
    json_object_put(m);
    return rc < 0 ? err_set(err, ERR_UNAVAILABLE, "the sandbox's executor is not connected") : 0;
}

void
envd_procs_free(gw_session_t *s)
{
    while (s->envd_procs) {
        envd_proc_t *p = s->envd_procs;
        s->envd_procs = p->next;
        let_go(p, "unavailable", "the sandbox ended");
        envd_proc_free(p);
    }
}
