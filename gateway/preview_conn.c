/* preview_conn.c — a preview connection: head, access, tunnel (preview_conn.h). */
#include "preview_conn.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "preview_access.h"
#include "preview_head.h"
#include "preview_listen.h"
#include "preview_page.h"
#include "redis_client.h"
#include "route_key.h"
#include "session.h"
#include "session_ports.h"
#include "xalloc.h"

/* Client bytes held while the app's connection is not open or its credit is spent. */
#define PENDING_MAX (256 * 1024)

typedef enum {
    PV_HEAD,  /* reading the head */
    PV_WAIT,  /* a one-time token being taken, or the app's connection being made */
    PV_RELAY, /* bytes both ways */
    PV_DRAIN, /* our side is done: the rest written, then the client's bytes read and dropped */
} pv_state_t;

typedef struct pv_conn {
    union {
        uv_tcp_t tcp;
        uv_pipe_t pipe;
        uv_stream_t stream;
        uv_handle_t handle;
    } h;
    uv_timer_t timer;
    int refs; /* the two handles, the executor's channel, a Redis answer awaited */
    pv_state_t state;
    buf_t in; /* the head, then client bytes not yet taken by the executor */
    preview_head_t head;
    buf_t app; /* the head the app gets */
    session_stream_t *st;
    bool reading, client_eof, answered, shut, closing;
    size_t queued; /* bytes handed to uv_write, not yet written */
    double last_io, opened;
} pv_conn_t;

typedef struct {
    uv_write_t req;
    pv_conn_t *c;
    size_t n;
    bool grant; /* app bytes: credit back to the executor once written */
    char data[];
} pv_write_t;

static char rbuf[64 * 1024];

static void conn_close(pv_conn_t *c);
static void drain(pv_conn_t *c);
static void reading(pv_conn_t *c, bool on);

static void
unref(pv_conn_t *c)
{
    if (--c->refs > 0)
        return;
    buf_free(&c->in);
    buf_free(&c->app);
    free(c);
}

static void
on_handle_closed(uv_handle_t *h)
{
    unref(h->data);
}

static void
on_written(uv_write_t *req, int status)
{
    pv_write_t *w = (pv_write_t *)req;
    pv_conn_t *c = w->c;
    c->queued -= w->n;
    if (status == 0 && w->grant && c->st)
        session_stream_grant(c->st, w->n);
    free(w);
    if (status < 0 && !c->closing)
        conn_close(c);
    else if (c->state == PV_DRAIN && c->queued == 0 && !c->closing)
        drain(c);
}

static void
write_client(pv_conn_t *c, const void *p, size_t n, bool grant)
{
    if (c->closing || n == 0)
        return;
    pv_write_t *w = xmalloc(sizeof *w + n);
    w->c = c;
    w->n = n;
    w->grant = grant;
    memcpy(w->data, p, n);
    uv_buf_t b = uv_buf_init(w->data, (unsigned)n);
    c->queued += n;
    c->last_io = gw_now();
    if (uv_write(&w->req, &c->h.stream, &b, 1, on_written) < 0) {
        c->queued -= n;
        free(w);
        conn_close(c);
    }
}

static void
conn_close(pv_conn_t *c)
{
    if (c->closing)
        return;
    c->closing = true;
    if (c->st)
        session_stream_cancel(c->st); /* its on_close drops the last reference to it */
    uv_close(&c->h.handle, on_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
}

static void
on_linger(uv_timer_t *t)
{
    conn_close(t->data);
}

static void
on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    free(req);
}

/* FIN to the client once what is queued is written (uv_shutdown waits for it), once. False
 * when the connection had to be closed instead. */
static bool
shut_write(pv_conn_t *c)
{
    if (c->shut)
        return true;
    c->shut = true;
    uv_shutdown_t *req = xcalloc(1, sizeof *req);
    if (uv_shutdown(req, &c->h.stream, on_shutdown) < 0) {
        free(req);
        conn_close(c);
        return false;
    }
    return true;
}

/* Our side is done: what is queued goes out, then FIN; the client's bytes are read and
 * dropped until it closes (closing with unread bytes would reset the connection and could cost
 * nginx the end of the answer), PREVIEW_LINGER_MS at most. */
