/* terminal.c — raw PTY channels. See terminal.h. */
#include "terminal.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "safe_id.h"
#include "buf.h"
#include "env.h"
#include "executor.h"
#include "frame.h"
#include "json_util.h"
#include "proc.h"
#include "pty.h"
#include "ring.h"
#include "xalloc.h"

#define READ_CHUNK 65536
#define GRACE_MAX  86400
/* Input credit goes back in steps: a CREDIT frame per keystroke cost a write here and a wake-up
 * in the gateway on every echo. Small next to the window (the gateway keeps 15/16 of it): a
 * paste still finds nearly all of it. */
#define GRANT_STEP (FRAME_DEFAULT_WINDOW / 16)

typedef struct terminal terminal_t;
struct terminal {
    terminal_t *next;
    channel_t *ch;                /* NULL while no client is attached */
    char id[TERMINAL_ID_MAX + 1]; /* "" for a terminal that ends with its client */
    pid_t pid;
    int master;
    watch_t w;
    buf_t typein;
    size_t ungranted;  /* input received on ch and not granted back yet */
    ring_t out;        /* the last TERMINAL_KEEP bytes of output, by offset */
    uint64_t sent;     /* output offset sent on ch */
    ltimer_t orphan;   /* hangs an orphaned terminal up once its grace is over */
    uint64_t grace_ms; /* how long it waits without a client */
    bool exited, eio, released;
    int status;
    int echo_told; /* 1: input shows, 0: hidden (tell_echo), -1: the client was not told */
};

static terminal_t *terminals;

static void
term_unlink_free(void *arg)
{
    terminal_t *t = arg;
    for (terminal_t **pp = &terminals; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    buf_free(&t->typein);
    ring_free(&t->out);
    free(t);
}

static void
term_close_master(terminal_t *t)
{
    if (t->master >= 0) {
        loop_watch_del(g_exec.loop, &t->w);
        close(t->master);
        t->master = -1;
    }
}

static void
term_release(terminal_t *t)
{
    if (t->released)
        return;
    t->released = true;
    term_close_master(t);
    loop_timer_stop(g_exec.loop, &t->orphan);
    loop_defer_free(g_exec.loop, t, term_unlink_free);
}

/* Ends the channel once the shell exited and its last output was delivered. An orphaned
 * terminal with an id keeps its last output and exit status for whoever takes it back. */
static void
term_maybe_finish(terminal_t *t)
{
    if (t->released || !t->exited || (!t->eio && t->master >= 0))
        return;
    term_close_master(t);
    if (t->ch) {
        if (t->sent < t->out.end)
            return; /* the last output goes out first (on the next credit) */
        json_object *r = json_object_new_object();
        json_set_int(r, "exit_code",
                     WIFEXITED(t->status) ? WEXITSTATUS(t->status) : 128 + WTERMSIG(t->status));
        if (WIFSIGNALED(t->status)) /* the shell's convention above; the signal itself here */
            json_set_int(r, "signal", WTERMSIG(t->status));
        channel_t *ch = t->ch;
        t->ch = NULL;
        ch->owner = NULL;
        chan_close(ch, r);
    } else if (t->id[0]) {
        return; /* waits for terminal.attach, or its grace */
    }
    term_release(t);
}

/* Sends kept output from t->sent on, within the credit. */
static void
term_pump(terminal_t *t)
{
    while (t->ch && t->sent < t->out.end) {
        int64_t credit = chan_credit(t->ch);
        size_t n = 0;
        const char *p = ring_peek(&t->out, t->sent, &n);
        if (credit <= 0 || !n)
            return;
        if ((int64_t)n > credit)
            n = (size_t)credit;
        chan_send_data(t->ch, 0, p, n);
        t->sent += n;
    }
}

/* A program that reads a secret (a password: getpass, sudo, ssh, read -s) turns ECHO off and
 * keeps the line discipline's canonical mode before it prints its prompt, and puts ECHO back
 * after (readline and full-screen programs turn both off: they echo what they want themselves).
 * The client hears of each change before the output read after it, so what is typed at such a
 * prompt is known as hidden (the gateway records no terminal_input of it). */
static void
tell_echo(terminal_t *t)
{
    struct termios tio;
    if (tcgetattr(t->master, &tio) < 0)
        return;
    int hidden = !(tio.c_lflag & ECHO) && (tio.c_lflag & ICANON);
    if ((hidden ? 0 : 1) == t->echo_told)
        return;
    t->echo_told = hidden ? 0 : 1;
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "hidden_input");
    json_set_bool(ev, "on", hidden);
    chan_send_json(t->ch, ev);
    json_object_put(ev);
}

