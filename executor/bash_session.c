/* bash_session.c — persistent bash sessions on PTYs. See bash_session.h for the design.
 *
 * Byte path: PTY master -> `scan` (held while it may hold a partial echo or prompt marker)
 * -> `pending` (output not yet delivered) -> DATA frames on the action's channel (within
 * credit) and the observation text. The PTY is read only while pending+scan stay under
 * PENDING_MAX and no completed prompt awaits delivery. */
#include "bash_session.h"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "bash_obs.h"
#include "buf.h"
#include "cmd_split.h"
#include "env.h"
#include "executor.h"
#include "json_util.h"
#include "xalloc.h"

#define PENDING_MAX (1u << 20) /* output held for a reader before the PTY is paused */
#define OBS_MAX (4u << 20)     /* output kept for one observation (the tail wins) */
#define MARKER_MAX 16384       /* a prompt marker longer than this is not ours */
#define READ_CHUNK 65536
#define NONE ((size_t)-1)
#define PTY_COLS 1000 /* as upstream's tmux window: no wrapping of long lines */
#define PTY_ROWS 1000

typedef enum { BS_STARTING, BS_IDLE, BS_RUNNING, BS_DEAD } bash_state_t;
typedef enum { ACT_RUN, ACT_ENV } act_kind_t;

typedef struct {
    int exit_code;
    int bg_pid;
    char *user, *host, *path, *cwd;
} prompt_t;

typedef struct {
    bool active;
    act_kind_t kind;
    channel_t *ch;       /* NULL when the client went away */
    char *command;       /* the action's command text */
    char *to_type;       /* command to start once the shell is idle (NULL: none) */
    double timeout;
    int no_change;       /* seconds; 0 = off (blocking) */
    bool hidden, continuation, interrupted;
    buf_t obs;
    bool obs_dropped;
    ltimer_t hard, nochange;
} action_t;

struct bash_session {
    bash_session_t *next;
    char *name;
    pid_t pid;
    int master;
    watch_t w;
    bash_state_t state;
    bool dead_pending; /* bash exited; finish once pending output is delivered */
    int exit_status;
    char marker[48];
    size_t marker_len;
    buf_t scan, pending, typein;
    size_t done_at;  /* NONE, or bytes of pending before the last prompt marker */
    prompt_t prompt; /* as of the last delivered prompt */
    prompt_t marked; /* parsed from the marker at done_at */
    char *echo;      /* the line we typed, whose tty echo is stripped */
    size_t echo_len, echo_off;
    char *running;   /* command running in the shell */
    char cmdfile[PATH_MAX];
    action_t act;
};

static void drain(bash_session_t *s);
static void process_scan(bash_session_t *s);
static void update_io(bash_session_t *s);

/* ---- small helpers ---- */

static void
prompt_clear(prompt_t *p)
{
    free(p->user);
    free(p->host);
    free(p->path);
    free(p->cwd);
    memset(p, 0, sizeof *p);
}

static void
prompt_move(prompt_t *dst, prompt_t *src)
{
    prompt_clear(dst);
    *dst = *src;
    memset(src, 0, sizeof *src);
}

static bool
valid_name(const char *n)
{
    size_t len = strlen(n);
    if (len == 0 || len > 64)
        return false;
    for (const char *p = n; *p; p++)
        if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.'))
            return false;
    return true;
}

/* Appends s to b as a single-quoted shell word. */
static void
shell_quote(buf_t *b, const char *s)
{
    buf_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\'')
            buf_puts(b, "'\\''");
        else
            buf_append(b, s, 1);
    }
    buf_puts(b, "'");
}

/* Resolves `python` in PATH like `which python`. */
static char *
find_python(const char *path)
{
    if (!path)
        return xstrdup("");
    char *copy = xstrdup(path), *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        char *cand = xasprintf("%s/python", *dir ? dir : ".");
        struct stat st;
        if (access(cand, X_OK) == 0 && stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            free(copy);
            return cand;
        }
        free(cand);
    }
    free(copy);
    return xstrdup("");
}

/* ---- spawning ---- */

