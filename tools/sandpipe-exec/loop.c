/* loop.c — sandpipe-exec's connection and blocking poll() loop around exec_client.
 * Signals reach the loop through a self-pipe; the terminal is restored at exit. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "io.h"
#include "spx.h"
#include "json_util.h"

#define CLI_READ_CHUNK (64 * 1024)

static int sig_pipe[2] = {-1, -1};
static struct termios saved_tty;
static int saved_tty_fd = -1;

/* ---- small helpers ---- */

void
spx_warn(const char *fmt, ...)
{
    va_list ap;
    fputs("sandpipe-exec: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void
spx_die(int code, const char *fmt, ...)
{
    va_list ap;
    spx_tty_restore();
    fputs("sandpipe-exec: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(code);
}

void
spx_tty_restore(void)
{
    if (saved_tty_fd >= 0) {
        tcsetattr(saved_tty_fd, TCSAFLUSH, &saved_tty);
        saved_tty_fd = -1;
    }
}

int
spx_tty_raw(int fd)
{
    struct termios t;
    if (tcgetattr(fd, &t) < 0)
        return -errno;
    saved_tty = t;
    saved_tty_fd = fd;
    atexit(spx_tty_restore);
    cfmakeraw(&t);
    if (tcsetattr(fd, TCSAFLUSH, &t) < 0)
        return -errno;
    return 0;
}

void
spx_print_json(int fd, json_object *obj, bool pretty)
{
    size_t len;
    if (json_object_is_type(obj, json_type_object) && json_object_object_length(obj) == 0)
        pretty = false; /* "{}", not "{\n}" */
    const char *s = json_object_to_json_string_length(
        obj,
        (pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN) |
            JSON_C_TO_STRING_NOSLASHESCAPE,
        &len);
    io_write_all(fd, s, len);
    io_write_all(fd, "\n", 1);
}

json_object *
spx_req(const char *op)
{
    json_object *r = json_object_new_object();
    json_set_str(r, "op", op);
    return r;
}

int
spx_parse_signal(const char *s)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (*s && !*end)
        return n > 0 && n < NSIG ? (int)n : -1;
    if (!strncasecmp(s, "SIG", 3))
        s += 3;
    for (int i = 1; i < NSIG; i++) {
        const char *name = sigabbrev_np(i);
        if (name && !strcasecmp(name, s))
            return i;
    }
    return -1;
}

bool
spx_report_error(const char *what, json_object *res)
{
    json_object *e = json_get(res, "error");
    if (!e)
        return false;
    const char *code = json_get_str(e, "code", NULL);
    const char *msg = json_get_str(e, "message", NULL);
    if (msg || code)
        spx_warn("%s: %s%s%s%s", what, msg ? msg : "", code ? " [" : "", code ? code : "",
                 code ? "]" : "");
    else
        spx_warn("%s: %s", what, json_object_to_json_string(e));
    return true;
}

void
spx_print_result(spx_t *c, json_object *res)
{
    c->done = true;
    if (c->sigints && !json_get(res, "error")) { /* detached by Ctrl-C: not a success */
        c->exit_code = 130;
        return;
    }
    if (spx_report_error("error", res)) {
        c->exit_code = CLI_EXIT_FAIL;
        return;
    }
    spx_print_json(STDOUT_FILENO, res, true);
    c->exit_code = 0;
}

/* ---- exec_client callbacks ---- */

static void
on_hello(void *ud, json_object *hello)
{
    spx_t *c = ud;
    if (c->verbose)
        spx_warn("connected: %s", json_text(hello, NULL));
    if (json_get_int(hello, "protocol", 1) != 1)
        spx_warn("warning: executor speaks protocol %lld, this client speaks 1",
                 (long long)json_get_int(hello, "protocol", 0));
}

static void
on_data(void *ud, uint32_t ch, bool is_stderr, const uint8_t *p, size_t n)
{
    spx_t *c = ud;
    if (ch != c->ch)
        return;
    if (c->hooks.on_data) {
        c->hooks.on_data(c, is_stderr, p, n);
        return;
    }
    if (io_write_all(is_stderr ? STDERR_FILENO : STDOUT_FILENO, p, n) < 0) {
        c->done = true; /* stdout closed (e.g. piped into head): stop quietly */
        c->exit_code = CLI_EXIT_FAIL;
    }
}

static void
on_json(void *ud, uint32_t ch, json_object *msg)
{
    spx_t *c = ud;
    if (ch == 0) {
        if (c->verbose)
            spx_warn("connection message: %s", json_object_to_json_string(msg));
        return;
    }
    if (ch != c->ch)
        return;
    if (c->hooks.on_json)
        c->hooks.on_json(c, msg);
    else
        spx_print_json(STDOUT_FILENO, msg, false);
}

static void
on_eof(void *ud, uint32_t ch)
{
    spx_t *c = ud;
    if (ch == c->ch && c->hooks.on_eof)
        c->hooks.on_eof(c);
}

static void
on_close(void *ud, uint32_t ch, json_object *res)
{
    spx_t *c = ud;
    if (ch != c->ch) {
        spx_report_error("helper request failed", res);
        return;
    }
    if (c->hooks.on_close)
        c->hooks.on_close(c, res);
    else
        spx_print_result(c, res);
    c->done = true;
}

static void
on_error(void *ud, uint32_t ch, json_object *e)
{
    (void)ud;
    char what[64];
    snprintf(what, sizeof(what), "executor error on channel %u", ch);
    if (!spx_report_error(what, e))
        spx_warn("%s: %s", what, json_object_to_json_string(e));
    /* A refused token: nothing on this connection will be answered. */
    const char *code = json_get_str(json_get(e, "error"), "code", "");
    if (ch == 0 && !strcmp(code, "permission_denied"))
        spx_die(CLI_EXIT_FAIL, "authentication failed");
}

static void
on_violation(void *ud, uint32_t ch, const char *what)
{
    (void)ud;
    spx_warn("protocol warning (channel %u): %s", ch, what);
}

static void
on_pong(void *ud, const uint8_t *p, size_t n)
{
    spx_t *c = ud;
    if (c->hooks.on_pong)
        c->hooks.on_pong(c, p, n);
}

static void
on_writable(void *ud, uint32_t ch, size_t avail)
{
    spx_t *c = ud;
    if (ch == c->ch && c->hooks.on_writable)
        c->hooks.on_writable(c, avail);
}

/* ---- connection ---- */

static int
connect_unix(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path))
        spx_die(CLI_EXIT_USAGE, "socket path too long: %s", path);
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        spx_die(CLI_EXIT_FAIL, "cannot connect to %s: %s", path, strerror(errno));
    return fd;
}