/* Reads the PTY into the ring: with a client, only once all kept output went out and within
 * its credit (a client that stops reading pauses the shell); orphaned, freely, the oldest
 * bytes giving way past TERMINAL_KEEP (the client is told of the gap when it is back).
 * A PTY read returns at most what the line discipline holds (4095 bytes) however much the
 * shell wrote; reading again until EAGAIN or READ_CHUNK makes one DATA frame (one write here,
 * one wake-up and one WebSocket message in the gateway) of what were up to 16. */
static void
term_read(terminal_t *t)
{
    size_t want = READ_CHUNK;
    if (t->ch) {
        int64_t credit = chan_credit(t->ch);
        if (t->sent < t->out.end || credit <= 0)
            return;
        if ((int64_t)want > credit)
            want = (size_t)credit;
        tell_echo(t);
    }
    while (want) {
        size_t k = want;
        char *dst = ring_reserve(&t->out, &k);
        ssize_t n = read(t->master, dst, k);
        if (n > 0) {
            ring_commit(&t->out, (size_t)n);
            want -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || errno != EAGAIN)
            t->eio = true;
        return;
    }
}

static void
term_update(terminal_t *t)
{
    if (t->master < 0)
        return;
    uint32_t ev = 0;
    if (!t->eio && (!t->ch || (t->sent == t->out.end && chan_credit(t->ch) > 0)))
        ev |= EPOLLIN;
    if (t->typein.len)
        ev |= EPOLLOUT;
    loop_watch_set(g_exec.loop, &t->w, ev);
}

static void
on_term_io(watch_t *w, uint32_t events)
{
    terminal_t *t = w->data;
    if (events & EPOLLOUT) {
        ssize_t n = write(t->master, t->typein.data, t->typein.len);
        if (n > 0)
            buf_consume(&t->typein, (size_t)n);
        else if (n < 0 && errno != EAGAIN && errno != EINTR)
            buf_clear(&t->typein);
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        term_read(t);
    term_pump(t);
    term_update(t);
    term_maybe_finish(t);
}

void
terminal_on_child_exit(pid_t pid, int status)
{
    for (terminal_t *t = terminals; t; t = t->next)
        if (t->pid == pid && !t->exited) {
            t->exited = true;
            t->status = status;
            term_maybe_finish(t);
            return;
        }
}

/* Input goes to the PTY at once when nothing waits before it (a keystroke costs no EPOLLOUT
 * round), the rest when the PTY takes it. Credit goes back on receipt as before (keystrokes are
 * tiny; the tty's own buffer is the bound), in GRANT_STEP pieces. */
static void
on_client_data(channel_t *ch, const uint8_t *p, size_t n)
{
    terminal_t *t = ch->owner;
    if (!t)
        return;
    t->ungranted += n;
    if (t->ungranted >= GRANT_STEP) {
        chan_grant(ch, t->ungranted);
        t->ungranted = 0;
    }
    if (!t->typein.len && t->master >= 0) {
        ssize_t w;
        do
            w = write(t->master, p, n);
        while (w < 0 && errno == EINTR);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno != EAGAIN) {
            n = 0; /* the PTY is gone: the input goes with it, as in on_term_io */
        }
    }
    buf_append(&t->typein, p, n);
    term_update(t);
}