static int
write_rcfile(bash_session_t *s, const char *rc, err_t *err)
{
    buf_t b = BUF_INIT;
    buf_puts(&b, "[ -r ~/.bashrc ] && . ~/.bashrc\n");
    /* The marker: OSC "sp" with nonce, $?, $!, user, host, PATH, PWD; BEL ends it. */
    buf_printf(&b, "PS1='%s$?\x1f$!\x1f\\u\x1f\\h\x1f$PATH\x1f$PWD\a'\n", s->marker);
    buf_puts(&b, "PS2=''\nPROMPT_COMMAND=''\nunset HISTFILE\nset +o history\n"
                 "__sp_ret() { return $1; }\n");
    int fd = open(rc, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, b.data, b.len) != (ssize_t)b.len) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        buf_free(&b);
        return err_set(err, e, "cannot write %s: %s", rc, strerror(e));
    }
    close(fd);
    buf_free(&b);
    return 0;
}

static void
on_pty(watch_t *w, uint32_t events);

static int
session_spawn(bash_session_t *s, json_object *env, const char *cwd, err_t *err)
{
    uint8_t rnd[8];
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
        memset(rnd, 0x5a, sizeof rnd);
    int n = snprintf(s->marker, sizeof s->marker, "\x1b]sp\x1f");
    for (size_t i = 0; i < sizeof rnd; i++)
        n += snprintf(s->marker + n, sizeof s->marker - (size_t)n, "%02x", rnd[i]);
    n += snprintf(s->marker + n, sizeof s->marker - (size_t)n, "\x1f");
    s->marker_len = (size_t)n;

    char rc[PATH_MAX];
    snprintf(rc, sizeof rc, "%s/bashrc.%s", g_exec.rundir, s->name);
    snprintf(s->cmdfile, sizeof s->cmdfile, "%s/cmd.%s", g_exec.rundir, s->name);
    if (write_rcfile(s, rc, err) < 0)
        return -1;

    char **envp = env_copy(g_exec.base_env);
    env_set(&envp, "TERM", "xterm-256color");
    if (env && json_object_is_type(env, json_type_object)) {
        json_object_object_foreach(env, k, v) env_set(&envp, k, json_object_get_string(v));
    }
    const char *dir = cwd && *cwd ? cwd : g_exec.workspace;

    struct termios tio;
    memset(&tio, 0, sizeof tio);
    cfmakeraw(&tio);
    /* Cooked input with echo (so is_input text shows, as in upstream's tmux), but no output
     * post-processing: the stream carries exactly the bytes programs write. */
    tio.c_iflag = ICRNL | IXON | IUTF8;
    tio.c_oflag = 0;
    tio.c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN;
    tio.c_cflag = CS8 | CREAD;
    tio.c_cc[VINTR] = 3;
    tio.c_cc[VQUIT] = 28;
    tio.c_cc[VERASE] = 127;
    tio.c_cc[VKILL] = 21;
    tio.c_cc[VEOF] = 4;
    tio.c_cc[VSUSP] = 26;
    tio.c_cc[VMIN] = 1;
    cfsetispeed(&tio, B38400);
    cfsetospeed(&tio, B38400);
    struct winsize ws = {.ws_row = PTY_ROWS, .ws_col = PTY_COLS};

    int master;
    pid_t pid = forkpty(&master, NULL, &tio, &ws);
    if (pid < 0) {
        env_free(envp);
        return err_set(err, errno, "forkpty: %s", strerror(errno));
    }
    if (pid == 0) {
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (chdir(dir) < 0 && chdir(g_exec.workspace) < 0 && chdir("/") < 0)
            _exit(127);
        char *argv[] = {g_exec.shell, "--noediting", "--noprofile", "--rcfile", rc, "-i", NULL};
        execve(g_exec.shell, argv, envp);
        _exit(127);
    }
    env_free(envp);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    fcntl(master, F_SETFD, FD_CLOEXEC);
    s->pid = pid;
    s->master = master;
    s->state = BS_STARTING;
    s->dead_pending = false;
    s->done_at = NONE;
    loop_watch_add(g_exec.loop, &s->w, master, EPOLLIN, on_pty, s);
    return 0;
}

/* ---- the action lifecycle ---- */

static void
act_reset(bash_session_t *s)
{
    action_t *a = &s->act;
    loop_timer_stop(g_exec.loop, &a->hard);
    loop_timer_stop(g_exec.loop, &a->nochange);
    free(a->command);
    free(a->to_type);
    buf_free(&a->obs);
    memset(a, 0, sizeof *a);
}

