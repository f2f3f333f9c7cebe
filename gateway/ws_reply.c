/* ws_reply.c — what the WebSocket server says to a client outside the event stream: replies
 * queued (bounded) ahead of events and written in SERVER_WRITEABLE, error messages, the close
 * that follows them, and the registry of live connections by id, so a reply to a slow request
 * (session.create, an action waiting for Redis) finds its connection only if it still exists. */
#include <inttypes.h>
#include <libwebsockets.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "redis_client.h"
#include "ws_guard.h"
#include "ws_int.h"
#include "ws_server.h"
#include "xalloc.h"

/* Live connections by id, so that replies to slow requests (session.create) find their
 * connection only if it still exists. */
typedef struct conn_ref {
    struct conn_ref *next;
    uint64_t id;
    struct lws *wsi;
} conn_ref_t;
static conn_ref_t *conn_refs;

struct lws *
ws_lookup(uint64_t conn_id)
{
    for (conn_ref_t *r = conn_refs; r; r = r->next)
        if (r->id == conn_id)
            return r->wsi;
    return NULL;
}

uint64_t
ws_conn_id(struct lws *wsi)
{
    pss_t *p = lws_wsi_user(wsi);
    return p->conn_id;
}

void
ws_conn_ref_add(uint64_t id, struct lws *wsi)
{
    conn_ref_t *r = xmalloc(sizeof *r);
    r->id = id;
    r->wsi = wsi;
    r->next = conn_refs;
    conn_refs = r;
}

void
ws_conn_ref_del(uint64_t id)
{
    for (conn_ref_t **pp = &conn_refs; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id) {
            conn_ref_t *r = *pp;
            *pp = r->next;
            free(r);
            return;
        }
}

/* On the control connection, where replies are all there is to write, one this small goes out
 * at once when nothing is ahead of it (as a terminal's echo does, ws_terminal.c): asking lws for
 * WRITEABLE costs a POLLOUT round, a loop iteration and four epoll_ctl, on every
 * session.create's answer. Larger ones, or any behind others, wait for WRITEABLE in order. A
 * session's or terminal's connection keeps queueing: its WRITEABLE also moves its events or
 * output on after the reply. */
#define REPLY_WRITE_NOW_MAX 16384

void
ws_queue_text(struct lws *wsi, pss_t *p, const char *text, size_t len)
{
    if (p->kind == K_CONTROL && len <= REPLY_WRITE_NOW_MAX && ws_write_now_ok(wsi, p)) {
        /* what the reply reports (a status, a record) reaches Redis' socket before the client
         * hears of it, as when replies waited for WRITEABLE behind the loop's Redis flush */
        redis_client_flush();
        if (ws_write_text(wsi, text, len, LWS_WRITE_TEXT) < 0) /* the connection is over */
            lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
        return;
    }
    reply_t *r = xcalloc(1, sizeof *r);
    r->text = xstrndup(text, len);
    r->len = len;
    if (p->replies_tail)
        p->replies_tail->next = r;
    else
        p->replies = r;
    p->replies_tail = r;
    p->nreplies++;
    lws_callback_on_writable(wsi);
}

void
ws_queue_reply(struct lws *wsi, pss_t *p, json_object *msg)
{
    if (p->nreplies >= WS_REPLIES_MAX) {
        /* The client sends requests but does not read: it is cut off, visibly. */
        json_object_put(msg);
        ws_close_after_replies(wsi, p, WS_CLOSE_POLICY, "too many unread replies");
        return;
    }
    size_t len;
    const char *t = json_text(msg, &len);
    ws_queue_text(wsi, p, t, len);
    json_object_put(msg);
}

void
ws_close_after_replies(struct lws *wsi, pss_t *p, uint16_t code, const char *reason)
{
    if (p->close_code)
        return;
    p->close_code = code;
    p->close_reason = reason;
    buf_clear(&p->msg);
    lws_callback_on_writable(wsi);
}

json_object *
ws_error_msg(const char *code, const char *message, json_object *id)
{
    json_object *o = json_object_new_object(), *e = json_object_new_object();
    json_set_str(o, "type", "error");
    if (id)
        json_set(o, "id", json_object_get(id));
    json_set_str(e, "code", code);
    json_set_str(e, "message", message);
    json_set(o, "error", e);
    return o;
}

void
ws_reply(struct lws *wsi, json_object *msg)
{
    pss_t *p = lws_wsi_user(wsi);
    ws_queue_reply(wsi, p, msg);
}

/* Every text frame is UTF-8 (RFC 6455 5.6: a browser fails the connection on one that is not,
 * and the session's timeline could not be read past it). What the gateway writes is UTF-8
 * already; an event read back from Redis is whatever someone with its password wrote there:
 * its bad bytes go as U+FFFD, the event itself goes, and the log says so. */
int
ws_write_text(struct lws *wsi, const char *s, size_t n, enum lws_write_protocol proto)
{
    char *fixed = NULL;
    if (proto == LWS_WRITE_TEXT) {
        size_t was = n;
        s = json_valid_text(s, &n, &fixed);
        /* once a second at most: one bad event replayed to many clients is one finding */
        static uint64_t last_ms, unlogged;
        uint64_t now = uv_now(g_gw.loop);
        if (fixed && (last_ms == 0 || now - last_ms >= 1000)) {
            GW_LOG("a text frame of %zu bytes was not UTF-8 (%.60s...): its bad bytes sent as "
                   "U+FFFD (%" PRIu64 " more since the last such line)",
                   was, s, unlogged);
            last_ms = now;
            unlogged = 0;
        } else if (fixed) {
            unlogged++;
        }
    }
    unsigned char *b = xmalloc(LWS_PRE + n);
    memcpy(b + LWS_PRE, s, n);
    int w = lws_write(wsi, b + LWS_PRE, n, proto);
    free(b);
    free(fixed);
    return w < (int)n ? -1 : 0;
}

bool
ws_write_now_ok(struct lws *wsi, const pss_t *p)
{
    const char *reason;
    return !p->write_asked && !p->replies && !p->close_code && !p->peer_close &&
           !lws_partial_buffered(wsi) && !ws_guard_failure(wsi, &reason);
}

void
ws_want_write(struct lws *wsi)
{
    pss_t *p = lws_wsi_user(wsi);
    if (p && p->write_asked)
        return;
    if (p)
        p->write_asked = true;
    lws_callback_on_writable(wsi);
}