static void
on_client_json(channel_t *ch, json_object *msg)
{
    terminal_t *t = ch->owner;
    if (!t)
        return;
    /* a signal to the terminal's process group (E2B's pty.kill), as a proc's channel takes */
    int sig = json_get(msg, "signal") ? signal_from_json(json_get(msg, "signal")) : -1;
    if (sig > 0 && !t->exited)
        kill(-t->pid, sig);
    json_object *rs = json_get(msg, "resize");
    if (!rs)
        return;
    struct winsize ws = {.ws_col = (unsigned short)json_get_int(rs, "cols", 80),
                         .ws_row = (unsigned short)json_get_int(rs, "rows", 24)};
    if (ws.ws_col && ws.ws_row && t->master >= 0)
        ioctl(t->master, TIOCSWINSZ, &ws);
}

static void
on_client_resume(channel_t *ch)
{
    terminal_t *t = ch->owner;
    if (!t)
        return;
    term_pump(t);
    term_update(t);
    term_maybe_finish(t);
}

/* The client closed the terminal: hang it up; nobody takes it back. */
/* A kept terminal's end: its id forgotten, its shell hung up (if still there), finished when
 * its output is out. */
static void
hang_up(terminal_t *t)
{
    t->id[0] = '\0';
    if (!t->exited)
        kill(-t->pid, SIGHUP);
    term_update(t);
    term_maybe_finish(t);
}

static void
on_client_detach(channel_t *ch)
{
    terminal_t *t = ch->owner;
    if (!t)
        return;
    t->ch = NULL;
    ch->owner = NULL;
    hang_up(t);
}

static void
on_orphan_timeout(ltimer_t *tm)
{
    terminal_t *t = tm->data;
    hang_up(t);
}

/* The connection went away (its gateway died or restarts): a terminal with an id goes on,
 * orphaned, for its grace; terminal.attach takes it back. */
static void
on_client_lost(channel_t *ch)
{
    terminal_t *t = ch->owner;
    if (!t)
        return;
    if (!t->id[0]) {
        on_client_detach(ch);
        return;
    }
    t->ch = NULL;
    ch->owner = NULL;
    loop_timer_start(g_exec.loop, &t->orphan, t->grace_ms, on_orphan_timeout, t);
    term_update(t);
    term_maybe_finish(t);
}

static const channel_ops_t term_ops = {
    .data = on_client_data,
    .json = on_client_json,
    .resume = on_client_resume,
    .detach = on_client_detach,
    .lost = on_client_lost,
};

static terminal_t *
find(const char *id)
{
    for (terminal_t *t = terminals; t && id[0]; t = t->next)
        if (!t->released && !strcmp(t->id, id))
            return t;
    return NULL;
}

/* The newest terminal with an id (one that outlives its connection) whose shell is pid. */
static terminal_t *
find_pid(int64_t pid)
{
    for (terminal_t *t = terminals; t && pid > 0; t = t->next) /* newest first */
        if (!t->released && t->id[0] && t->pid == pid)
            return t;
    return NULL;
}

void
terminal_op_attach(channel_t *ch, json_object *req)
{
    /* by id, or by pid (E2B's connect by pid: the newest kept terminal of that shell) */
    int64_t pid = json_get_int(req, "pid", 0);
    terminal_t *t = json_get(req, "pid") ? find_pid(pid) : find(json_get_str(req, "id", ""));
    if (!t) {
        chan_close_error(ch, ERR_NOT_FOUND,
                         "no such terminal (it ended, was closed, or its grace ran out)");
        return;
    }
    /* live: from what it writes next */
    int64_t off =
        json_get_bool(req, "live", false) ? (int64_t)t->out.end : json_get_int(req, "offset", 0);
    if (off < 0 || (uint64_t)off > t->out.end) {
        char m[96];
        snprintf(m, sizeof m, "offset must be from 0 to %" PRIu64, t->out.end);
        chan_close_error(ch, ERR_BAD_REQ, m);
        return;
    }
    if (t->ch) { /* held by another connection: it loses the terminal */
        channel_t *old = t->ch;
        t->ch = NULL;
        old->owner = NULL;
        chan_close_error(old, ERR_BUSY, "another connection took the terminal over");
    }
    loop_timer_stop(g_exec.loop, &t->orphan);
    uint64_t from = (uint64_t)off < t->out.start ? t->out.start : (uint64_t)off;
    t->ch = ch;
    t->echo_told = -1; /* a client that attaches hears the state at the next read */
    t->sent = from;
    t->ungranted = 0; /* a new channel: its full window */
    ch->ops = &term_ops;
    ch->owner = t;
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "attached");
    json_set_int(ev, "pid", t->pid);
    json_set_int(ev, "offset", (int64_t)from);
    json_set_int(ev, "end", (int64_t)t->out.end);
    json_set_bool(ev, "exited", t->exited);
    chan_send_json(ch, ev);
    json_object_put(ev);
    term_pump(t);
    term_update(t);
    term_maybe_finish(t);
}