static void
drain(pv_conn_t *c)
{
    c->state = PV_DRAIN;
    if (c->queued > 0 || c->closing)
        return;
    if (c->st)
        session_stream_cancel(c->st);
    if (!shut_write(c))
        return;
    if (c->client_eof) {
        conn_close(c);
        return;
    }
    reading(c, true); /* to see its EOF */
    uv_timer_start(&c->timer, on_linger, PREVIEW_LINGER_MS, 0);
}

/* The gateway's own answer (a page, a redirect), then the end. */
static void
answer(pv_conn_t *c, buf_t *resp)
{
    c->answered = true;
    write_client(c, resp->data, resp->len, false);
    buf_free(resp);
    drain(c);
}

static void page(pv_conn_t *c, int status, const char *title, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void
page(pv_conn_t *c, int status, const char *title, const char *fmt, ...)
{
    char text[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    buf_t b = {0};
    preview_page(&b, status, title, text, NULL);
    answer(c, &b);
}

/* ---- the client's bytes ---- */

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)h;
    (void)suggested;
    *b = uv_buf_init(rbuf, sizeof rbuf);
}

static void
reading(pv_conn_t *c, bool on)
{
    if (c->closing || c->client_eof || on == c->reading)
        return;
    c->reading = on;
    if (on)
        uv_read_start(&c->h.stream, on_alloc, on_read);
    else
        uv_read_stop(&c->h.stream);
}

/* Client bytes held in c->in to the executor, as far as its credit goes. */
static void
push(pv_conn_t *c)
{
    while (c->st && c->in.len > 0) {
        ssize_t k = session_stream_send(c->st, c->in.data, c->in.len);
        if (k <= 0)
            break;
        buf_consume(&c->in, (size_t)k);
    }
    if (c->st && c->in.len == 0 && c->client_eof)
        session_stream_eof(c->st);
    reading(c, c->in.len < PENDING_MAX);
}

static void start(pv_conn_t *c);

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    pv_conn_t *c = s->data;
    if (n == 0)
        return;
    if (n < 0) {
        c->reading = false;
        c->client_eof = true;
        if (n != UV_EOF || c->state == PV_HEAD) {
            conn_close(c); /* gone, or gone before asking anything */
            return;
        }
        if (c->state == PV_DRAIN)
            conn_close(c);
        else if (c->state == PV_RELAY)
            push(c); /* EOF once what is held went */
        return;
    }
    c->last_io = gw_now();
    if (c->state == PV_DRAIN)
        return; /* dropped */
    buf_append(&c->in, b->base, (size_t)n);
    if (c->state == PV_HEAD) {
        start(c);
        return;
    }
    if (c->state == PV_RELAY)
        push(c);
    else
        reading(c, c->in.len < PENDING_MAX);
}

/* ---- the executor's channel ---- */

static void
on_app_json(void *ud, json_object *msg)
{
    pv_conn_t *c = ud;
    if (c->state != PV_WAIT || strcmp(json_get_str(msg, "event", ""), "connected") != 0)
        return;
    c->state = PV_RELAY;
    /* the app's head first, then whatever body came with it */
    buf_t rest = c->in;
    c->in = c->app;
    c->app = (buf_t){0};
    buf_append(&c->in, rest.data, rest.len);
    buf_free(&rest);
    push(c);
}

static void
on_app_data(void *ud, const uint8_t *p, size_t n)
{
    pv_conn_t *c = ud;
    c->answered = true;
    write_client(c, p, n, true);
}

static void
on_app_writable(void *ud)
{
    pv_conn_t *c = ud;
    if (c->state == PV_RELAY)
        push(c);
}

static void
on_app_eof(void *ud)
{
    pv_conn_t *c = ud;
    /* FIN to nginx once what is queued is written: an answer delimited by its end (a stream,
     * HTTP/1.0) ends there, and nginx then closes its side */
    if (!c->closing)
        shut_write(c);
}

static const session_stream_cbs_t app_cbs = {
    .on_json = on_app_json,
    .on_data = on_app_data,
    .on_writable = on_app_writable,
    .on_eof = on_app_eof,
};

