/* main.c — sandpipe-jupyter: runs IPython cells for the executor (executor/ipython.c) in one
 * Jupyter kernel it starts on the first cell, restarts when it died, and interrupts on timeout.
 * The executor writes one JSON request per line on stdin ({"op":"run","code","cwd","timeout"}
 * or {"op":"interrupt"}); the helper answers with JSON lines on stdout: {"ev":"kernel",...}
 * when a kernel is up, {"ev":"out","text"} as output arrives, {"ev":"done",...} when the cell
 * ended. A separate program so the executor maps neither libzmq nor OpenSSL: it is started only
 * in sessions that run cells. Blocking, single-threaded: one cell at a time. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "clock.h"
#include "buf.h"
#include "json_util.h"
#include "kernel.h"

#define LINE_MAX_BYTES   (64 << 20) /* one request: a cell of up to 64 MiB */
#define START_TIMEOUT_MS 60000      /* a cold kernel start on a loaded machine */
#define SETTLE_MS        3000       /* an interrupted cell gets this long to end, then restart */

typedef enum { CELL_DONE, CELL_TIMEOUT, CELL_DEAD } cell_end_t;

typedef struct {
    buf_t text;
    json_object *images; /* array of data URLs */
    bool emit;           /* stream text to the executor as it comes */
} cell_out_t;

static struct {
    kernel_t k;
    char dir[PATH_MAX];
    const char *python;
    bool agent_skills;
    char executable[PATH_MAX]; /* the kernel's sys.executable */
    char synced_cwd[PATH_MAX];
    char unsettled[JW_ID_LEN + 1]; /* a timed-out cell that may still be running */
    buf_t in;                      /* stdin bytes not yet a whole line */
    buf_t later;                   /* requests that came while a cell ran, in order */
    bool in_eof;
} g;

static void
emit(json_object *ev)
{
    int rc = json_write_line(1, ev);
    json_object_put(ev);
    if (rc < 0)
        exit(0); /* the executor is gone */
}

/* Reads what stdin has (once; poll said readable) and returns the next whole line (caller
 * frees), or NULL. */
static char *
next_line(bool do_read)
{
    if (do_read && !g.in_eof) {
        char *p = buf_reserve(&g.in, 65536);
        ssize_t r = read(0, p, 65536);
        if (r > 0)
            buf_advance(&g.in, (size_t)r);
        else if (r == 0 || errno != EINTR)
            g.in_eof = true;
        if (g.in.len > LINE_MAX_BYTES)
            g.in_eof = true; /* not a client we understand */
    }
    char *nl = g.in.data ? memchr(g.in.data, '\n', g.in.len) : NULL;
    if (!nl)
        return NULL;
    size_t n = (size_t)(nl - g.in.data);
    char *line = malloc(n + 1);
    if (!line)
        abort();
    memcpy(line, g.in.data, n);
    line[n] = '\0';
    buf_consume(&g.in, n + 1);
    return line;
}

static void
out_text(cell_out_t *o, const char *t)
{
    if (!t || !*t)
        return;
    buf_puts(&o->text, t);
    if (o->emit) {
        json_object *ev = json_object_new_object();
        json_set_str(ev, "ev", "out");
        json_set_str(ev, "text", t);
        emit(ev);
    }
}

