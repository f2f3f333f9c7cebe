/* proc.c — non-PTY processes with re-attachable output. See proc.h. */
#include "proc.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "frame.h"
#include "env.h"
#include "executor.h"
#include "json_util.h"
#include "proc_launch.h"
#include "ring.h"
#include "xalloc.h"

#define PROC_KEEP_EXITED 256 /* exited processes remembered for status queries */

typedef struct attach attach_t;

typedef struct {
    int fd;
    watch_t w;
    ring_t ring;
    bool eof;
} pstream_t;

struct proc {
    proc_t *next;
    char id[24];
    pid_t pid;
    json_object *argv;
    /* as the spawn asked (a client taking the process up later names it by them): its "tag",
     * "cwd" and "env" (NULL: none given) */
    json_object *tag, *cwd, *env;
    pstream_t out[2]; /* stdout, stderr */
    int in_fd;
    watch_t win;
    buf_t stdin_q;
    bool stdin_eof;
    bool exited;
    int exit_code, signo;
    double started, ended;
    attach_t *attached;
};

struct attach {
    attach_t *next;
    proc_t *p;
    channel_t *ch;
    uint64_t off[2];
    int64_t stdin_owed; /* stdin bytes received but not yet granted back */
};

static void proc_pump(proc_t *p);

int
signal_from_json(json_object *v)
{
    if (!v)
        return -1;
    if (json_object_is_type(v, json_type_int)) {
        int n = json_object_get_int(v);
        return n > 0 && n < NSIG ? n : -1;
    }
    if (!json_object_is_type(v, json_type_string))
        return -1;
    const char *s = json_object_get_string(v);
    if (strncasecmp(s, "SIG", 3) == 0)
        s += 3;
    static const struct {
        const char *name;
        int sig;
    } names[] = {{"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
                 {"TERM", SIGTERM}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"STOP", SIGSTOP},
                 {"CONT", SIGCONT}, {"TSTP", SIGTSTP}, {"ALRM", SIGALRM}, {"WINCH", SIGWINCH},
                 {"PIPE", SIGPIPE}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0)
            return names[i].sig;
    char *end;
    long n = strtol(s, &end, 10);
    return *s && !*end && n > 0 && n < NSIG ? (int)n : -1;
}

static proc_t *
proc_find(const char *id)
{
    for (proc_t *p = g_exec.procs; p; p = p->next)
        if (strcmp(p->id, id) == 0)
            return p;
    return NULL;
}

static json_object *
proc_status(const proc_t *p)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "id", p->id);
    json_set_int(o, "pid", p->pid);
    json_set(o, "argv", json_object_get(p->argv));
    if (p->tag)
        json_set(o, "tag", json_object_get(p->tag));
    if (p->cwd)
        json_set(o, "cwd", json_object_get(p->cwd));
    if (p->env)
        json_set(o, "env", json_object_get(p->env));
    json_set_bool(o, "running", !p->exited);
    json_set(o, "exit_code", p->exited && !p->signo ? json_object_new_int(p->exit_code) : NULL);
    json_set(o, "signal", p->signo ? json_object_new_int(p->signo) : NULL);
    json_set_int(o, "stdout_bytes", (int64_t)p->out[0].ring.end);
    json_set_int(o, "stderr_bytes", (int64_t)p->out[1].ring.end);
    json_set(o, "runtime",
             json_object_new_double((p->exited ? p->ended : loop_now()) - p->started));
    return o;
}

static bool
proc_done(const proc_t *p)
{
    return p->exited && p->out[0].eof && p->out[1].eof;
}

static void
proc_free(void *arg)
{
    proc_t *p = arg;
    for (int i = 0; i < 2; i++) {
        if (p->out[i].fd >= 0)
            close(p->out[i].fd);
        ring_free(&p->out[i].ring);
    }
    if (p->in_fd >= 0)
        close(p->in_fd);
    buf_free(&p->stdin_q);
    json_object_put(p->argv);
    json_object_put(p->tag);
    json_object_put(p->cwd);
    json_object_put(p->env);
    free(p);
}