static void
on_app_close(void *ud, json_object *res)
{
    pv_conn_t *c = ud;
    c->st = NULL;
    json_object *e = json_get(res, "error");
    if (!c->closing && c->state == PV_WAIT) {
        const char *code = json_get_str(e, "code", "");
        if (!strcmp(code, "not_found"))
            page(c, 502, "Nothing listens here",
                 "Nothing listens on port %u in session %s. Start a server there (for example "
                 "python3 -m http.server %u) and reload.",
                 c->head.port, c->head.sid, c->head.port);
        else
            page(c, 502, "The preview could not connect",
                 "Port %u of session %s could not be reached: %s.", c->head.port, c->head.sid,
                 json_get_str(e, "message", "the runtime went away"));
    } else if (!c->closing) {
        drain(c);
    }
    unref(c);
}

/* Access granted: the tunnel to the app. */
static void
connect_app(pv_conn_t *c, gw_session_t *s)
{
    session_status_t st = session_wake(s); /* E2B's autoResume: a request let in resumes it */
    if (st != SESSION_READY) {
        page(c, 503, "Session not ready", "Session %s is %s: reload in a moment.", c->head.sid,
             session_status_text(st));
        return;
    }
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "port.connect");
    json_set_int(req, "port", c->head.port);
    err_t err = {0};
    c->state = PV_WAIT;
    c->st = session_stream_open(s, req, &app_cbs, on_app_close, c, false, &err);
    json_object_put(req);
    if (!c->st) {
        page(c, 503, "The session is not reachable", "Session %s cannot be reached now: %s.",
             c->head.sid, err.msg);
        return;
    }
    c->refs++;
    reading(c, c->in.len < PENDING_MAX);
}

/* ---- access ---- */

/* The credential v let in with, kept where the browser sends it again: the host's cookie, or
 * the path. Then 302 to the URL without sp_token. */
static void
redirect_with(pv_conn_t *c, const char *cred, int64_t exp)
{
    char extra[512] = "";
    buf_t loc = {0}, resp = {0};
    if (c->head.mode == PREVIEW_HOST) {
        int64_t age = exp - (int64_t)gw_wall();
        snprintf(extra, sizeof extra,
                 "Set-Cookie: " PREVIEW_COOKIE "=%s; Path=/; Max-Age=%lld; HttpOnly; "
                 "SameSite=Lax%s\r\n",
                 cred, (long long)(age > 0 ? age : 0), c->head.https ? "; Secure" : "");
        buf_puts(&loc, c->head.target);
    } else {
        buf_printf(&loc, "%s/~%s%s", c->head.prefix, cred, c->head.target);
    }
    buf_append(&loc, "", 1);
    preview_redirect(&resp, 302, loc.data, extra);
    buf_free(&loc);
    answer(c, &resp);
}

static void
once_redirect(pv_conn_t *c)
{
    char cred[PREVIEW_TOKEN_MAX];
    int64_t exp = (int64_t)gw_wall() + PREVIEW_COOKIE_TTL;
    if (preview_token_mint(preview_key(), c->head.sid, PREVIEW_KIND_OWNER, 0, exp, cred,
                           sizeof cred) < 0) {
        page(c, 503, "Preview unavailable", "No credential could be made.");
        return;
    }
    redirect_with(c, cred, exp);
}

static void
on_once_taken(redisReply *r, void *ud)
{
    pv_conn_t *c = ud;
    if (!c->closing) {
        if (!r)
            page(c, 503, "Preview unavailable",
                 "The one-time link cannot be checked now (Redis does not answer): try again.");
        else if (r->type != REDIS_REPLY_STATUS)
            page(c, 403, "Link already used",
                 "This one-time link was already opened. Open the preview again from the "
                 "session (the web IDE's Preview tab) for a new one.");
        else
            once_redirect(c);
    }
    unref(c);
}