static void
finish_action(bash_session_t *s, bash_end_t end)
{
    action_t *a = &s->act;
    channel_t *ch = a->ch;
    if (ch)
        ch->owner = NULL;
    if (a->kind == ACT_ENV) {
        if (ch)
            chan_close(ch, NULL);
        act_reset(s);
        return;
    }
    char *py = find_python(s->prompt.path);
    bash_obs_in_t in = {
        .command = a->command,
        .output = a->obs.data ? a->obs.data : "",
        .output_len = a->obs.len,
        .is_continuation = a->continuation,
        .end = end,
        .exit_code = s->prompt.exit_code,
        .timeout = a->timeout,
        .no_change_timeout = a->no_change ? a->no_change : g_exec.no_change_timeout,
        .pid = s->prompt.bg_pid,
        .username = s->prompt.user ? s->prompt.user : "",
        .hostname = s->prompt.host ? s->prompt.host : "",
        .working_dir = s->prompt.cwd ? s->prompt.cwd : g_exec.workspace,
        .py_interpreter_path = py,
        .hidden = a->hidden,
    };
    json_object *obs = bash_obs_build(&in);
    free(py);
    act_reset(s);
    if (ch)
        chan_close(ch, obs);
    else
        json_object_put(obs);
}

static void
on_hard_timeout(ltimer_t *t)
{
    bash_session_t *s = t->data;
    finish_action(s, BASH_END_HARD_TIMEOUT);
    update_io(s);
}

static void
on_nochange_timeout(ltimer_t *t)
{
    bash_session_t *s = t->data;
    finish_action(s, BASH_END_NO_CHANGE_TIMEOUT);
    update_io(s);
}

static void
arm_nochange(bash_session_t *s)
{
    if (s->act.active && s->act.no_change > 0 && s->act.kind == ACT_RUN)
        loop_timer_start(g_exec.loop, &s->act.nochange, (uint64_t)s->act.no_change * 1000,
                         on_nochange_timeout, s);
}

static void
type_bytes(bash_session_t *s, const void *p, size_t n)
{
    buf_append(&s->typein, p, n);
    update_io(s);
}

/* Starts a command in the idle shell. */
static void
start_command(bash_session_t *s, const char *text)
{
    int fd = open(s->cmdfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t len = strlen(text);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
        if (fd >= 0)
            close(fd);
        /* Nothing was typed: report it as the command's output. */
        const char *msg = "sandpipe: cannot write the command file\n";
        buf_append(&s->pending, msg, strlen(msg));
        return;
    }
    close(fd);
    buf_t line = BUF_INIT;
    buf_puts(&line, "__sp_s=$?;IFS= read -r -d '' __sp_c <");
    shell_quote(&line, s->cmdfile);
    buf_puts(&line, ";__sp_ret $__sp_s;eval \"$__sp_c\"\n");
    free(s->echo);
    s->echo_len = line.len;
    s->echo_off = 0;
    s->echo = buf_steal(&line);
    free(s->running);
    s->running = xstrdup(text);
    s->state = BS_RUNNING;
    type_bytes(s, s->echo, s->echo_len);
    arm_nochange(s);
}

/* Delivers pending output to the waiting action and moves the state machine on. */
static void
drain(bash_session_t *s)
{
    for (;;) {
        action_t *a = &s->act;
        if (!a->active)
            break;
        size_t limit = s->done_at != NONE ? s->done_at : s->pending.len;
        if (limit > 0) {
            size_t n = limit;
            if (a->ch) {
                int64_t cr = chan_credit(a->ch);
                if (cr <= 0)
                    break;
                if ((int64_t)n > cr)
                    n = (size_t)cr;
                if (a->kind == ACT_RUN)
                    chan_send_data(a->ch, 0, s->pending.data, n);
            }
            if (a->kind == ACT_RUN) {
                buf_append(&a->obs, s->pending.data, n);
                if (a->obs.len > OBS_MAX) {
                    /* Keep the tail, cut at a line start. */
                    size_t cut = a->obs.len - OBS_MAX / 2;
                    const char *nl = memchr(a->obs.data + cut, '\n', a->obs.len - cut);
                    buf_consume(&a->obs, nl ? (size_t)(nl - a->obs.data) + 1 : cut);
                    a->obs_dropped = true;
                }
            }
            buf_consume(&s->pending, n);
            if (s->done_at != NONE)
                s->done_at -= n;
            arm_nochange(s);
            continue;
        }
        if (s->done_at == 0) {
            /* The prompt came back: the command in the shell is finished. */
            s->done_at = NONE;
            prompt_move(&s->prompt, &s->marked);
            free(s->running);
            s->running = NULL;
            s->state = BS_IDLE;
            if (a->to_type) {
                char *t = a->to_type;
                a->to_type = NULL;
                start_command(s, t);
                free(t);
                process_scan(s);
                continue;
            }
            finish_action(s, a->interrupted ? BASH_END_INTERRUPTED : BASH_END_COMPLETED);
            process_scan(s); /* bytes after the marker may hold more */
            continue;
        }
        if (s->dead_pending && s->pending.len == 0) {
            s->prompt.exit_code = s->exit_status;
            finish_action(s, BASH_END_COMPLETED);
        }
        break;
    }
    if (s->state == BS_DEAD && !s->act.active) {
        buf_clear(&s->pending);
        buf_clear(&s->scan);
    }
    update_io(s);
}