/* One iopub message of our cell: output as upstream's execute_server.py collects it. */
static void
on_output(const jw_msg_t *m, cell_out_t *o, bool *idle)
{
    const char *type = m->msg_type;
    json_object *c = m->content;
    if (strcmp(type, "stream") == 0) {
        out_text(o, json_get_str(c, "text", ""));
    } else if (strcmp(type, "error") == 0) {
        json_object *tb = json_get(c, "traceback");
        buf_t t = BUF_INIT;
        size_t n = json_object_is_type(tb, json_type_array) ? json_object_array_length(tb) : 0;
        for (size_t i = 0; i < n; i++) {
            if (i)
                buf_puts(&t, "\n");
            buf_puts(&t, json_object_get_string(json_object_array_get_idx(tb, i)));
        }
        if (t.data)
            out_text(o, t.data);
        buf_free(&t);
    } else if (strcmp(type, "execute_result") == 0 || strcmp(type, "display_data") == 0) {
        json_object *data = json_get(c, "data");
        out_text(o, json_get_str(data, "text/plain", ""));
        const char *png = json_get_str(data, "image/png", NULL);
        if (png && o->images) {
            buf_t url = BUF_INIT;
            buf_puts(&url, "data:image/png;base64,");
            buf_puts(&url, png);
            json_object_array_add(o->images, json_object_new_string_len(url.data, (int)url.len));
            buf_free(&url);
        }
    } else if (strcmp(type, "status") == 0 &&
               strcmp(json_get_str(c, "execution_state", ""), "idle") == 0) {
        *idle = true;
    }
}

/* Handles stdin while a cell runs: interrupts act at once; anything else waits its turn. */
static void
poll_stdin(bool readable)
{
    char *line;
    while ((line = next_line(readable))) {
        readable = false;
        err_t e = {0};
        json_object *r = json_parse_lossy(line, strlen(line), &e);
        if (r && strcmp(json_get_str(r, "op", ""), "interrupt") == 0)
            kernel_interrupt(&g.k);
        else
            buf_printf(&g.later, "%s\n", line);
        json_object_put(r);
        free(line);
    }
}

/* Runs code; ends when the kernel replied and went idle for it (both: iopub and shell are
 * separate sockets, so the reply may overtake the last output), at the deadline, or when the
 * kernel died. */
static cell_end_t
run_cell(const char *code, long timeout_ms, cell_out_t *o, char id[JW_ID_LEN + 1])
{
    json_object *c = json_object_new_object();
    json_set_str(c, "code", code);
    json_set_bool(c, "silent", false);
    json_set_bool(c, "store_history", false);
    json_set(c, "user_expressions", json_object_new_object());
    json_set_bool(c, "allow_stdin", false);
    /* true would make the kernel abort the requests that reach it just after an error (an
     * interrupted cell's KeyboardInterrupt included): the next cell would come back empty. We
     * send one cell at a time, so there is never a queue to abort. */
    json_set_bool(c, "stop_on_error", false);
    kernel_send(&g.k, g.k.shell, "execute_request", c, id);
    json_object_put(c);
    long deadline = timeout_ms > 0 ? (long)clock_mono_ms() + timeout_ms : 0;
    bool replied = false, idle = false;
    while (!(replied && idle)) {
        if (!kernel_alive(&g.k))
            return CELL_DEAD;
        long wait = 250;
        if (deadline) {
            long left = deadline - (long)clock_mono_ms();
            if (left <= 0)
                return CELL_TIMEOUT;
            wait = left < wait ? left : wait;
        }
        zmq_pollitem_t items[3] = {
            {g.k.shell, 0, ZMQ_POLLIN, 0}, {g.k.iopub, 0, ZMQ_POLLIN, 0}, {NULL, 0, ZMQ_POLLIN, 0}};
        zmq_poll(items, g.in_eof ? 2 : 3, wait);
        jw_msg_t m;
        err_t e = {0};
        while (kernel_recv(&g.k, g.k.iopub, &m, &e) > 0) {
            if (strcmp(m.parent_id, id) == 0)
                on_output(&m, o, &idle);
            jw_msg_free(&m);
        }
        while (kernel_recv(&g.k, g.k.shell, &m, &e) > 0) {
            if (strcmp(m.parent_id, id) == 0 && strcmp(m.msg_type, "execute_reply") == 0)
                replied = true;
            jw_msg_free(&m);
        }
        poll_stdin(items[2].revents != 0); /* POLLHUP alone at EOF */
    }
    return CELL_DONE;
}