static void
decide(pv_conn_t *c, gw_session_t *s)
{
    preview_verdict_t v;
    preview_decide(preview_key(), &c->head, session_port_public(s, c->head.port),
                   (int64_t)gw_wall(), &v);
    switch (v.kind) {
    case PREVIEW_DENY:
        page(c, v.status, v.status == 401 ? "Sign-in needed" : "Not allowed", "%s", v.why);
        return;
    case PREVIEW_ONCE: {
        int64_t ttl = v.claims.exp - (int64_t)gw_wall();
        c->refs++;
        c->state = PV_WAIT;
        redis_client_cmd(on_once_taken, c, "SET sp:session:{%s}:preview_once:%s 1 NX EX %lld",
                         c->head.sid, v.claims.nonce, (long long)(ttl > 0 ? ttl : 1));
        return;
    }
    case PREVIEW_REDIRECT: redirect_with(c, v.token, v.claims.exp); return;
    case PREVIEW_ALLOW: break;
    }
    if (c->head.needs_slash) {
        /* relative URLs resolve against the directory: …/P must be …/P/ */
        buf_t loc = {0}, resp = {0};
        buf_puts(&loc, c->head.prefix);
        for (int i = 0; i < c->head.ntokens; i++)
            if (c->head.tokens[i].from == PREVIEW_FROM_PATH)
                buf_printf(&loc, "/~%s", c->head.tokens[i].tok);
        buf_puts(&loc, c->head.target);
        buf_append(&loc, "", 1);
        preview_redirect(&resp, 308, loc.data, NULL);
        buf_free(&loc);
        answer(c, &resp);
        return;
    }
    connect_app(c, s);
}

/* The head is in (or not yet): who asks, for what, and may they. */
static void
start(pv_conn_t *c)
{
    const char *end = memmem(c->in.data, c->in.len, "\r\n\r\n", 4);
    if (!end) {
        if (c->in.len > PREVIEW_HEAD_MAX)
            page(c, 431, "Request too large", "The request's headers are over 32 KiB.");
        return;
    }
    size_t hl = (size_t)(end - (const char *)c->in.data) + 4;
    err_t err = {0};
    if (preview_head_parse((const char *)c->in.data, hl, &c->head, &c->app, &err) < 0) {
        page(c, err.code == ERR_TOO_BIG ? 431 : 400, "Bad request", "%s", err.msg);
        return;
    }
    buf_consume(&c->in, hl);
    if (!route_key_matches(g_gw.route_key, c->head.route_key)) {
        page(c, 401, "Not allowed", "Previews are reached through nginx only.");
        return;
    }
    reading(c, false);
    gw_session_t *s = session_find(c->head.sid);
    session_status_t st = s ? session_status(s) : SESSION_STOPPED;
    if (st == SESSION_PAUSED && session_auto_resumes(s))
        st = SESSION_READY; /* resumed once the request is let in (connect_app) */
    if (!s)
        page(c, 404, "No such session",
             "Session %s does not exist or has ended, so port %u has nothing to show.", c->head.sid,
             c->head.port);
    else if (st == SESSION_PAUSED)
        page(c, 409, "Session paused", "Session %s is paused: resume it, then reload this page.",
             c->head.sid);
    else if (st != SESSION_READY)
        page(c, 503, "Session not ready", "Session %s is %s: reload in a moment.", c->head.sid,
             session_status_text(st));
    else
        decide(c, s);
}

/* ---- timers ---- */

static void
on_tick(uv_timer_t *t)
{
    pv_conn_t *c = t->data;
    double now = gw_now();
    if (c->state == PV_HEAD) {
        if (now - c->opened < PREVIEW_HEAD_TIMEOUT_S)
            return;
        page(c, 408, "Request timeout", "The request's head did not come in time.");
        return;
    }
    if ((c->state == PV_WAIT || c->state == PV_RELAY) && !c->answered &&
        now - c->opened > preview_first_byte_timeout()) {
        page(c, 504, "The app did not answer",
             "Port %u of session %s accepted the request but sent nothing for %d s.", c->head.port,
             c->head.sid, preview_first_byte_timeout());
        return;
    }
    if (now - c->last_io > PREVIEW_IDLE_S)
        conn_close(c);
}

void
preview_conn_accept(uv_stream_t *server, bool is_unix)
{
    pv_conn_t *c = xcalloc(1, sizeof *c);
    if (is_unix)
        uv_pipe_init(g_gw.loop, &c->h.pipe, 0);
    else
        uv_tcp_init(g_gw.loop, &c->h.tcp);
    uv_timer_init(g_gw.loop, &c->timer);
    c->h.handle.data = c;
    c->timer.data = c;
    c->refs = 2;
    c->opened = c->last_io = gw_now();
    if (uv_accept(server, &c->h.stream) < 0) {
        conn_close(c);
        return;
    }
    if (!is_unix)
        uv_tcp_nodelay(&c->h.tcp, 1);
    uv_timer_start(&c->timer, on_tick, 1000, 1000);
    reading(c, true);
}
