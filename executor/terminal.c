/* terminal.c — raw PTY channels. See terminal.h. */
#include "terminal.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "env.h"
#include "executor.h"
#include "json_util.h"
#include "pty.h"
#include "xalloc.h"

#define READ_CHUNK 65536

typedef struct terminal terminal_t;
struct terminal {
    terminal_t *next;
    channel_t *ch; /* NULL once the client left */
    pid_t pid;
    int master;
    watch_t w;
    buf_t typein;
    bool exited, eio;
    int status;
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
    free(t);
}

static void
term_release(terminal_t *t)
{
    if (t->master >= 0) {
        loop_watch_del(g_exec.loop, &t->w);
        close(t->master);
        t->master = -1;
    }
    loop_defer_free(g_exec.loop, t, term_unlink_free);
}

/* Ends the channel once the shell exited and its last output was delivered. */
static void
term_maybe_finish(terminal_t *t)
{
    if (!t->exited || (!t->eio && t->master >= 0))
        return;
    if (t->ch) {
        json_object *r = json_object_new_object();
        json_set_int(r, "exit_code",
                     WIFEXITED(t->status) ? WEXITSTATUS(t->status) : 128 + WTERMSIG(t->status));
        channel_t *ch = t->ch;
        t->ch = NULL;
        ch->owner = NULL;
        chan_close(ch, r);
    }
    term_release(t);
}

static void
term_update(terminal_t *t)
{
    if (t->master < 0)
        return;
    uint32_t ev = 0;
    if (!t->eio && (!t->ch || chan_credit(t->ch) > 0))
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
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        char tmp[READ_CHUNK];
        size_t want = sizeof tmp;
        if (t->ch && chan_credit(t->ch) < (int64_t)want)
            want = (size_t)chan_credit(t->ch);
        ssize_t n = want ? read(t->master, tmp, want) : -1;
        if (n > 0) {
            if (t->ch)
                chan_send_data(t->ch, 0, tmp, (size_t)n);
        } else if (want && (n == 0 || (errno != EAGAIN && errno != EINTR))) {
            t->eio = true;
        }
    }
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

static void
on_client_data(channel_t *ch, const uint8_t *p, size_t n)
{
    terminal_t *t = ch->owner;
    if (!t)
        return;
    buf_append(&t->typein, p, n);
    chan_grant(ch, n); /* keystrokes are tiny; the tty's own buffer is the bound */
    term_update(t);
}

static void
on_client_json(channel_t *ch, json_object *msg)
{
    terminal_t *t = ch->owner;
    json_object *rs = json_get(msg, "resize");
    if (!t || !rs)
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
    if (t)
        term_update(t);
}

static void
on_client_detach(channel_t *ch)
{
    terminal_t *t = ch->owner;
    if (!t)
        return;
    t->ch = NULL;
    if (!t->exited)
        kill(-t->pid, SIGHUP);
    term_update(t);
}

static const channel_ops_t term_ops = {
    .data = on_client_data,
    .json = on_client_json,
    .resume = on_client_resume,
    .detach = on_client_detach,
};

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