/* A cell of our own (cwd, set-up): its output is returned, not streamed. */
static cell_end_t
run_quiet(const char *code, buf_t *text)
{
    cell_out_t o = {.text = BUF_INIT};
    char id[JW_ID_LEN + 1];
    cell_end_t end = run_cell(code, 30000, &o, id);
    if (text)
        *text = o.text;
    else
        buf_free(&o.text);
    return end;
}

static void
emit_kernel(long started, const char *state, const char *why)
{
    json_object *ev = json_object_new_object();
    json_set_str(ev, "ev", "kernel");
    json_set_str(ev, "state", state);
    json_set_int(ev, "pid", g.k.pid);
    json_set_str(ev, "python", g.executable);
    json_set_int(ev, "start_ms", (long)clock_mono_ms() - started);
    if (why)
        json_set_str(ev, "message", why);
    emit(ev);
}

/* A running kernel, ready for a cell: started (or restarted when dead or stuck) and set up as
 * upstream sets its kernel up (no colours, sys.executable, agent_skills imported). */
static int
ensure_kernel(err_t *err)
{
    if (g.unsettled[0] && g.k.pid > 0) {
        /* The last cell timed out and was interrupted: give it a moment to end. */
        cell_out_t o = {.text = BUF_INIT};
        bool idle = false;
        long deadline = (long)clock_mono_ms() + SETTLE_MS;
        while (!idle && kernel_alive(&g.k) && (long)clock_mono_ms() < deadline) {
            zmq_pollitem_t it = {g.k.iopub, 0, ZMQ_POLLIN, 0};
            zmq_poll(&it, 1, 100);
            jw_msg_t m;
            err_t e = {0};
            while (kernel_recv(&g.k, g.k.iopub, &m, &e) > 0) {
                if (strcmp(m.parent_id, g.unsettled) == 0)
                    on_output(&m, &o, &idle);
                jw_msg_free(&m);
            }
        }
        buf_free(&o.text);
        if (!idle)
            kernel_stop(&g.k); /* it ignores interrupts: start afresh */
        g.unsettled[0] = '\0';
    }
    if (kernel_alive(&g.k))
        return 0;
    bool restart = g.k.generation > 0;
    long started = (long)clock_mono_ms();
    g.synced_cwd[0] = '\0';
    if (kernel_start(&g.k, g.dir, g.python, err) < 0 ||
        kernel_handshake(&g.k, START_TIMEOUT_MS, err) < 0) {
        kernel_stop(&g.k);
        return -1;
    }
    buf_t t = BUF_INIT;
    run_quiet("%colors nocolor\nimport sys; print(sys.executable, end='')", &t);
    snprintf(g.executable, sizeof g.executable, "%s", t.data ? t.data : "");
    buf_free(&t);
    /* per-cell costs of ipykernel that buy nothing here (plugins/python/sandpipe_kernel.py) */
    run_quiet("import sandpipe_kernel as _sp\n_sp.tune(get_ipython())\ndel _sp\n", NULL);
    if (g.agent_skills)
        run_quiet("from agentskills import *\n", NULL);
    emit_kernel(started, "running", restart ? "restarted" : NULL);
    return 0;
}

static void
sync_cwd(const char *cwd)
{
    if (!cwd || !*cwd || strcmp(cwd, g.synced_cwd) == 0)
        return;
    /* A JSON string is a Python string literal (json-c leaves "/" alone with NOSLASHESCAPE). */
    json_object *s = json_object_new_string(cwd);
    buf_t code = BUF_INIT;
    buf_puts(&code, "import os; os.chdir(");
    buf_puts(&code, json_object_to_json_string_ext(s, JSON_C_TO_STRING_NOSLASHESCAPE));
    buf_puts(&code, ")");
    json_object_put(s);
    if (run_quiet(code.data, NULL) == CELL_DONE)
        snprintf(g.synced_cwd, sizeof g.synced_cwd, "%s", cwd);
    buf_free(&code);
}