static int
connect_tcp(const char *addr)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || !colon[1])
        spx_die(CLI_EXIT_USAGE, "-c wants HOST:PORT, got \"%s\"", addr);
    char host[256];
    size_t hlen = (size_t)(colon - addr);
    if (hlen >= sizeof(host))
        spx_die(CLI_EXIT_USAGE, "host name too long");
    memcpy(host, addr, hlen);
    host[hlen] = '\0';
    if (host[0] == '[' && hlen > 2 && host[hlen - 1] == ']') { /* [::1]:port */
        memmove(host, host + 1, hlen - 2);
        host[hlen - 2] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai, *p;
    int r = getaddrinfo(host, colon + 1, &hints, &ai);
    if (r != 0)
        spx_die(CLI_EXIT_FAIL, "cannot resolve %s: %s", addr, gai_strerror(r));
    int fd = -1, saved = 0;
    for (p = ai; p; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (fd >= 0 && connect(fd, p->ai_addr, p->ai_addrlen) == 0)
            break;
        saved = errno;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0)
        spx_die(CLI_EXIT_FAIL, "cannot connect to %s: %s", addr, strerror(saved));
    return fd;
}

static void
on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(sig_pipe[1], &b, 1) < 0) {
        /* pipe full: the loop already has signals to handle */
    }
    errno = saved;
}

static void
signals_setup(void)
{
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        spx_die(CLI_EXIT_FAIL, "pipe: %s", strerror(errno));
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGWINCH, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static void
spx_connect(spx_t *c)
{
    static const exec_client_cbs_t cbs = {
        .on_hello = on_hello,
        .on_data = on_data,
        .on_json = on_json,
        .on_eof = on_eof,
        .on_close = on_close,
        .on_error = on_error,
        .on_pong = on_pong,
        .on_writable = on_writable,
        .on_violation = on_violation,
    };
    if (c->sock >= 0)
        return;
    signals_setup();
    c->sock = c->tcp_addr ? connect_tcp(c->tcp_addr) : connect_unix(c->unix_path);
    fcntl(c->sock, F_SETFL, fcntl(c->sock, F_GETFL) | O_NONBLOCK);
    c->ec = exec_client_new(&cbs, c);
    if (c->tcp_addr) {
        json_object *hello = json_object_new_object();
        json_set_str(hello, "token", c->token ? c->token : "");
        exec_client_send_hello(c->ec, hello, NULL);
        json_object_put(hello);
    }
    if (c->hooks.on_connect)
        c->hooks.on_connect(c);
}

/* ---- the loop ---- */

static void
handle_signals(spx_t *c)
{
    unsigned char sigs[32];
    ssize_t n;
    while ((n = read(sig_pipe[0], sigs, sizeof(sigs))) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (sigs[i] == SIGWINCH) {
                if (c->hooks.on_winch)
                    c->hooks.on_winch(c);
            } else if (sigs[i] == SIGINT && c->hooks.on_sigint) {
                c->hooks.on_sigint(c);
            } else if (sigs[i] == SIGINT && c->ch && ++c->sigints == 1) {
                /* First Ctrl-C: detach (cancels where the op says so) and wait for CLOSE. */
                exec_client_send_close(c->ec, c->ch, NULL);
            } else {
                spx_die(128 + sigs[i], "interrupted");
            }
        }
    }
}

