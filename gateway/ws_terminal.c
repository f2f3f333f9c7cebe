/* ws_terminal.c — the terminal endpoint's side of a connection: which terminal it shows (a new
 * one, or one taken back by id from an output offset), the terminal's ring written out to the
 * socket from that offset, gap markers, acks, the exit (docs/api.md, "Re-attaching"). The
 * terminal itself outlives the connection: session_term.c. */
#include <inttypes.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "ws_int.h"
#include "ws_server.h"

static pss_t *
pss_of_term_client(gw_term_client_t *tc)
{
    return (pss_t *)((char *)tc - offsetof(pss_t, term_client));
}

/* Output this small (an echo, a prompt) goes to the client at once when nothing is ahead of it;
 * more waits for WRITEABLE as before, so a stream keeps its pace and lws holds at most one
 * short send's remainder. */
#define TERM_WRITE_NOW_MAX 4096

/* New output or the end. Interactive output is written straight away: asking lws for
 * WRITEABLE costs a POLLOUT round per echo (libuv's uv_poll_start re-registers the socket,
 * four epoll_ctl and a loop iteration), although a socket with nothing queued takes it. */
static void
term_wake(gw_term_client_t *tc)
{
    pss_t *p = pss_of_term_client(tc);
    struct lws *wsi = p->cur ? p->cur->wsi : NULL;
    if (!wsi)
        return;
    int code;
    const term_ring_t *r = p->term ? session_term_ring(p->term) : NULL;
    if (r && p->term_sent >= r->start && r->end > p->term_sent &&
        r->end - p->term_sent <= TERM_WRITE_NOW_MAX && !session_term_ended(p->term, &code) &&
        ws_write_now_ok(wsi, p)) {
        if (ws_terminal_write(wsi, p) < 0) /* lws could not send: the connection is over */
            lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
        return;
    }
    ws_want_write(wsi);
}

/* Input waits for the executor's credit: lws stops reading this connection (TCP pushes back
 * on the client) until it may go on. */
static void
term_pause(gw_term_client_t *tc, bool paused)
{
    pss_t *p = pss_of_term_client(tc);
    if (p->cur && p->cur->wsi)
        lws_rx_flow_control(p->cur->wsi, paused ? 0 : 1);
}

/* The terminal lets go of this connection: taken over by another one (refused from now on),
 * or its session ended (what was not sent yet still goes out, then the exit). */
static void
term_gone(gw_term_client_t *tc, bool taken)
{
    pss_t *p = pss_of_term_client(tc);
    gw_term_t *t = p->term;
    p->term = NULL;
    struct lws *wsi = p->cur ? p->cur->wsi : NULL;
    if (wsi)
        lws_rx_flow_control(wsi, 1); /* it may have been paused: its close must be read */
    if (!wsi || g_gw.stopping)
        return; /* a gateway stopping: the terminal goes on; the client comes back for it */
    if (taken) {
        ws_queue_reply(wsi, p,
                       ws_error_msg("taken_over", "another connection took this terminal", NULL));
        ws_close_after_replies(wsi, p, WS_CLOSE_POLICY, "taken over");
        return;
    }
    const term_ring_t *r = session_term_ring(t);
    if (p->term_sent < r->start) {
        char msg[160];
        int len = snprintf(msg, sizeof msg,
                           "{\"type\":\"truncated\",\"lost_from\":%" PRIu64 ",\"lost_to\":%" PRIu64
                           ",\"bytes\":%" PRIu64 "}",
                           p->term_sent, r->start, r->start - p->term_sent);
        ws_queue_text(wsi, p, msg, (size_t)len);
    }
    for (uint64_t off = p->term_sent < r->start ? r->start : p->term_sent; off < r->end;) {
        const uint8_t *d;
        size_t n = term_ring_peek(r, off, &d);
        buf_append(&p->term_tail, d, n);
        off += n;
    }
    p->term_gone = true;
    lws_callback_on_writable(wsi);
}