void
terminal_op_open(channel_t *ch, json_object *req)
{
    struct winsize ws = {.ws_col = (unsigned short)json_get_int(req, "cols", 80),
                         .ws_row = (unsigned short)json_get_int(req, "rows", 24)};
    if (!ws.ws_col || !ws.ws_row) {
        chan_close_error(ch, ERR_BAD_REQ, "cols and rows must be positive");
        return;
    }
    json_object *argv = json_get(req, "argv");
    size_t argc =
        argv && json_object_is_type(argv, json_type_array) ? json_object_array_length(argv) : 0;
    char **av = xcalloc(argc + 3, sizeof *av);
    if (argc) {
        for (size_t i = 0; i < argc; i++)
            av[i] = (char *)json_object_get_string(json_object_array_get_idx(argv, i));
    } else {
        av[0] = g_exec.shell;
        av[1] = "-l";
    }
    const char *id = json_get_str(req, "id", "");
    int64_t grace = json_get_int(req, "grace", 60);
    if (id[0] && (!safe_id_valid(id, TERMINAL_ID_MAX, "_.:-") || find(id))) {
        free(av);
        chan_close_error(ch, ERR_BAD_REQ,
                         find(id) ? "a terminal with this id exists"
                                  : "a terminal \"id\" is 1-32 characters of [A-Za-z0-9_.:-]");
        return;
    }
    if (grace < 1 || grace > GRACE_MAX) {
        free(av);
        chan_close_error(ch, ERR_BAD_REQ, "grace must be 1 to 86400 seconds");
        return;
    }
    const char *cwd = json_get_str(req, "cwd", g_exec.workspace);
    char dir[PATH_MAX];
    err_t err = {0};
    if (path_resolve(&g_exec.roots, g_exec.workspace, cwd, PATH_FOLLOW, dir, &err) < 0) {
        free(av);
        chan_close_error(ch, err.code, err.msg);
        return;
    }
    char **envp = env_copy(g_exec.base_env);
    env_set(&envp, "TERM", json_get_str(req, "term", "xterm-256color"));
    env_set_json(&envp, json_get(req, "env"));
    const char *dirs[] = {dir, NULL};
    pty_spawn_opts_t o = {.argv = av, .envp = envp, .search_path = true, .dirs = dirs, .size = ws};
    pid_t pid;
    int master = pty_spawn(&o, &pid, &err);
    free(av);
    env_free(envp);
    if (master < 0) {
        chan_close_error(ch, err.code, "forkpty failed");
        return;
    }
    terminal_t *t = xcalloc(1, sizeof *t);
    t->ch = ch;
    t->echo_told = 1; /* a new PTY echoes: its client is told when that changes */
    snprintf(t->id, sizeof t->id, "%s", id);
    t->grace_ms = (uint64_t)grace * 1000;
    ring_init(&t->out, TERMINAL_KEEP);
    t->pid = pid;
    t->master = master;
    t->next = terminals;
    terminals = t;
    ch->ops = &term_ops;
    ch->owner = t;
    loop_watch_add(g_exec.loop, &t->w, master, EPOLLIN, on_term_io, t);
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "started");
    json_set_int(ev, "pid", pid);
    chan_send_json(ch, ev);
    json_object_put(ev);
}
