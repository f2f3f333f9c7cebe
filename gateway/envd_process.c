/* envd_process.c — envd's process.Process service over Connect (docs/e2b-wire.md 3.3-3.6):
 * Start and Connect stream a process's events, List, SendInput, SendSignal, CloseStdin and
 * Update act on one by pid or tag. The processes themselves: envd_proc.h. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#include "base64.h"
#include "envd_connect.h"
#include "envd_proc.h"
#include "envd_routes.h"
#include "envd_wire.h"
#include "gw.h"
#include "json_util.h"
#include "session.h"
#include "xalloc.h"

/* ---- a stream following a process (Start, Connect) ---- */

typedef struct {
    envd_follower_t f;
    uint64_t req;
    uv_timer_t keepalive, deadline;
    bool head_sent, done;
    int timers_open;
} follow_t;

static http_req_t *
req_of(follow_t *w)
{
    return w->done ? NULL : http_find(w->req);
}

static void
send_msg(follow_t *w, http_req_t *h, const char *msg, size_t len)
{
    if (!w->head_sent) {
        envd_stream_head(h);
        w->head_sent = true;
    }
    envd_stream_send_text(h, msg, len);
    uv_timer_again(&w->keepalive);
}

/* The stream ends (the process's end, an error, the deadline): the process goes on. */
static void
finish(follow_t *w, const envd_code_t *code, const char *msg)
{
    http_req_t *h = req_of(w);
    w->done = true;
    uv_timer_stop(&w->keepalive);
    uv_timer_stop(&w->deadline);
    if (!h)
        return;
    if (!w->head_sent) {
        envd_stream_head(h);
        w->head_sent = true;
    }
    envd_stream_end(h, code, msg);
}

static void
on_event(envd_follower_t *f, const char *msg, size_t len)
{
    follow_t *w = (follow_t *)f;
    http_req_t *h = req_of(w);
    if (h)
        send_msg(w, h, msg, len);
}

static void
on_gone(envd_follower_t *f, const char *code, const char *message)
{
    follow_t *w = (follow_t *)f;
    if (!code) {
        finish(w, NULL, NULL);
        return;
    }
    envd_code_t c = envd_code_of_name(code);
    finish(w, &c, message);
}

static size_t
queued(envd_follower_t *f)
{
    http_req_t *h = req_of((follow_t *)f);
    return h ? h->pending_len : 0;
}

static void
on_sent(void *ud, size_t n)
{
    (void)n;
    follow_t *w = ud;
    if (w->f.proc)
        envd_proc_drained(w->f.proc);
}

static void
on_keepalive(uv_timer_t *t)
{
    follow_t *w = t->data;
    http_req_t *h = req_of(w);
    if (!h || !w->head_sent)
        return;
    static const char ka[] = "{\"event\":{\"keepalive\":{}}}";
    send_msg(w, h, ka, sizeof ka - 1);
}

/* Connect-Timeout-Ms passed: the client gives up now (the SDK enforces it too); the process is
 * not killed, a later Connect finds it. */
static void
on_deadline(uv_timer_t *t)
{
    follow_t *w = t->data;
    envd_proc_unfollow(&w->f);
    envd_code_t c = ENVD_DEADLINE_EXCEEDED;
    finish(w, &c, "the operation timed out (the process goes on: connect to it by pid)");
}

static void
on_timer_closed(uv_handle_t *t)
{
    follow_t *w = t->data;
    if (--w->timers_open == 0)
        free(w);
}

/* The request ended (its client left, or its stream is out): the process goes on. */
static void
follow_free(void *ud)
{
    follow_t *w = ud;
    envd_proc_unfollow(&w->f);
    w->done = true;
    uv_close((uv_handle_t *)&w->keepalive, on_timer_closed);
    uv_close((uv_handle_t *)&w->deadline, on_timer_closed);
}