/* The terminal refuses this connection (an offset it learnt was never made): the error, then
 * the close. */
static void
term_refused(gw_term_client_t *tc, const char *code, const char *message)
{
    pss_t *p = pss_of_term_client(tc);
    p->term = NULL;
    struct lws *wsi = p->cur ? p->cur->wsi : NULL;
    if (!wsi)
        return;
    lws_rx_flow_control(wsi, 1);
    ws_queue_reply(wsi, p, ws_error_msg(code, message, NULL));
    ws_close_after_replies(wsi, p, WS_CLOSE_POLICY, "refused");
}

/* A new terminal, or (term=ID) one this session already has, from offset since (default:
 * the oldest byte it still holds). The first message says which terminal and from where. */
int
ws_terminal_setup(struct lws *wsi, pss_t *p, gw_session_t *s)
{
    char v[32];
    const char *cs = lws_get_urlarg_by_name(wsi, "cols=", v, sizeof v);
    int cols = cs ? atoi(cs) : 0;
    const char *rs = lws_get_urlarg_by_name(wsi, "rows=", v, sizeof v);
    int rows = rs ? atoi(rs) : 0;
    const char *ack = lws_get_urlarg_by_name(wsi, "ack=", v, sizeof v);
    bool acking = ack && !strcmp(ack, "1");
    char id[32];
    const char *tid = lws_get_urlarg_by_name(wsi, "term=", id, sizeof id);
    gw_term_t *t;
    uint64_t since = 0;
    if (tid) {
        t = session_term_find(s, tid);
        if (!t)
            return ws_refuse(wsi, p, "not_found", GW_TERM_NOT_FOUND);
        const term_ring_t *r = session_term_ring(t);
        const char *sn = lws_get_urlarg_by_name(wsi, "since=", v, sizeof v);
        char *end = NULL;
        since = sn ? strtoull(sn, &end, 10) : r->start;
        /* a terminal being taken back knows its offsets once the executor answers */
        if (sn && (!*sn || *end || (since > r->end && !session_term_reattaching(t)))) {
            char m[160];
            snprintf(m, sizeof m, "since must be an output offset from 0 to %" PRIu64, r->end);
            return ws_refuse(wsi, p, "bad_request", m);
        }
        if (cols > 0 && rows > 0)
            session_term_resize(t, cols, rows);
    } else {
        err_t err = {0};
        t = session_term_open(s, cols > 0 ? cols : 80, rows > 0 ? rows : 24, &err);
        if (!t)
            return ws_refuse(wsi, p, err_name(err.code), err.msg);
    }
    p->term = t;
    p->term_sent = since;
    p->term_acking = acking;
    p->term_client.wake = term_wake;
    p->term_client.gone = term_gone;
    p->term_client.refused = term_refused;
    p->term_client.pause = term_pause;
    p->term_client.since = since;
    session_term_attach(t, &p->term_client, acking);
    const term_ring_t *r = session_term_ring(t);
    char msg[160];
    int len = snprintf(msg, sizeof msg,
                       "{\"type\":\"terminal\",\"term\":\"%s\",\"offset\":%" PRIu64
                       ",\"start\":%" PRIu64 ",\"end\":%" PRIu64 "}",
                       session_term_id(t), since, r->start, r->end);
    ws_queue_text(wsi, p, msg, (size_t)len);
    return 0;
}

void
ws_terminal_teardown(pss_t *p)
{
    gw_term_t *t = p->term;
    if (!t)
        return;
    p->term = NULL;
    /* A normal close (1000) is the client closing its terminal; anything else is a
     * connection lost, and the terminal waits for the client to come back. */
    if (p->peer_close == LWS_CLOSE_STATUS_NORMAL)
        session_term_close(t);
    else
        session_term_detach(t, &p->term_client);
}