static void
do_run(json_object *req)
{
    json_object *done = json_object_new_object();
    json_set_str(done, "ev", "done");
    err_t err = {0};
    if (ensure_kernel(&err) < 0) {
        json_set_str(done, "end", "error");
        json_set_str(done, "message", err.msg);
        emit(done);
        return;
    }
    sync_cwd(json_get_str(req, "cwd", NULL));
    cell_out_t o = {.text = BUF_INIT, .images = json_object_new_array(), .emit = true};
    char id[JW_ID_LEN + 1];
    double timeout = json_get_double(req, "timeout", 0);
    cell_end_t end = run_cell(json_get_str(req, "code", ""), (long)(timeout * 1000), &o, id);
    if (end == CELL_TIMEOUT) {
        kernel_interrupt(&g.k);
        snprintf(g.unsettled, sizeof g.unsettled, "%s", id);
    }
    json_set_str(done, "end", end == CELL_DONE ? "ok" : end == CELL_TIMEOUT ? "timeout" : "dead");
    json_set_strn(done, "text", o.text.data ? o.text.data : "", o.text.len);
    json_set(done, "images", o.images);
    if (end == CELL_DEAD) {
        char tail[200], how[128], why[400];
        kernel_log_tail(&g.k, tail, sizeof tail);
        kernel_exit_text(&g.k, how, sizeof how);
        snprintf(why, sizeof why, "the kernel died during a cell (%s)%s%s", how,
                 tail[0] ? ": " : "", tail);
        json_set_str(done, "message", why);
        kernel_stop(&g.k);
    }
    buf_free(&o.text);
    emit(done);
}

static void
usage(void)
{
    fprintf(stderr, "usage: sandpipe-jupyter --dir DIR [--python PYTHON] [--agent-skills]\n"
                    "  runs IPython cells for sandpipe-executor: JSON lines on stdin/stdout\n");
    exit(2);
}

int
main(int argc, char **argv)
{
    g.python = "python3";
    static const struct option opts[] = {{"dir", required_argument, 0, 'd'},
                                         {"python", required_argument, 0, 'p'},
                                         {"agent-skills", no_argument, 0, 'a'},
                                         {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': snprintf(g.dir, sizeof g.dir, "%s", optarg); break;
        case 'p': g.python = optarg; break;
        case 'a': g.agent_skills = true; break;
        default: usage();
        }
    }
    if (!g.dir[0])
        usage();
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_IGN); /* interrupts are for the kernel, sent by us */
    for (;;) {
        if (g.k.pid > 0 && !kernel_alive(&g.k)) {
            char how[128], why[160];
            kernel_exit_text(&g.k, how, sizeof how);
            snprintf(why, sizeof why, "the kernel exited: %s", how);
            emit_kernel((long)clock_mono_ms(), "dead", why);
        }
        char *line = NULL;
        char *nl = g.later.len ? memchr(g.later.data, '\n', g.later.len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - g.later.data);
            line = strndup(g.later.data, n);
            buf_consume(&g.later, n + 1);
        } else {
            line = next_line(false);
        }
        if (!line) {
            zmq_pollitem_t it = {NULL, 0, ZMQ_POLLIN, 0};
            zmq_poll(&it, 1, 1000);
            if (it.revents) /* POLLIN, or POLLHUP alone at EOF */
                line = next_line(true);
            if (g.in_eof)
                break;
            /* Output of an unsettled or finished cell is not wanted: drop it. */
            jw_msg_t m;
            err_t e = {0};
            while (g.k.iopub && !g.unsettled[0] && kernel_recv(&g.k, g.k.iopub, &m, &e) > 0)
                jw_msg_free(&m);
            if (!line)
                continue;
        }
        err_t e = {0};
        json_object *req = json_parse_lossy(line, strlen(line), &e);
        free(line);
        if (req && strcmp(json_get_str(req, "op", ""), "run") == 0)
            do_run(req);
        json_object_put(req);
    }
    kernel_stop(&g.k);
    return 0;
}