/* Forgets the oldest exited, unattached processes beyond PROC_KEEP_EXITED. */
static void
proc_gc(void)
{
    int kept = 0;
    for (proc_t **pp = &g_exec.procs; *pp;) {
        proc_t *p = *pp;
        if (proc_done(p) && !p->attached && ++kept > PROC_KEEP_EXITED) {
            *pp = p->next;
            for (int i = 0; i < 2; i++)
                loop_watch_del(g_exec.loop, &p->out[i].w);
            loop_watch_del(g_exec.loop, &p->win);
            loop_defer_free(g_exec.loop, p, proc_free); /* events of this batch may name it */
            continue;
        }
        pp = &p->next;
    }
}

/* ---- attachments ---- */

static void
attach_remove(attach_t *a)
{
    for (attach_t **pp = &a->p->attached; *pp; pp = &(*pp)->next)
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    free(a);
}

static void
attach_deliver(attach_t *a)
{
    proc_t *p = a->p;
    for (int i = 0; i < 2; i++) {
        ring_t *r = &p->out[i].ring;
        if (a->off[i] < r->start) {
            json_object *ev = json_object_new_object();
            json_set_str(ev, "event", "truncated");
            json_set_str(ev, "stream", i ? "stderr" : "stdout");
            json_set_int(ev, "lost_from", (int64_t)a->off[i]);
            json_set_int(ev, "lost_to", (int64_t)r->start);
            chan_send_json(a->ch, ev);
            json_object_put(ev);
            a->off[i] = r->start;
        }
        while (a->off[i] < r->end && chan_credit(a->ch) > 0) {
            size_t n;
            const char *b = ring_peek(r, a->off[i], &n);
            if ((int64_t)n > chan_credit(a->ch))
                n = (size_t)chan_credit(a->ch);
            chan_send_data(a->ch, i ? FRAME_FLAG_STDERR : 0, b, n);
            a->off[i] += n;
        }
    }
    if (proc_done(p) && a->off[0] == p->out[0].ring.end && a->off[1] == p->out[1].ring.end) {
        channel_t *ch = a->ch;
        attach_remove(a);
        ch->owner = NULL;
        chan_close(ch, proc_status(p));
    }
}

static void
on_attach_resume(channel_t *ch)
{
    attach_t *a = ch->owner;
    if (a)
        proc_pump(a->p);
}

static void
on_attach_detach(channel_t *ch)
{
    attach_t *a = ch->owner;
    if (!a)
        return;
    proc_t *p = a->p;
    attach_remove(a);
    proc_pump(p);
}

static void
stdin_flush(proc_t *p)
{
    size_t written = 0;
    while (p->in_fd >= 0 && p->stdin_q.len) {
        ssize_t n = write(p->in_fd, p->stdin_q.data, p->stdin_q.len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN) { /* the process closed its stdin: discard */
                written += p->stdin_q.len;
                buf_clear(&p->stdin_q);
            }
            break;
        }
        buf_consume(&p->stdin_q, (size_t)n);
        written += (size_t)n;
    }
    /* Give the writers their credit back as their bytes reach the pipe. */
    for (attach_t *a = p->attached; a && written; a = a->next) {
        size_t g = a->stdin_owed < (int64_t)written ? (size_t)a->stdin_owed : written;
        if (g) {
            a->stdin_owed -= (int64_t)g;
            written -= g;
            chan_grant(a->ch, g);
        }
    }
    if (p->in_fd >= 0) {
        if (!p->stdin_q.len && p->stdin_eof) {
            loop_watch_del(g_exec.loop, &p->win);
            close(p->in_fd);
            p->in_fd = -1;
        } else {
            loop_watch_set(g_exec.loop, &p->win, p->stdin_q.len ? EPOLLOUT : 0);
        }
    }
}