static follow_t *
follow_new(http_req_t *h)
{
    follow_t *w = xcalloc(1, sizeof *w);
    w->f.on_event = on_event;
    w->f.on_gone = on_gone;
    w->f.queued = queued;
    w->req = h->id;
    uv_timer_init(g_gw.loop, &w->keepalive);
    uv_timer_init(g_gw.loop, &w->deadline);
    w->keepalive.data = w->deadline.data = w;
    w->timers_open = 2;
    unsigned ka = envd_keepalive_s(h);
    uv_timer_start(&w->keepalive, on_keepalive, ka * 1000ull, ka * 1000ull);
    uint64_t dl = envd_deadline_ms(h);
    if (dl)
        uv_timer_start(&w->deadline, on_deadline, dl, 0);
    h->ud = w;
    h->free_ud = follow_free;
    h->on_sent = on_sent;
    return w;
}

static void
rpc_start(http_req_t *h, gw_session_t *s, json_object *req)
{
    char user[64];
    if (envd_user(h, user, sizeof user) < 0) {
        envd_stream_fail(h, ENVD_INVALID_ARGUMENT,
                         "Authorization names the user as Basic base64(\"<user>:\")");
        return;
    }
    follow_t *w = follow_new(h);
    err_t err = {0};
    if (!envd_proc_start(s, req, user, &w->f, &err)) {
        envd_code_t c = envd_code_of(err.code);
        finish(w, &c, err.msg);
    }
}

/* ---- calls on one process: found (or taken up) first, then run ---- */

typedef void (*proc_fn)(http_req_t *h, envd_proc_t *p, json_object *req);

typedef struct {
    uint64_t req_id;
    bool stream;
    proc_fn fn;
    json_object *req;
} pending_t;

static void
on_found(void *ud, envd_proc_t *p, const err_t *err)
{
    pending_t *q = ud;
    http_req_t *h = http_find(q->req_id);
    if (h && !p && q->stream)
        envd_stream_fail(h, envd_code_of(err->code), "%s", err->msg);
    else if (h && !p)
        envd_fail(h, envd_code_of(err->code), "%s", err->msg);
    else if (h)
        q->fn(h, p, q->req);
    json_object_put(q->req);
    free(q);
}

/* Runs fn on the process req's "process" selector names, once it is found. */
static void
with_proc(http_req_t *h, gw_session_t *s, json_object *req, bool stream, proc_fn fn)
{
    pending_t *q = xcalloc(1, sizeof *q);
    q->req_id = h->id;
    q->stream = stream;
    q->fn = fn;
    q->req = json_object_get(req);
    envd_proc_lookup(s, json_get(req, "process"), on_found, q);
}

static void
do_connect(http_req_t *h, envd_proc_t *p, json_object *req)
{
    (void)req;
    follow_t *w = follow_new(h);
    envd_proc_follow(p, &w->f);
}

static void
rpc_connect(http_req_t *h, gw_session_t *s, json_object *req)
{
    with_proc(h, s, req, true, do_connect);
}

/* ---- unary calls on one process ---- */

static void
answer_rc(http_req_t *h, int rc, const err_t *err)
{
    if (rc < 0)
        envd_fail(h, envd_code_of(err->code), "%s", err->msg);
    else
        envd_answer(h, json_object_new_object());
}

typedef struct {
    uint64_t req_id;
    char sid[128];
} list_t;

/* The executor's processes: this gateway's table (PTYs among them), and the commands it runs
 * that the table does not hold (started before a restart or a takeover). */
static void
on_proc_list(void *ud, json_object *res)
{
    list_t *l = ud;
    http_req_t *h = http_find(l->req_id);
    gw_session_t *s = session_find(l->sid);
    if (h && s && json_get(res, "error")) {
        envd_fail_result(h, res);
    } else if (h && s) {
        json_object *o = json_object_new_object();
        json_set(o, "processes", envd_proc_list(s, json_get(res, "processes")));
        envd_answer(h, o);
    } else if (h) {
        envd_fail(h, ENVD_UNAVAILABLE, "sandbox %.100s is not running", l->sid);
    }
    free(l);
}

static void
rpc_list(http_req_t *h, gw_session_t *s, json_object *req)
{
    (void)req;
    list_t *l = xcalloc(1, sizeof *l);
    l->req_id = h->id;
    snprintf(l->sid, sizeof l->sid, "%s", session_id(s));
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "proc.list");
    err_t err = {0};
    if (session_probe_op(s, op, on_proc_list, l, &err) < 0) {
        free(l);
        envd_fail(h, envd_code_of(err.code), "%s", err.msg);
    }
    json_object_put(op);
}

