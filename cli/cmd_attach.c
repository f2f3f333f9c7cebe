/* cmd_attach.c — `sandpipe attach SESSION`: an interactive terminal on the session's
 * /ws/sessions/{id}/terminal. The local tty goes into raw mode (uv_tty, which reopens the tty so
 * the shell's own descriptor stays blocking) and is restored on every way out: the normal path,
 * SIGTERM/SIGHUP/SIGINT/SIGQUIT (through the loop), exit() (atexit) and crashes (a handler that
 * resets the mode and re-raises). stdin → binary frames, binary frames → stdout, SIGWINCH →
 * {"resize":...}; {"type":"exit","exit_code":N} ends it with status N.
 * Backpressure: stdin is not read while more than ATTACH_TX_PAUSE bytes wait to be sent. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "json_util.h"

#define ATTACH_TX_PAUSE   (256u << 10)
#define ATTACH_READ_CHUNK 16384

typedef struct {
    cli_t *cli;
    ws_t *ws;
    uv_stream_t *in; /* stdin as a stream (tty or pipe); NULL for a file, read up front */
    bool is_tty, reading, in_eof;
    int signo;
    uv_tty_t in_tty;
    uv_pipe_t in_pipe;
    uv_signal_t sig_winch, sig_term, sig_hup, sig_int, sig_quit;
    char inbuf[ATTACH_READ_CHUNK];
} attach_t;

static void
attach_usage(FILE *f)
{
    fprintf(
        f,
        "usage: sandpipe attach SESSION\n"
        "An interactive shell in the session (its own terminal). Exits with the shell's status.\n"
        "When stdin is not a terminal, its end sends Ctrl-D (EOF) to the shell.\n");
}

static void
reset_tty_at_exit(void)
{
    uv_tty_reset_mode();
}

static void
on_fatal_signal(int signo)
{
    uv_tty_reset_mode(); /* async-signal-safe */
    signal(signo, SIG_DFL);
    raise(signo);
}

static void
window_size(int *cols, int *rows)
{
    struct winsize w;
    *cols = 80;
    *rows = 24;
    if ((ioctl(STDIN_FILENO, TIOCGWINSZ, &w) == 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0) &&
        w.ws_col > 0 && w.ws_row > 0) {
        *cols = w.ws_col;
        *rows = w.ws_row;
    }
}

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    attach_t *a = h->data;
    (void)suggested;
    *b = uv_buf_init(a->inbuf, sizeof a->inbuf);
}

static void
on_stdin(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    attach_t *a = s->data;
    if (n > 0) {
        ws_send(a->ws, true, b->base, (size_t)n);
        if (ws_pending(a->ws) > ATTACH_TX_PAUSE) {
            uv_read_stop(s);
            a->reading = false;
        }
    } else if (n < 0) {
        uv_read_stop(s);
        a->reading = false;
        a->in_eof = true;
        if (!a->is_tty)
            ws_send(a->ws, true, "\x04", 1);
    }
}

static void
on_drain(void *arg)
{
    attach_t *a = arg;
    if (a->in && !a->reading && !a->in_eof && uv_read_start(a->in, on_alloc, on_stdin) == 0)
        a->reading = true;
}

static void
send_resize(attach_t *a)
{
    int cols, rows;
    window_size(&cols, &rows);
    char msg[80];
    int n = snprintf(msg, sizeof msg, "{\"resize\":{\"cols\":%d,\"rows\":%d}}", cols, rows);
    ws_send(a->ws, false, msg, (size_t)n);
}

static void
on_signal(uv_signal_t *h, int signo)
{
    attach_t *a = h->data;
    if (signo == SIGWINCH) {
        send_resize(a);
        return;
    }
    a->signo = signo;
    ws_interrupt(a->ws);
}

/* stdin that libuv cannot poll (a regular file, /dev/null): sent whole, then EOF. */
static void
send_file_stdin(attach_t *a)
{
    ssize_t n;
    while ((n = read(STDIN_FILENO, a->inbuf, sizeof a->inbuf)) > 0)
        ws_send(a->ws, true, a->inbuf, (size_t)n);
    a->in_eof = true;
    ws_send(a->ws, true, "\x04", 1);
}