static void
forward_input(spx_t *c)
{
    static char chunk[CLI_READ_CHUNK];
    size_t avail = exec_client_credit_avail(c->ec, c->ch);
    if (avail > sizeof(chunk))
        avail = sizeof(chunk);
    if (avail == 0)
        return;
    ssize_t n = read(c->input_fd, chunk, avail);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n < 0) {
        spx_warn("read: %s", strerror(errno));
        n = 0;
    }
    if (n == 0) {
        c->input_eof = true;
        if (c->input_send_eof)
            exec_client_send_eof(c->ec, c->ch);
        return;
    }
    ssize_t q = exec_client_send_data(c->ec, c->ch, chunk, (size_t)n);
    if (q != n) /* cannot happen: we read no more than the credit */
        spx_die(CLI_EXIT_FAIL, "internal: %zd of %zd input bytes queued", q, n);
}

static void
flush_output(spx_t *c)
{
    buf_t *out = exec_client_out(c->ec);
    while (out->len > 0) {
        ssize_t w = write(c->sock, out->data, out->len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            return;
        if (w < 0)
            spx_die(CLI_EXIT_FAIL, "write to executor: %s", strerror(errno));
        buf_consume(out, (size_t)w);
    }
}

static void
read_socket(spx_t *c)
{
    static char chunk[CLI_READ_CHUNK];
    ssize_t n = read(c->sock, chunk, sizeof(chunk));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n < 0)
        spx_die(CLI_EXIT_FAIL, "read from executor: %s", strerror(errno));
    if (n == 0)
        spx_die(CLI_EXIT_FAIL, "connection closed by the executor%s",
                c->ch ? " before the operation finished" : "");
    err_t e;
    if (exec_client_feed(c->ec, chunk, (size_t)n, &e) < 0)
        spx_die(CLI_EXIT_FAIL, "protocol error: %s", e.msg);
}

static int
loop(spx_t *c)
{
    while (!c->done) {
        flush_output(c);
        struct pollfd pfd[3];
        int np = 0;
        pfd[np++] = (struct pollfd){.fd = sig_pipe[0], .events = POLLIN};
        pfd[np++] = (struct pollfd){
            .fd = c->sock,
            .events = POLLIN | (exec_client_out(c->ec)->len ? POLLOUT : 0),
        };
        bool want_input = c->input_fd >= 0 && c->input_started && !c->input_eof && c->ch &&
                          exec_client_credit_avail(c->ec, c->ch) > 0;
        if (want_input)
            pfd[np++] = (struct pollfd){.fd = c->input_fd, .events = POLLIN};
        if (poll(pfd, (nfds_t)np, -1) < 0) {
            if (errno == EINTR)
                continue;
            spx_die(CLI_EXIT_FAIL, "poll: %s", strerror(errno));
        }
        if (pfd[0].revents)
            handle_signals(c);
        if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))
            read_socket(c);
        if (want_input && pfd[2].revents && !c->done)
            forward_input(c);
    }
    flush_output(c);
    exec_client_free(c->ec);
    c->ec = NULL;
    close(c->sock);
    c->sock = -1;
    return c->exit_code;
}

int
spx_run(spx_t *c, json_object *req)
{
    spx_connect(c);
    err_t e;
    c->ch = exec_client_open(c->ec, req, &e);
    json_object_put(req);
    if (!c->ch)
        spx_die(CLI_EXIT_FAIL, "cannot send the request: %s", e.msg);
    return loop(c);
}

int
spx_run_bare(spx_t *c)
{
    spx_connect(c);
    return loop(c);
}

void
spx_open_aside(spx_t *c, json_object *req)
{
    err_t e;
    if (!exec_client_open(c->ec, req, &e))
        spx_warn("cannot send the request: %s", e.msg);
    json_object_put(req);
}