static void
on_attach_data(channel_t *ch, const uint8_t *b, size_t n)
{
    attach_t *a = ch->owner;
    if (!a)
        return;
    if (a->p->in_fd < 0) {
        chan_grant(ch, n); /* stdin already closed: the bytes go nowhere, say so once */
        return;
    }
    buf_append(&a->p->stdin_q, b, n);
    a->stdin_owed += (int64_t)n;
    stdin_flush(a->p);
}

static void
on_attach_eof(channel_t *ch)
{
    attach_t *a = ch->owner;
    if (!a)
        return;
    a->p->stdin_eof = true;
    stdin_flush(a->p);
}

static void
on_attach_json(channel_t *ch, json_object *msg)
{
    attach_t *a = ch->owner;
    if (!a)
        return;
    int sig = signal_from_json(json_get(msg, "signal"));
    if (sig > 0 && !a->p->exited)
        kill(-a->p->pid, sig);
}

static const channel_ops_t attach_ops = {
    .data = on_attach_data,
    .eof = on_attach_eof,
    .json = on_attach_json,
    .resume = on_attach_resume,
    .detach = on_attach_detach,
};

/* ---- reading the pipes ---- */

/* A stream is read while every attached reader has room in the ring; with nobody attached
 * the ring simply keeps the newest bytes. */
static bool
stream_may_read(const proc_t *p, int i)
{
    for (const attach_t *a = p->attached; a; a = a->next)
        if (p->out[i].ring.end - a->off[i] >= p->out[i].ring.cap)
            return false;
    return true;
}

static void
on_pipe(watch_t *w, uint32_t events)
{
    (void)events;
    proc_t *p = w->data;
    int i = w == &p->out[1].w;
    pstream_t *st = &p->out[i];
    size_t room = st->ring.cap;
    for (const attach_t *a = p->attached; a; a = a->next)
        if (st->ring.cap - (size_t)(st->ring.end - a->off[i]) < room)
            room = st->ring.cap - (size_t)(st->ring.end - a->off[i]);
    if (room == 0) { /* a reader is a full ring behind: wait for it */
        proc_pump(p);
        return;
    }
    char *dst = ring_reserve(&st->ring, &room); /* read straight into the ring */
    ssize_t n = read(st->fd, dst, room);
    if (n > 0) {
        ring_commit(&st->ring, (size_t)n);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        loop_watch_del(g_exec.loop, &st->w);
        close(st->fd);
        st->fd = -1;
        st->eof = true;
    }
    proc_pump(p);
}

static void
on_stdin_writable(watch_t *w, uint32_t events)
{
    (void)events;
    stdin_flush(w->data);
}

/* Delivers to every reader, then decides which pipes to read. */
static void
proc_pump(proc_t *p)
{
    for (attach_t *a = p->attached, *next; a; a = next) {
        next = a->next;
        attach_deliver(a);
    }
    for (int i = 0; i < 2; i++)
        if (p->out[i].fd >= 0)
            loop_watch_set(g_exec.loop, &p->out[i].w, stream_may_read(p, i) ? EPOLLIN : 0);
    if (proc_done(p))
        proc_gc();
}

void
proc_on_child_exit(pid_t pid, int status)
{
    for (proc_t *p = g_exec.procs; p; p = p->next)
        if (p->pid == pid && !p->exited) {
            p->exited = true;
            p->ended = loop_now();
            if (WIFSIGNALED(status))
                p->signo = WTERMSIG(status);
            else
                p->exit_code = WEXITSTATUS(status);
            proc_pump(p);
            return;
        }
}

/* ---- ops ---- */