/* ---- reading the PTY ---- */

static void
parse_marker(bash_session_t *s, const char *p, size_t n)
{
    /* exit \x1f bgpid \x1f user \x1f host \x1f PATH \x1f PWD */
    char *copy = xstrndup(p, n), *f[6] = {0};
    char *cur = copy;
    for (int i = 0; i < 5 && cur; i++) {
        f[i] = cur;
        cur = strchr(cur, '\x1f');
        if (cur)
            *cur++ = '\0';
    }
    f[5] = cur;
    prompt_clear(&s->marked);
    s->marked.exit_code = f[0] && *f[0] ? atoi(f[0]) : -1;
    s->marked.bg_pid = f[1] && *f[1] ? atoi(f[1]) : -1;
    s->marked.user = xstrdup(f[2] ? f[2] : "");
    s->marked.host = xstrdup(f[3] ? f[3] : "");
    s->marked.path = xstrdup(f[4] ? f[4] : "");
    s->marked.cwd = xstrdup(f[5] ? f[5] : "");
    free(copy);
}

/* Moves bytes from scan to pending, stripping our typed line's echo and prompt markers. */
static void
process_scan(bash_session_t *s)
{
    while (s->scan.len > 0 && s->done_at == NONE) {
        if (s->echo && s->echo_off < s->echo_len) {
            size_t want = s->echo_len - s->echo_off;
            size_t k = 0, lim = s->scan.len < want ? s->scan.len : want;
            while (k < lim && s->scan.data[k] == s->echo[s->echo_off + k])
                k++;
            if (k == lim) {
                buf_consume(&s->scan, k);
                s->echo_off += k;
                continue;
            }
            s->echo_off = s->echo_len; /* something else came first: stop stripping */
        }
        char *m = memmem(s->scan.data, s->scan.len, s->marker, s->marker_len);
        if (!m) {
            /* Hold back a tail that could start a marker. */
            size_t keep = 0;
            size_t maxk = s->scan.len < s->marker_len - 1 ? s->scan.len : s->marker_len - 1;
            for (size_t k = maxk; k > 0; k--)
                if (memcmp(s->scan.data + s->scan.len - k, s->marker, k) == 0) {
                    keep = k;
                    break;
                }
            buf_append(&s->pending, s->scan.data, s->scan.len - keep);
            buf_consume(&s->scan, s->scan.len - keep);
            break;
        }
        size_t at = (size_t)(m - s->scan.data);
        const char *body = m + s->marker_len;
        const char *end = memchr(body, '\a', s->scan.len - at - s->marker_len);
        if (!end) {
            if (s->scan.len - at > MARKER_MAX) { /* not ours after all */
                buf_append(&s->pending, s->scan.data, s->scan.len);
                buf_clear(&s->scan);
            } else {
                buf_append(&s->pending, s->scan.data, at);
                buf_consume(&s->scan, at);
            }
            break;
        }
        buf_append(&s->pending, s->scan.data, at);
        parse_marker(s, body, (size_t)(end - body));
        buf_consume(&s->scan, (size_t)(end - s->scan.data) + 1);
        if (s->state == BS_STARTING) {
            /* First prompt: whatever bash printed while starting is noise. */
            buf_clear(&s->pending);
            prompt_move(&s->prompt, &s->marked);
            s->state = BS_IDLE;
            if (s->act.active && s->act.to_type) {
                char *t = s->act.to_type;
                s->act.to_type = NULL;
                start_command(s, t);
                free(t);
            }
            continue;
        }
        s->done_at = s->pending.len;
    }
}