/* A ProcessInput ({"stdin"|"pty": base64}) into *raw (xmalloc'd), *len bytes; NULL why, or
 * why not. */
static const char *
input_of(json_object *in, bool *pty, char **raw, size_t *len)
{
    json_object *stdin_b = json_get(in, "stdin"), *pty_b = json_get(in, "pty");
    json_object *b = stdin_b ? stdin_b : pty_b;
    if (!b || (stdin_b && pty_b) || !json_object_is_type(b, json_type_string))
        return "input: one of stdin or pty, as base64 bytes";
    const char *t = json_object_get_string(b);
    size_t n = (size_t)json_object_get_string_len(b);
    /* protobuf's JSON reader takes base64 with or without padding, in either alphabet */
    char *std = xmalloc(n + 4);
    for (size_t i = 0; i < n; i++)
        std[i] = t[i] == '-' ? '+' : t[i] == '_' ? '/' : t[i];
    while (n % 4)
        std[n++] = '=';
    *raw = xmalloc(BASE64_DECODED_MAX(n) + 1);
    int bad = base64_decode(std, n, *raw, len);
    free(std);
    if (bad < 0) {
        free(*raw);
        *raw = NULL;
        return "input: not base64";
    }
    *pty = pty_b != NULL;
    return NULL;
}

static void
do_send_input(http_req_t *h, envd_proc_t *p, json_object *req)
{
    char *raw = NULL;
    size_t len = 0;
    bool pty = false;
    const char *why = input_of(json_get(req, "input"), &pty, &raw, &len);
    if (why) {
        envd_fail(h, ENVD_INVALID_ARGUMENT, "%s", why);
        return;
    }
    err_t err = {0};
    int rc = envd_proc_input(p, pty, raw, len, &err);
    free(raw);
    answer_rc(h, rc, &err);
}

/* StreamInput, a client stream: its body (whole, as nginx sends it with its length) is the
 * envelopes start{process}, then data{input} and keepalive{}, in order. */
static void
do_stream_input(http_req_t *h, envd_proc_t *p, json_object *req)
{
    json_object *inputs = json_get(req, "inputs");
    for (size_t i = 0; i < json_object_array_length(inputs); i++) {
        char *raw = NULL;
        size_t len = 0;
        bool pty = false;
        const char *why = input_of(json_object_array_get_idx(inputs, i), &pty, &raw, &len);
        err_t err = {0};
        if (!why && envd_proc_input(p, pty, raw, len, &err) < 0)
            why = err.msg;
        free(raw);
        if (why) {
            envd_stream_fail(h, why == err.msg ? envd_code_of(err.code) : ENVD_INVALID_ARGUMENT,
                             "%s", why);
            return;
        }
    }
    envd_stream_head(h);
    envd_stream_send(h, json_object_new_object());
    envd_stream_end(h, NULL, NULL);
}

static void
rpc_stream_input(http_req_t *h, gw_session_t *s)
{
    if (strncasecmp(h->content_type, "application/connect+json", 24) != 0) {
        envd_fail(h, ENVD_UNIMPLEMENTED, "StreamInput speaks application/connect+json");
        return;
    }
    const uint8_t *body = (const uint8_t *)(h->body ? h->body : "");
    size_t off = 0, len;
    uint8_t flags;
    const uint8_t *msg;
    char why[160];
    int rc;
    json_object *sel = NULL, *inputs = json_object_new_array();
    while ((rc = envd_envelope_next(body, h->body_len, &off, &flags, &msg, &len, why,
                                    sizeof why)) == 1) {
        if (flags & ENVD_FLAG_END)
            continue;
        err_t err = {0};
        json_object *m = json_parse((const char *)msg, len, &err);
        json_object *start = json_get(m, "start"), *data = json_get(m, "data");
        if (!m || !json_object_is_type(m, json_type_object) || (!sel && !start) || (sel && start)) {
            snprintf(why, sizeof why,
                     "StreamInput: a start{process} message first, then data{input} and "
                     "keepalive{}");
            rc = -1;
        } else if (start) {
            sel = json_object_get(start);
        } else if (data) {
            json_object_array_add(inputs, json_object_get(json_get(data, "input")));
        }
        json_object_put(m);
        if (rc < 0)
            break;
    }
    if (rc < 0 || !sel) {
        envd_stream_fail(h, ENVD_INVALID_ARGUMENT, "%s",
                         rc < 0 ? why : "StreamInput: no start{process} message");
        json_object_put(sel);
        json_object_put(inputs);
        return;
    }
    json_object *req = json_object_new_object();
    json_set(req, "process", json_object_get(json_get(sel, "process")));
    json_set(req, "inputs", inputs);
    json_object_put(sel);
    with_proc(h, s, req, true, do_stream_input);
    json_object_put(req);
}