static int
open_stdin(attach_t *a, err_t *err)
{
    uv_handle_type t = uv_guess_handle(STDIN_FILENO);
    if (t == UV_TTY) {
        if (uv_tty_init(a->cli->loop, &a->in_tty, STDIN_FILENO, 1) < 0)
            return err_set(err, EIO, "cannot use the terminal on stdin");
        a->in = (uv_stream_t *)&a->in_tty;
        a->is_tty = true;
        atexit(reset_tty_at_exit);
        static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
        for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
            signal(fatal[i], on_fatal_signal);
        if (uv_tty_set_mode(&a->in_tty, UV_TTY_MODE_RAW) < 0)
            return err_set(err, EIO, "cannot put the terminal in raw mode");
        /* libuv's raw mode keeps ONLCR; the remote PTY already sends \r\n: pass bytes as they are
         * (uv_tty_reset_mode restores the termios saved before the first change). */
        struct termios tio;
        if (tcgetattr(STDIN_FILENO, &tio) == 0) {
            tio.c_oflag &= ~(tcflag_t)OPOST;
            tcsetattr(STDIN_FILENO, TCSANOW, &tio);
        }
    } else if (t == UV_NAMED_PIPE || t == UV_TCP) {
        uv_pipe_init(a->cli->loop, &a->in_pipe, 0);
        if (uv_pipe_open(&a->in_pipe, STDIN_FILENO) < 0)
            return err_set(err, EIO, "cannot read stdin");
        a->in = (uv_stream_t *)&a->in_pipe;
    } else {
        send_file_stdin(a);
        return 0;
    }
    a->in->data = a;
    if (uv_read_start(a->in, on_alloc, on_stdin) == 0)
        a->reading = true;
    return 0;
}

/* Runs the session until the shell exits; returns the exit status or < 0 with err set. */
static int
attach_loop(attach_t *a, err_t *err)
{
    int exit_code = -1;
    for (;;) {
        ws_msg_t m;
        int got = ws_recv(a->ws, &m, -1, err);
        if (got < 0) {
            if (a->signo)
                return 128 + a->signo;
            if (exit_code >= 0)
                return exit_code;
            return -1;
        }
        if (m.binary) {
            int rc = io_write_all(STDOUT_FILENO, m.data, m.len);
            free(m.data);
            if (rc < 0)
                return err_set(err, -rc, "cannot write to stdout: %s", strerror(-rc));
            continue;
        }
        json_object *msg = json_parse_lossy(m.data, m.len, err);
        free(m.data);
        if (!msg || !json_object_is_type(msg, json_type_object)) {
            json_object_put(msg);
            return err_set(err, ERR_PROTO,
                           "the server sent a text message that is not a JSON object");
        }
        if (cli_is_error(msg, err)) {
            json_object_put(msg);
            return -1;
        }
        if (!strcmp(json_get_str(msg, "type", ""), "exit")) {
            int64_t code = json_get_int(msg, "exit_code", 1);
            exit_code = code >= 0 && code <= 255 ? (int)code : CLI_EXIT_FAIL;
            json_object_put(msg);
            return exit_code; /* the server closes next */
        }
        json_object_put(msg); /* unknown notices are ignored */
    }
}

int
cmd_attach(cli_t *cli, int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            attach_usage(stdout);
            return 0;
        }
        attach_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (argc - optind != 1)
        return cli_usage("attach", "takes one session id");
    attach_t att = {.cli = cli}, *a = &att;
    char path[256], suffix[64];
    int cols, rows;
    window_size(&cols, &rows);
    snprintf(suffix, sizeof suffix, "/terminal?cols=%d&rows=%d", cols, rows);
    if (cli_session_path(path, sizeof path, argv[optind], suffix) < 0)
        return cli_usage("attach", "\"%s\" is not a session id", argv[optind]);
    err_t err = {0};
    a->ws = cli_connect(cli, path, &err);
    if (!a->ws)
        return cli_fail("attach: %s", err.msg);
    ws_on_drain(a->ws, on_drain, a);
    uv_signal_t *sigs[] = {&a->sig_winch, &a->sig_term, &a->sig_hup, &a->sig_int, &a->sig_quit};
    const int signos[] = {SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        uv_signal_init(cli->loop, sigs[i]);
        sigs[i]->data = a;
        uv_signal_start(sigs[i], on_signal, signos[i]);
    }
    int status = open_stdin(a, &err);
    if (status == 0)
        status = attach_loop(a, &err);
    /* Restore the terminal before anything is printed. */
    if (a->is_tty)
        uv_tty_reset_mode();
    uv_handle_t *handles[7];
    size_t n = 0;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        handles[n++] = (uv_handle_t *)sigs[i];
    if (a->in)
        handles[n++] = (uv_handle_t *)a->in;
    cli_close_handles(cli, handles, n);
    ws_close(a->ws);
    if (status < 0)
        return cli_fail("attach: %s",
                        err.msg[0] ? err.msg : "the connection ended before the shell exited");
    return status;
}