static attach_t *
attach_new(proc_t *p, channel_t *ch, uint64_t out_off, uint64_t err_off)
{
    attach_t *a = xcalloc(1, sizeof *a);
    a->p = p;
    a->ch = ch;
    a->off[0] = out_off;
    a->off[1] = err_off;
    a->next = p->attached;
    p->attached = a;
    ch->ops = &attach_ops;
    ch->owner = a;
    return a;
}

static void
send_event(channel_t *ch, const char *name, const proc_t *p)
{
    json_object *ev = proc_status(p);
    json_set_str(ev, "event", name);
    chan_send_json(ch, ev);
    json_object_put(ev);
}

void
proc_op_spawn(channel_t *ch, json_object *req)
{
    json_object *argv = json_get(req, "argv");
    const char *cmd = json_get_str(req, "cmd", NULL);
    size_t argc =
        argv && json_object_is_type(argv, json_type_array) ? json_object_array_length(argv) : 0;
    if (!argc && !cmd) {
        chan_close_error(ch, ERR_BAD_REQ,
                         "proc.spawn needs \"argv\" (array of strings) or \"cmd\" (shell text)");
        return;
    }
    json_object *args = json_object_new_array();
    if (argc) {
        for (size_t i = 0; i < argc; i++) {
            json_object *v = json_object_array_get_idx(argv, i);
            if (!json_object_is_type(v, json_type_string)) {
                json_object_put(args);
                chan_close_error(ch, ERR_BAD_REQ, "argv must contain only strings");
                return;
            }
            json_object_array_add(args, json_object_get(v));
        }
    } else {
        json_object_array_add(args, json_object_new_string(g_exec.shell));
        json_object_array_add(args, json_object_new_string("-c"));
        json_object_array_add(args, json_object_new_string(cmd));
    }
    const char *cwd = json_get_str(req, "cwd", g_exec.workspace);
    char dir[PATH_MAX];
    err_t err = {0};
    if (path_resolve(&g_exec.roots, g_exec.workspace, cwd, PATH_FOLLOW, dir, &err) < 0) {
        json_object_put(args);
        chan_close_error(ch, err.code, err.msg);
        return;
    }
    char **envp = env_copy(g_exec.base_env);
    env_set_json(&envp, json_get(req, "env"));
    int user = (int)json_get_int(req, "user", -1);
    if (user >= 0 && (uid_t)user != geteuid() && geteuid() != 0) {
        env_free(envp);
        json_object_put(args);
        chan_close_error(ch, EPERM,
                         "a process can run as another user only when the executor runs as root");
        return;
    }
    char **av = xcalloc(json_object_array_length(args) + 1, sizeof *av);
    for (size_t i = 0; i < json_object_array_length(args); i++)
        av[i] = (char *)json_object_get_string(json_object_array_get_idx(args, i));
    proc_launch_t l;
    int e = proc_launch(av, envp, dir, user, (int)json_get_int(req, "group", user), &l);
    free(av);
    env_free(envp);
    if (e) {
        char msg[PATH_MAX + 64];
        snprintf(msg, sizeof msg, "cannot start %s: %s",
                 json_object_get_string(json_object_array_get_idx(args, 0)), strerror(e));
        json_object_put(args);
        chan_close_error(ch, e, msg); /* a failed child is reaped by the SIGCHLD handler */
        return;
    }
    proc_t *p = xcalloc(1, sizeof *p);
    snprintf(p->id, sizeof p->id, "p%u", ++g_exec.next_proc_id);
    p->pid = l.pid;
    p->argv = args;
    json_object *tag = json_get(req, "tag"), *wd = json_get(req, "cwd"),
                *env = json_get(req, "env");
    if (tag && json_object_is_type(tag, json_type_string))
        p->tag = json_object_get(tag);
    if (wd && json_object_is_type(wd, json_type_string))
        p->cwd = json_object_get(wd);
    if (env && json_object_is_type(env, json_type_object))
        p->env = json_object_get(env);
    p->started = loop_now();
    p->in_fd = l.in;
    fcntl(p->in_fd, F_SETFL, O_NONBLOCK);
    loop_watch_add(g_exec.loop, &p->win, p->in_fd, 0, on_stdin_writable, p);
    int fds[2] = {l.out, l.err};
    for (int i = 0; i < 2; i++) {
        p->out[i].fd = fds[i];
        fcntl(fds[i], F_SETFL, O_NONBLOCK);
        fcntl(fds[i], F_SETPIPE_SZ, 1 << 20); /* fewer wake-ups for fast writers; best effort */
        ring_init(&p->out[i].ring, PROC_RING_BYTES);
        loop_watch_add(g_exec.loop, &p->out[i].w, fds[i], EPOLLIN, on_pipe, p);
    }
    if (!json_get_bool(req, "stdin", true)) {
        p->stdin_eof = true;
        stdin_flush(p);
    }
    p->next = g_exec.procs;
    g_exec.procs = p;
    attach_new(p, ch, 0, 0);
    send_event(ch, "started", p);
}