static void
do_send_signal(http_req_t *h, envd_proc_t *p, json_object *req)
{
    json_object *sig = json_get(req, "signal");
    const char *name =
        sig && json_object_is_type(sig, json_type_string) ? json_object_get_string(sig) : "";
    int64_t num = sig && json_object_is_type(sig, json_type_int) ? json_object_get_int64(sig) : 0;
    int signo = !strcmp(name, "SIGNAL_SIGKILL") || num == 9    ? 9
                : !strcmp(name, "SIGNAL_SIGTERM") || num == 15 ? 15
                                                               : 0;
    if (!signo) {
        envd_fail(h, ENVD_INVALID_ARGUMENT, "signal: SIGNAL_SIGKILL or SIGNAL_SIGTERM");
        return;
    }
    err_t err = {0};
    answer_rc(h, envd_proc_signal(p, signo, &err), &err);
}

static void
do_close_stdin(http_req_t *h, envd_proc_t *p, json_object *req)
{
    (void)req;
    err_t err = {0};
    answer_rc(h, envd_proc_close_stdin(p, &err), &err);
}

static void
do_update(http_req_t *h, envd_proc_t *p, json_object *req)
{
    json_object *size = json_get(json_get(req, "pty"), "size");
    if (!size) {
        envd_answer(h, json_object_new_object()); /* nothing to change */
        return;
    }
    err_t err = {0};
    int rc = envd_proc_resize(p, (unsigned)json_get_int(size, "cols", 0),
                              (unsigned)json_get_int(size, "rows", 0), &err);
    answer_rc(h, rc, &err);
}

static void
rpc_send_input(http_req_t *h, gw_session_t *s, json_object *req)
{
    with_proc(h, s, req, false, do_send_input);
}

static void
rpc_send_signal(http_req_t *h, gw_session_t *s, json_object *req)
{
    with_proc(h, s, req, false, do_send_signal);
}

static void
rpc_close_stdin(http_req_t *h, gw_session_t *s, json_object *req)
{
    with_proc(h, s, req, false, do_close_stdin);
}

static void
rpc_update(http_req_t *h, gw_session_t *s, json_object *req)
{
    with_proc(h, s, req, false, do_update);
}

static const struct {
    const char *name;
    bool stream;
    void (*fn)(http_req_t *h, gw_session_t *s, json_object *req);
} methods[] = {
    {"Start", true, rpc_start},
    {"Connect", true, rpc_connect},
    {"List", false, rpc_list},
    {"SendInput", false, rpc_send_input},
    {"SendSignal", false, rpc_send_signal},
    {"CloseStdin", false, rpc_close_stdin},
    {"Update", false, rpc_update},
};

void
envd_process_rpc(http_req_t *h, const char *sid)
{
    const char *m = strrchr(h->path, '/') + 1;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        if (strcmp(m, methods[i].name) != 0)
            continue;
        gw_session_t *s = envd_session(h, sid, methods[i].stream);
        if (!s)
            return;
        json_object *req = envd_request(h, methods[i].stream);
        if (!req)
            return;
        methods[i].fn(h, s, req);
        json_object_put(req);
        return;
    }
    if (!strcmp(m, "StreamInput")) {
        gw_session_t *s = envd_session(h, sid, true);
        if (s)
            rpc_stream_input(h, s);
        return;
    }
    envd_fail(h, ENVD_UNIMPLEMENTED,
              "process.Process/%.100s is not a method of envd's process service", m);
}
