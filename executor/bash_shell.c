/* bash_shell.c — the shell side of a bash session: spawning bash on a PTY with our rcfile,
 * typing commands, reading the PTY and finding the prompt marker in what it writes.
 *
 * Byte path: PTY master -> `scan` (held while it may hold a partial echo or prompt marker)
 * -> `pending` (output not yet delivered; bash_session.c delivers it). The PTY is read only
 * while pending+scan stay under PENDING_MAX and no completed prompt awaits delivery. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "bash_session_int.h"
#include "clock.h"
#include "env.h"
#include "executor.h"
#include "pty.h"
#include "xalloc.h"

/* ---- small helpers ---- */

void
prompt_clear(prompt_t *p)
{
    free(p->user);
    free(p->host);
    free(p->path);
    free(p->cwd);
    memset(p, 0, sizeof *p);
}

void
prompt_move(prompt_t *dst, prompt_t *src)
{
    prompt_clear(dst);
    *dst = *src;
    memset(src, 0, sizeof *src);
}

/* Appends s to b as a single-quoted shell word. */
void
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

static char *
find_python_uncached(const char *path)
{
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

/* An answer of shell_find_python is reused for the same PATH this long, then looked up again:
 * a python installed or removed shows within it, and a burst of commands costs no system call
 * each (the lookup was an access() per command even when nothing changed). */
#define PYTHON_FRESH_NS 1000000000u

/* Resolves `python` in PATH like `which python`, after every command; see PYTHON_FRESH_NS. */
char *
shell_find_python(const char *path)
{
    static char *cached_path, *cached_py;
    static uint64_t resolved_at;
    if (!path)
        return xstrdup("");
    uint64_t now = clock_mono_ns();
    if (cached_path && strcmp(cached_path, path) == 0 && now - resolved_at < PYTHON_FRESH_NS)
        return xstrdup(cached_py);
    char *found = find_python_uncached(path);
    free(cached_path);
    free(cached_py);
    cached_path = xstrdup(path);
    cached_py = xstrdup(found);
    resolved_at = now;
    return found;
}

/* ---- spawning ---- */

static int
write_rcfile(bash_session_t *s, const char *rc, err_t *err)
{
    buf_t b = BUF_INIT;
    buf_puts(&b, "[ -r ~/.bashrc ] && . ~/.bashrc\n");
    /* The marker: OSC "sp" with nonce, $?, $!, user, host, PATH, PWD; BEL ends it. */
    buf_printf(&b, "PS1='%s$?\x1f$!\x1f\\u\x1f\\h\x1f$PATH\x1f$PWD\a'\n", s->marker);
    buf_puts(&b, "PS2=''\nPROMPT_COMMAND=''\nunset HISTFILE\nset +o history +H\n");
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

static void on_pty(watch_t *w, uint32_t events);

int
shell_spawn(bash_session_t *s, json_object *env, const char *cwd, err_t *err)
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
    env_set_json(&envp, env);
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
    /* The session's directory, else the workspace, else "/": a shell always starts. */
    const char *dirs[] = {dir, g_exec.workspace, "/", NULL};
    char *argv[] = {g_exec.shell, "--noediting", "--noprofile", "--rcfile", rc, "-i", NULL};
    pty_spawn_opts_t o = {.argv = argv,
                          .envp = envp,
                          .dirs = dirs,
                          .termios = &tio,
                          .size = {.ws_row = PTY_ROWS, .ws_col = PTY_COLS}};
    pid_t pid;
    int master = pty_spawn(&o, &pid, err);
    env_free(envp);
    if (master < 0)
        return master;
    s->pid = pid;
    s->master = master;
    s->state = BS_STARTING;
    s->dead_pending = false;
    s->eio = false;
    s->done_at = NONE;
    loop_watch_add(g_exec.loop, &s->w, master, EPOLLIN, on_pty, s);
    return 0;
}

static void flush_typein(bash_session_t *s);

void
shell_type(bash_session_t *s, const void *p, size_t n)
{
    buf_append(&s->typein, p, n);
    flush_typein(s); /* usually all of it, at once: no loop round trip on the hot path */
    shell_update_io(s);
}

/* Starts a command in the idle shell. */
/* A command fits on the terminal's input line as typed when it is one short line of
 * printable text; anything else (newlines, heredocs, long text, control bytes) goes through
 * the command file, since a canonical-mode tty line holds at most 4095 bytes and interprets
 * control characters. */
static bool
typeable(const char *text, size_t len)
{
    if (len == 0 || len > 1024)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
            return false;
    return true;
}

void
shell_start_command(bash_session_t *s, const char *text)
{
    size_t len = strlen(text);
    buf_t line = BUF_INIT;
    if (typeable(text, len)) {
        buf_append(&line, text, len);
        buf_puts(&line, "\n");
    } else {
        int fd = open(s->cmdfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
            if (fd >= 0)
                close(fd);
            /* Nothing was typed: report it as the command's output. */
            const char *msg = "sandpipe: cannot write the command file\n";
            buf_append(&s->pending, msg, strlen(msg));
            return;
        }
        close(fd);
        /* Sourced in the shell itself: cwd, variables, functions persist, and $? of the
         * previous command is still visible to this one. */
        buf_puts(&line, ". ");
        shell_quote(&line, s->cmdfile);
        buf_puts(&line, "\n");
    }
    free(s->echo);
    s->echo_len = line.len;
    s->echo_off = 0;
    s->echo = buf_steal(&line);
    free(s->running);
    s->running = xstrdup(text);
    s->state = BS_RUNNING;
    shell_type(s, s->echo, s->echo_len);
    session_arm_nochange(s);
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
void
shell_scan(bash_session_t *s)
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
                shell_start_command(s, t);
                free(t);
            }
            session_start_queued(s);
            continue;
        }
        if (s->state == BS_IDLE) {
            /* A prompt with no command running (SIGINT to the idle shell, a job notice):
             * nothing completes; take its metadata and go on. */
            prompt_move(&s->prompt, &s->marked);
            continue;
        }
        s->done_at = s->pending.len;
    }
}

#define INTERACTIVE_READ 1024

static void
read_pty(bash_session_t *s)
{
    while (s->pending.len + s->scan.len < PENDING_MAX && s->done_at == NONE) {
        ssize_t n = read(s->master, buf_reserve(&s->scan, READ_CHUNK), READ_CHUNK);
        if (n > 0) {
            buf_advance(&s->scan, (size_t)n);
            shell_scan(s);
            /* A small read (an echo, a line, a prompt) took all there was: the watch is
             * level-triggered, so more reports itself, and a read only to see EAGAIN would be
             * one more system call per wake-up. Streaming output comes in reads of a full tty
             * buffer (4 KiB) and keeps reading. */
            if (n < INTERACTIVE_READ)
                break;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        /* EIO: the shell and every holder of the terminal are gone; SIGCHLD finishes it. */
        s->eio = true;
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

void
shell_update_io(bash_session_t *s)
{
    if (s->w.fd < 0 || s->state == BS_DEAD)
        return;
    uint32_t ev = 0;
    if (s->pending.len + s->scan.len < PENDING_MAX && s->done_at == NONE && !s->eio)
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
        session_drain(s);
    }
    shell_update_io(s);
}