static void
read_pty(bash_session_t *s)
{
    while (s->pending.len + s->scan.len < PENDING_MAX && s->done_at == NONE) {
        ssize_t n = read(s->master, buf_reserve(&s->scan, READ_CHUNK), READ_CHUNK);
        if (n > 0) {
            buf_advance(&s->scan, (size_t)n);
            process_scan(s);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        /* EIO: the shell and every holder of the terminal are gone; SIGCHLD finishes it. */
        loop_watch_set(g_exec.loop, &s->w, 0);
        s->w.events = 0;
        break;
    }
}

static void
flush_typein(bash_session_t *s)
{
    while (s->typein.len) {
        ssize_t n = write(s->master, s->typein.data, s->typein.len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                buf_clear(&s->typein);
            break;
        }
        buf_consume(&s->typein, (size_t)n);
    }
}

static void
update_io(bash_session_t *s)
{
    if (s->w.fd < 0 || s->state == BS_DEAD)
        return;
    uint32_t ev = 0;
    if (s->pending.len + s->scan.len < PENDING_MAX && s->done_at == NONE)
        ev |= EPOLLIN;
    if (s->typein.len)
        ev |= EPOLLOUT;
    loop_watch_set(g_exec.loop, &s->w, ev);
}

static void
on_pty(watch_t *w, uint32_t events)
{
    bash_session_t *s = w->data;
    if (events & EPOLLOUT)
        flush_typein(s);
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        read_pty(s);
        drain(s);
    }
    update_io(s);
}

/* ---- channel callbacks ---- */

static void
act_resume(channel_t *ch)
{
    bash_session_t *s = ch->owner;
    if (s)
        drain(s);
}

static void
act_detach(channel_t *ch)
{
    bash_session_t *s = ch->owner;
    if (!s || s->act.ch != ch)
        return;
    /* The client left: the command keeps running, its output waits for the next action. */
    if (s->act.to_type && s->state == BS_IDLE) {
        char *t = s->act.to_type;
        s->act.to_type = NULL;
        start_command(s, t);
        free(t);
    }
    act_reset(s);
    update_io(s);
}

static const channel_ops_t act_ops = {
    .resume = act_resume,
    .detach = act_detach,
};

/* ---- public API ---- */

static void
session_free(bash_session_t *s)
{
    act_reset(s);
    prompt_clear(&s->prompt);
    prompt_clear(&s->marked);
    buf_free(&s->scan);
    buf_free(&s->pending);
    buf_free(&s->typein);
    free(s->echo);
    free(s->running);
    free(s->name);
    free(s);
}

bash_session_t *
bash_get(const char *name, bool create, json_object *env, const char *cwd, err_t *err)
{
    if (!name)
        name = BASH_DEFAULT_SESSION;
    bash_session_t *s;
    for (s = g_exec.sessions; s; s = s->next)
        if (strcmp(s->name, name) == 0)
            break;
    if (s && s->state == BS_DEAD && !s->act.active) {
        /* The shell exited (`exit`): start a new one where the old one was. */
        char *where = s->prompt.cwd ? xstrdup(s->prompt.cwd) : NULL;
        buf_clear(&s->pending);
        buf_clear(&s->scan);
        buf_clear(&s->typein);
        int rc = session_spawn(s, env, where, err);
        free(where);
        return rc < 0 ? NULL : s;
    }
    if (s || !create) {
        if (!s)
            err_set(err, ERR_NOT_FOUND, "no bash session named \"%s\"", name);
        return s;
    }
    if (!valid_name(name)) {
        err_set(err, ERR_BAD_REQ, "session names are 1-64 characters of [A-Za-z0-9_.-]");
        return NULL;
    }
    s = xcalloc(1, sizeof *s);
    s->name = xstrdup(name);
    s->w.fd = -1;
    s->master = -1;
    if (session_spawn(s, env, cwd, err) < 0) {
        session_free(s);
        return NULL;
    }
    s->next = g_exec.sessions;
    g_exec.sessions = s;
    return s;
}

const char *
bash_cwd(const bash_session_t *s)
{
    return s && s->prompt.cwd && *s->prompt.cwd ? s->prompt.cwd : g_exec.workspace;
}