void
proc_op_attach(channel_t *ch, json_object *req)
{
    /* by id, or by pid or tag (a client that knows the process by those: E2B's selectors); the
     * newest first, as a pid may come round again */
    json_object *pid = json_get(req, "pid"), *tag = json_get(req, "tag");
    proc_t *p = NULL;
    if (pid || tag) {
        for (proc_t *q = g_exec.procs; q && !p; q = q->next)
            if (pid ? (int64_t)q->pid == json_object_get_int64(pid)
                    : q->tag &&
                          !strcmp(json_object_get_string(q->tag), json_object_get_string(tag)))
                p = q;
    } else {
        p = proc_find(json_get_str(req, "id", ""));
    }
    if (!p) {
        chan_close_error(ch, ERR_NOT_FOUND,
                         pid   ? "no process with that pid"
                         : tag ? "no process with that tag"
                               : "no process with that id");
        return;
    }
    /* live: from what it writes next, as a follower that joins late hears it */
    bool live = json_get_bool(req, "live", false);
    int64_t o = live ? (int64_t)p->out[0].ring.end : json_get_int(req, "stdout_offset", 0),
            e = live ? (int64_t)p->out[1].ring.end : json_get_int(req, "stderr_offset", 0);
    if (o < 0 || e < 0 || (uint64_t)o > p->out[0].ring.end || (uint64_t)e > p->out[1].ring.end) {
        chan_close_error(ch, ERR_BAD_REQ, "offset beyond the bytes the process has written");
        return;
    }
    attach_new(p, ch, (uint64_t)o, (uint64_t)e);
    send_event(ch, "attached", p);
    proc_pump(p);
}

void
proc_op_list(channel_t *ch, json_object *req)
{
    (void)req;
    json_object *arr = json_object_new_array();
    for (proc_t *p = g_exec.procs; p; p = p->next)
        json_object_array_add(arr, proc_status(p));
    json_object *r = json_object_new_object();
    json_set(r, "processes", arr);
    chan_close(ch, r);
}

void
proc_op_signal(channel_t *ch, json_object *req)
{
    proc_t *p = proc_find(json_get_str(req, "id", ""));
    int sig = signal_from_json(json_get(req, "signal"));
    if (!p) {
        chan_close_error(ch, ERR_NOT_FOUND, "no process with that id");
    } else if (sig < 0) {
        chan_close_error(ch, ERR_BAD_REQ, "unknown signal");
    } else if (p->exited) {
        chan_close_error(ch, ERR_NOT_FOUND, "the process has already exited");
    } else if (kill(-p->pid, sig) < 0 && kill(p->pid, sig) < 0) {
        chan_close_error(ch, errno, strerror(errno));
    } else {
        chan_close(ch, NULL);
    }
}

int
proc_count(void)
{
    int n = 0;
    for (proc_t *p = g_exec.procs; p; p = p->next)
        n++;
    return n;
}