/* Writes the next piece of terminal output, a gap marker, or the exit. */
int
ws_terminal_write(struct lws *wsi, pss_t *p)
{
    char msg[200];
    int len;
    if (p->term) {
        const term_ring_t *r = session_term_ring(p->term);
        if (p->term_sent < r->start) {
            /* the ring no longer holds what the client asked for: say which bytes are gone */
            len = snprintf(msg, sizeof msg,
                           "{\"type\":\"truncated\",\"lost_from\":%" PRIu64 ",\"lost_to\":%" PRIu64
                           ",\"bytes\":%" PRIu64 "}",
                           p->term_sent, r->start, r->start - p->term_sent);
            ws_queue_text(wsi, p, msg, (size_t)len);
            p->term_sent = r->start;
            return 0;
        }
        const uint8_t *d;
        size_t n = term_ring_peek(r, p->term_sent, &d);
        if (n) {
            if (n > WS_TERM_WRITE)
                n = WS_TERM_WRITE;
            if (ws_write_text(wsi, (const char *)d, n, LWS_WRITE_BINARY) < 0)
                return -1;
            p->term_sent += n;
            if (!p->term_acking)
                session_term_consumed(p->term, p->term_sent);
            /* more held (it wrapped, or over WS_TERM_WRITE), or the exit to send: the next
             * WRITEABLE; else term_wake asks when output comes */
            int code;
            if (p->term_sent < r->end || session_term_ended(p->term, &code))
                ws_want_write(wsi);
            return 0;
        }
        int code;
        if (!session_term_ended(p->term, &code))
            return 0;
        gw_term_t *t = p->term;
        p->term = NULL;
        session_term_close(t);
        len = snprintf(msg, sizeof msg, "{\"type\":\"exit\",\"exit_code\":%d}", code);
        ws_queue_text(wsi, p, msg, (size_t)len);
        ws_close_after_replies(wsi, p, LWS_CLOSE_STATUS_NORMAL, "shell exited");
        return 0;
    }
    if (p->term_tail.len) {
        size_t n = p->term_tail.len > WS_TERM_WRITE ? WS_TERM_WRITE : p->term_tail.len;
        if (ws_write_text(wsi, p->term_tail.data, n, LWS_WRITE_BINARY) < 0)
            return -1;
        buf_consume(&p->term_tail, n);
        lws_callback_on_writable(wsi);
        return 0;
    }
    if (p->term_gone) {
        p->term_gone = false;
        len = snprintf(msg, sizeof msg, "{\"type\":\"exit\",\"exit_code\":-1}");
        ws_queue_text(wsi, p, msg, (size_t)len);
        ws_close_after_replies(wsi, p, LWS_CLOSE_STATUS_NORMAL, "session ended");
    }
    return 0;
}

/* A client message: binary (msg NULL: the bytes in p->msg) is input; text is a resize, an ack or
 * input as {"input":"..."}. */
void
ws_terminal_message(pss_t *p, json_object *msg)
{
    if (!p->term)
        return; /* let go of (taken over, session ended): nothing to act on */
    if (!msg) {
        session_term_typed(p->term, p->claims.sub, p->msg.data, p->msg.len);
        session_term_input(p->term, p->msg.data, p->msg.len);
        return;
    }
    json_object *rs = json_get(msg, "resize"), *ack = json_get(msg, "ack");
    if (rs)
        session_term_resize(p->term, (int)json_get_int(rs, "cols", 80),
                            (int)json_get_int(rs, "rows", 24));
    else if (ack && json_object_is_type(ack, json_type_int) && json_object_get_int64(ack) >= 0)
        session_term_consumed(p->term, (uint64_t)json_object_get_int64(ack));
    else if (json_get(msg, "input")) {
        const char *in = json_get_str(msg, "input", "");
        session_term_typed(p->term, p->claims.sub, in, strlen(in));
        session_term_input(p->term, in, strlen(in));
    }
}