/* Python's str.strip(): ASCII whitespace is what matters for commands. */
static char *
strip_copy(const char *t)
{
    while (*t && strchr(" \t\n\r\v\f", *t))
        t++;
    size_t n = strlen(t);
    while (n > 0 && strchr(" \t\n\r\v\f", t[n - 1]))
        n--;
    return xstrndup(t, n);
}

static void
reply_now(channel_t *ch, json_object *obs)
{
    chan_close(ch, obs);
}

void
bash_run_action(bash_session_t *s, channel_t *ch, json_object *action)
{
    json_object *args = json_get(action, "args");
    char *command = strip_copy(json_get_str(args, "command", ""));
    bool is_input = json_get_bool(args, "is_input", false);
    bool blocking = json_get_bool(args, "blocking", false);
    bool hidden = json_get_bool(args, "hidden", false);
    json_object *to = json_get(action, "timeout");
    double timeout = to ? json_object_get_double(to) : g_exec.default_timeout;

    if (s->act.active) {
        chan_close_error(ch, ERR_BUSY, "another action is in progress on this bash session");
        free(command);
        return;
    }
    bool prev_running = s->state == BS_RUNNING;
    bash_obs_in_t in = {.command = command, .output = "", .hidden = hidden,
                        .timeout = timeout, .no_change_timeout = g_exec.no_change_timeout,
                        .pid = -1, .exit_code = -1};
    if (!prev_running && !*command) {
        reply_now(ch, bash_obs_error(BASH_ERR_NO_PREVIOUS_FOR_LOGS, &in));
        free(command);
        return;
    }
    if (!prev_running && is_input) {
        reply_now(ch, bash_obs_error(BASH_ERR_NO_PREVIOUS_FOR_INPUT, &in));
        free(command);
        return;
    }
    cmd_list_t parts;
    cmd_split(command, &parts);
    if (parts.n > 1) {
        char *text = cmd_split_refusal(&parts);
        reply_now(ch, obs_error_new(text));
        free(text);
        cmd_list_free(&parts);
        free(command);
        return;
    }
    cmd_list_free(&parts);

    action_t *a = &s->act;
    bool special = strlen(command) == 3 && command[0] == 'C' && command[1] == '-';
    if (prev_running && s->done_at == NONE && !is_input && *command && !special) {
        /* Upstream refuses a new command while one runs, showing what it printed so far. */
        size_t n = s->pending.len;
        if ((int64_t)n > chan_credit(ch))
            n = (size_t)(chan_credit(ch) > 0 ? chan_credit(ch) : 0);
        chan_send_data(ch, 0, s->pending.data, n);
        in.output = s->pending.data ? s->pending.data : "";
        in.output_len = n;
        in.is_continuation = true;
        json_object *obs = bash_obs_error(BASH_ERR_PREVIOUS_STILL_RUNNING, &in);
        buf_consume(&s->pending, n);
        reply_now(ch, obs);
        update_io(s);
        free(command);
        return;
    }

    memset(a, 0, sizeof *a);
    a->active = true;
    a->kind = ACT_RUN;
    a->ch = ch;
    a->command = command;
    a->timeout = timeout;
    a->no_change = blocking ? 0 : g_exec.no_change_timeout;
    a->hidden = hidden;
    a->continuation = prev_running && (is_input || !*command);
    ch->ops = &act_ops;
    ch->owner = s;

    if (special) {
        char key = (char)(command[2] & 0x1f);
        a->interrupted = command[2] == 'c' || command[2] == 'C';
        if (s->state == BS_IDLE) {
            free(s->running);
            s->running = xstrdup(command);
            s->state = BS_RUNNING;
        }
        type_bytes(s, &key, 1);
    } else if (is_input) {
        type_bytes(s, command, strlen(command));
        type_bytes(s, "\n", 1);
    } else if (*command) {
        if (s->state == BS_IDLE)
            start_command(s, command);
        else
            a->to_type = xstrdup(command); /* after startup / the previous prompt */
    }
    if (timeout > 0)
        loop_timer_start(g_exec.loop, &a->hard, (uint64_t)(timeout * 1000), on_hard_timeout, s);
    if (!a->to_type) /* else armed when the shell is ready and the command typed */
        arm_nochange(s);
    drain(s);
}

void
bash_add_env(bash_session_t *s, channel_t *ch, json_object *env)
{
    if (s->act.active || s->state == BS_RUNNING) {
        chan_close_error(ch, ERR_BUSY, "the bash session is running a command");
        return;
    }
    buf_t text = BUF_INIT;
    json_object_object_foreach(env, k, v)
    {
        bool ok = *k && !('0' <= k[0] && k[0] <= '9');
        for (const char *p = k; *p; p++)
            ok = ok && (*p == '_' || ('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') ||
                        ('0' <= *p && *p <= '9'));
        if (!ok) {
            buf_free(&text);
            chan_close_error(ch, ERR_BAD_REQ, "environment variable names must match [A-Za-z_][A-Za-z0-9_]*");
            return;
        }
        const char *val = json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                   : json_object_to_json_string(v);
        buf_printf(&text, "export %s=", k);
        shell_quote(&text, val);
        buf_puts(&text, "\n");
        env_set(&g_exec.base_env, k, val);
    }
    if (!text.len) {
        chan_close(ch, NULL);
        return;
    }
    action_t *a = &s->act;
    memset(a, 0, sizeof *a);
    a->active = true;
    a->kind = ACT_ENV;
    a->ch = ch;
    a->command = buf_steal(&text);
    ch->ops = &act_ops;
    ch->owner = s;
    if (s->state == BS_IDLE)
        start_command(s, a->command);
    else
        a->to_type = xstrdup(a->command);
    drain(s);
}

int
bash_signal(bash_session_t *s, int sig, err_t *err)
{
    if (s->state == BS_DEAD || s->master < 0)
        return err_set(err, ERR_NOT_FOUND, "the bash session has no running shell");
    pid_t pg = tcgetpgrp(s->master);
    if (pg <= 0)
        pg = s->pid;
    if (kill(-pg, sig) < 0)
        return err_set(err, errno, "kill: %s", strerror(errno));
    return 0;
}

static void
session_shell_gone(bash_session_t *s)
{
    if (s->w.fd >= 0)
        loop_watch_del(g_exec.loop, &s->w);
    if (s->master >= 0)
        close(s->master);
    s->master = -1;
    s->pid = 0;
}

void
bash_on_child_exit(pid_t pid, int status)
{
    bash_session_t *s;
    for (s = g_exec.sessions; s; s = s->next)
        if (s->pid == pid)
            break;
    if (!s)
        return;
    /* Collect what the shell wrote before it went. */
    for (int i = 0; i < 64; i++) {
        ssize_t n = read(s->master, buf_reserve(&s->scan, READ_CHUNK), READ_CHUNK);
        if (n <= 0)
            break;
        buf_advance(&s->scan, (size_t)n);
    }
    process_scan(s);
    buf_append(&s->pending, s->scan.data, s->scan.len);
    buf_clear(&s->scan);
    s->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    session_shell_gone(s);
    s->state = BS_DEAD;
    s->dead_pending = true;
    if (s->act.active && s->act.to_type) {
        free(s->act.to_type);
        s->act.to_type = NULL;
    }
    drain(s);
}

json_object *
bash_list(void)
{
    json_object *arr = json_object_new_array();
    static const char *const names[] = {"starting", "idle", "running", "exited"};
    for (bash_session_t *s = g_exec.sessions; s; s = s->next) {
        json_object *o = json_object_new_object();
        json_set_str(o, "name", s->name);
        json_set_int(o, "pid", s->pid);
        json_set_str(o, "state", names[s->state]);
        json_set_str(o, "command", s->running);
        json_set_str(o, "cwd", bash_cwd(s));
        json_object_array_add(arr, o);
    }
    json_object *r = json_object_new_object();
    json_set(r, "sessions", arr);
    return r;
}

int
bash_close(const char *name, err_t *err)
{
    for (bash_session_t **pp = &g_exec.sessions; *pp; pp = &(*pp)->next) {
        bash_session_t *s = *pp;
        if (strcmp(s->name, name) != 0)
            continue;
        *pp = s->next;
        if (s->pid > 0)
            kill(-s->pid, SIGKILL);
        if (s->act.ch) {
            channel_t *ch = s->act.ch;
            ch->owner = NULL;
            chan_close_error(ch, ERR_NOT_FOUND, "the bash session was closed");
        }
        session_shell_gone(s);
        session_free(s);
        return 0;
    }
    return err_set(err, ERR_NOT_FOUND, "no bash session named \"%s\"", name);
}

int
bash_count(void)
{
    int n = 0;
    for (bash_session_t *s = g_exec.sessions; s; s = s->next)
        n++;
    return n;
}
