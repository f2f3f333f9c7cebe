/* ws_server.c — the client WebSocket API (docs/api.md), one lws protocol callback:
 *   /ws/control                      JSON requests: session.create/get/list/delete, pool, health
 *   /ws/sessions/{id}?since=N        the session's events (a cursor over its event log) and
 *                                    actions/signals from the client; viewers read only;
 *                                    file events of the directories it watches (ws_files.c)
 *   /ws/sessions/{id}/terminal       raw PTY bytes as binary frames, {"resize":...} as text;
 *                                    ?term=ID&since=N takes a terminal back (session_term.c)
 * Plain HTTP requests on the same listener go to http_server.c.
 * Tokens: Sec-WebSocket-Protocol "sandpipe.v1, bearer.<jwt>" or ?token=<jwt>.
 *
 * Writes happen in SERVER_WRITEABLE, one lws_write each; the one exception is a terminal's small
 * interactive output, written as it comes when nothing is ahead of it (ws_terminal.c,
 * ws_write_now_ok), which saves a POLLOUT round per echo. A client is a cursor (next_seq)
 * over the event log: it never owns a queue of events, so a slow client costs nothing and
 * catches up from memory or Redis. Replies to its requests queue (bounded) ahead of events.
 *
 * Every connection the gateway ends gets a close frame (RFC 6455 7.4): 1008 when refused
 * (token, endpoint, access), 1009 for a message over 1 MiB, 1007 for a text message that is not
 * UTF-8 (each after an error message saying why), 1002 for a frame that breaks the protocol;
 * lws checks some frame rules itself, ws_guard.c the ones lws 4.1.6 does not. */
#include "ws_server.h"

#include <inttypes.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "buf.h"
#include "gw.h"
#include "http_server.h"
#include "json_util.h"
#include "jwt.h"
#include "jwt_cache.h"
#include "ops.h"
#include "session.h"
#include "ws_control.h"
#include "ws_guard.h"
#include "ws_int.h"
#include "xalloc.h"

static uint64_t next_conn_id = 1;
static size_t nconns;

size_t
ws_connections(void)
{
    return nconns;
}

/* ---- replies (ws_reply.c queues them) ---- */

int
ws_refuse(struct lws *wsi, pss_t *p, const char *code, const char *message)
{
    ws_queue_reply(wsi, p, ws_error_msg(code, message, NULL));
    ws_close_after_replies(wsi, p, WS_CLOSE_POLICY, code);
    return 0;
}

/* ---- request handling ---- */

/* What the connection's token may do with session s. */
static ops_access_t
access_of(const pss_t *p, const gw_session_t *s)
{
    ops_who_t who = {.sub = p->claims.sub, .role = p->claims.role, .session = p->claims.session};
    return ops_access(&who, s);
}

/* An action waiting for its event to be stored before the client gets its number. */
typedef struct {
    uint64_t conn_id;
    json_object *id; /* the client's request id, or NULL */
} action_ack_t;

static void
on_action_stored(void *ud, uint64_t seq)
{
    action_ack_t *a = ud;
    struct lws *wsi = ws_lookup(a->conn_id);
    if (wsi) {
        pss_t *p = lws_wsi_user(wsi);
        if (seq) {
            json_object *r = json_object_new_object();
            json_set_str(r, "type", "ack");
            if (a->id)
                json_set(r, "id", json_object_get(a->id));
            json_set_int(r, "seq", (int64_t)seq);
            ws_queue_reply(wsi, p, r);
        } else {
            ws_queue_reply(wsi, p, ws_error_msg("session_ended", "the session is gone", a->id));
        }
    }
    json_object_put(a->id);
    free(a);
}

/* ---- messages on /ws/sessions/{id}: {type, writes, handler} ---- */

static void
reply_ack(struct lws *wsi, pss_t *p, json_object *id)
{
    json_object *r = json_object_new_object();
    json_set_str(r, "type", "ack");
    if (id)
        json_set(r, "id", json_object_get(id));
    ws_queue_reply(wsi, p, r);
}

static void
msg_ping(struct lws *wsi, pss_t *p, gw_session_t *s, json_object *msg)
{
    (void)s;
    json_object *id = json_get(msg, "id"), *r = json_object_new_object();
    json_set_str(r, "type", "pong");
    if (id)
        json_set(r, "id", json_object_get(id));
    ws_queue_reply(wsi, p, r);
}

static void
msg_action(struct lws *wsi, pss_t *p, gw_session_t *s, json_object *msg)
{
    json_object *id = json_get(msg, "id");
    err_t err = {0};
    uint64_t seq = session_submit(s, json_get(msg, "action"), p->claims.sub, "ws", &err);
    if (!seq) {
        ws_queue_reply(wsi, p, ws_error_msg(err_name(err.code), err.msg, id));
        return;
    }
    /* acknowledged once stored: a number a client holds is never given to another event */
    action_ack_t *a = xcalloc(1, sizeof *a);
    a->conn_id = p->conn_id;
    a->id = id ? json_object_get(id) : NULL;
    session_when_stored(s, seq, on_action_stored, a);
}

static void
msg_signal(struct lws *wsi, pss_t *p, gw_session_t *s, json_object *msg)
{
    json_object *id = json_get(msg, "id");
    err_t err = {0};
    if (session_signal(s, json_get_str(msg, "signal", "INT"), &err) < 0)
        ws_queue_reply(wsi, p, ws_error_msg(err_name(err.code), err.msg, id));
    else
        reply_ack(wsi, p, id);
}

static const struct {
    const char *type;
    bool writes; /* needs the session, and a token that may change it */
    void (*fn)(struct lws *wsi, pss_t *p, gw_session_t *s, json_object *msg);
} session_msgs[] = {
    {"ping", false, msg_ping},
    {"action", true, msg_action},
    {"signal", true, msg_signal},
    {"files.watch", false, ws_files_watch}, /* a read: viewers may watch */
    {"files.unwatch", false, ws_files_unwatch},
};

static void
handle_session_msg(struct lws *wsi, pss_t *p, json_object *msg)
{
    json_object *id = json_get(msg, "id");
    const char *type = json_get_str(msg, "type", "");
    gw_session_t *s = p->cur ? p->cur->s : NULL;
    size_t i = 0, n = sizeof session_msgs / sizeof session_msgs[0];
    while (i < n && strcmp(session_msgs[i].type, type) != 0)
        i++;
    /* an unknown type is checked as one that writes, then refused */
    if (i == n || session_msgs[i].writes) {
        if (!s) {
            ws_queue_reply(wsi, p, ws_error_msg("session_ended", "the session is gone", id));
            return;
        }
        if (access_of(p, s) != OPS_WRITE) {
            ws_queue_reply(wsi, p,
                           ws_error_msg("forbidden", "this token may only watch the session", id));
            return;
        }
    }
    if (i < n) {
        session_msgs[i].fn(wsi, p, s, msg);
        return;
    }
    char m[192];
    snprintf(m, sizeof m,
             "unknown message type \"%.60s\" (expected action, signal, ping, files.watch, "
             "files.unwatch)",
             type);
    ws_queue_reply(wsi, p, ws_error_msg("bad_request", m, id));
}

static void
handle_message(struct lws *wsi, pss_t *p, bool binary)
{
    if (p->kind == K_TERMINAL && binary) {
        ws_terminal_message(p, NULL);
        return;
    }
    /* A binary message is parsed as JSON too: json_parse checks it is UTF-8 (a text message
     * was checked as it came, on_receive). */
    err_t err = {0};
    json_object *msg = json_parse(p->msg.data ? p->msg.data : "", p->msg.len, &err);
    if (!msg || !json_object_is_type(msg, json_type_object)) {
        char why[ERR_MSG_MAX + 32];
        snprintf(why, sizeof why, "%s%s", err.code == EILSEQ ? "the message is " : "",
                 msg ? "messages are JSON objects" : err.msg);
        ws_queue_reply(wsi, p, ws_error_msg("bad_request", why, NULL));
        json_object_put(msg);
        return;
    }
    if (p->kind == K_TERMINAL) {
        ws_terminal_message(p, msg);
    } else if (p->kind == K_SESSION) {
        handle_session_msg(wsi, p, msg);
    } else {
        ws_control_handle(wsi, &p->claims, msg);
    }
    json_object_put(msg);
}

/* ---- connection setup ---- */

static void
authenticate(struct lws *wsi, pss_t *p)
{
    char tok[JWT_BUF_LEN] = "", hdr[JWT_BUF_LEN + 64] = "";
    err_t err = {0};
    const char *bearer = NULL;
    /* Authorization: Bearer (programs; nginx moves a browser's subprotocol token here), the
     * subprotocol offer itself (lws 4.1 caps that header at 128 bytes: short tokens only), or
     * ?token= (browsers connecting directly). */
    if (lws_hdr_copy(wsi, hdr, sizeof hdr, WSI_TOKEN_HTTP_AUTHORIZATION) > 0 &&
        jwt_bearer_from_header(hdr, &bearer) == 0) {
        snprintf(tok, sizeof tok, "%s", bearer);
    } else if (lws_hdr_copy(wsi, hdr, sizeof hdr, WSI_TOKEN_PROTOCOL) > 0 &&
               jwt_token_from_ws_protocol(hdr, tok, sizeof tok) == 0) {
        /* found in the subprotocol offer */
    } else {
        char q[JWT_BUF_LEN + 8];
        const char *v = lws_get_urlarg_by_name(wsi, "token=", q, sizeof q);
        if (!v || !*v) {
            snprintf(
                p->auth_error, sizeof p->auth_error,
                "a bearer token is required (Sec-WebSocket-Protocol bearer.<token> or ?token=)");
            return;
        }
        snprintf(tok, sizeof tok, "%s", v);
    }
    if (jwt_cache_verify(tok, (int64_t)gw_wall(), &p->claims, &err) < 0) {
        snprintf(p->auth_error, sizeof p->auth_error, "%s", err.msg);
        return;
    }
    p->authed = true;
}

static int
setup(struct lws *wsi, pss_t *p)
{
    char uri[256] = "";
    lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI);
    p->conn_id = next_conn_id++;
    ws_conn_ref_add(p->conn_id, wsi);
    authenticate(wsi, p);
    if (!p->authed)
        return ws_refuse(wsi, p, "unauthorized", p->auth_error);
    const char *rest = NULL;
    if (!strcmp(uri, "/ws/control")) {
        p->kind = K_CONTROL;
        return 0;
    }
    if (strncmp(uri, "/ws/sessions/", 13) != 0)
        return ws_refuse(
            wsi, p, "not_found",
            "unknown endpoint (use /ws/control, /ws/sessions/{id}, /ws/sessions/{id}/terminal)");
    rest = uri + 13;
    const char *slash = strchr(rest, '/');
    size_t idlen = slash ? (size_t)(slash - rest) : strlen(rest);
    snprintf(p->session, sizeof p->session, "%.*s", (int)(idlen < 63 ? idlen : 63), rest);
    bool terminal = slash && !strcmp(slash, "/terminal");
    if (slash && !terminal)
        return ws_refuse(wsi, p, "not_found", "unknown session endpoint");
    gw_session_t *s = session_find(p->session);
    if (!s || access_of(p, s) == OPS_HIDDEN)
        return ws_refuse(wsi, p, "not_found", "no such session on this gateway");
    cursor_t *c = xcalloc(1, sizeof *c);
    c->wsi = wsi;
    c->sub.wake = ws_cursor_wake;
    c->sub.gone = ws_cursor_gone;
    p->cur = c;
    if (terminal) {
        /* the cursor only carries wsi here: a terminal connection subscribes to no events */
        p->kind = K_TERMINAL;
        if (access_of(p, s) != OPS_WRITE)
            return ws_refuse(wsi, p, "forbidden", "viewers cannot open a terminal");
        return ws_terminal_setup(wsi, p, s);
    }
    c->s = s;
    p->kind = K_SESSION;
    char v[32];
    uint64_t next = event_log_next_seq(session_log(s)); /* live from now on */
    const char *since = lws_get_urlarg_by_name(wsi, "since=", v, sizeof v);
    if (since)
        next = strtoull(since, NULL, 10) + 1;
    c->next_seq = next;
    session_subscribe(s, &c->sub);
    lws_callback_on_writable(wsi);
    return 0;
}

static void
teardown(pss_t *p)
{
    ws_conn_ref_del(p->conn_id);
    if (p->cur) {
        cursor_t *c = p->cur;
        if (c->s)
            session_unsubscribe(c->s, &c->sub);
        c->wsi = NULL;
        if (p->kind == K_TERMINAL)
            ws_terminal_teardown(p);
        ws_files_teardown(p);
        if (!c->fetching)
            ws_cursor_free(c); /* else freed when the read returns */
        p->cur = NULL;
    }
    while (p->replies) {
        reply_t *r = p->replies;
        p->replies = r->next;
        free(r->text);
        free(r);
    }
    buf_free(&p->msg);
    buf_free(&p->term_tail);
}

/* A frame lws was not given (ws_guard.c) ends the connection: 1002 with the close frame alone,
 * a message over the bound with too_large first, as when it is found in RECEIVE. */
static void
check_guard(struct lws *wsi, pss_t *p)
{
    const char *reason = NULL;
    uint16_t code = ws_guard_failure(wsi, &reason);
    if (!code || p->close_code)
        return;
    if (code == WS_CLOSE_TOO_BIG)
        ws_queue_reply(wsi, p, ws_error_msg("too_large", "message over 1 MiB", NULL));
    ws_close_after_replies(wsi, p, code, reason);
}

/* Writes the close frame itself, once the replies before it are out. Returning -1 after
 * lws_close_reason() would not do: lws 4.1.6 as Debian builds it (_DEBUG) closes such a
 * connection a second time at once ("uv repeat test"), and that second close drops TCP without
 * the frame. Once the frame is on its way (the next WRITEABLE: lws flushes first) the gateway
 * half-closes, as RFC 6455 7.1.1 has the server end TCP first: the client sees the end at once,
 * also when ws_guard drops what it sends. Its close frame is still read (WS_PEER_INITIATED_CLOSE
 * then ends the connection, no close is echoed); lws waits 5 s at most. Reading on until then
 * means no reset discards what was sent. */
/* lws' own write type for a close frame (LWS_WRITE_CLOSE in its private-lib-roles-ws.h, 4 from
 * 2.x to this day); the public header leaves it out, meaning lws_close_reason() to be used. */
#define WS_WRITE_CLOSE ((enum lws_write_protocol)4)

static int
send_close(struct lws *wsi, pss_t *p)
{
    unsigned char frame[LWS_PRE + 125];
    size_t n = strlen(p->close_reason);
    if (n > 123)
        n = 123;
    frame[LWS_PRE] = (unsigned char)(p->close_code >> 8);
    frame[LWS_PRE + 1] = (unsigned char)(p->close_code & 0xFF);
    memcpy(frame + LWS_PRE + 2, p->close_reason, n);
    p->close_sent = true;
    if (lws_write(wsi, frame + LWS_PRE, n + 2, WS_WRITE_CLOSE) < (int)(n + 2))
        return -1;
    lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, 5);
    lws_callback_on_writable(wsi);
    return 0;
}

static int
on_writeable(struct lws *wsi, pss_t *p)
{
    p->write_asked = false;
    check_guard(wsi, p);
    if (p->replies) {
        reply_t *r = p->replies;
        p->replies = r->next;
        if (!p->replies)
            p->replies_tail = NULL;
        p->nreplies--;
        int rc = ws_write_text(wsi, r->text, r->len, LWS_WRITE_TEXT);
        free(r->text);
        free(r);
        if (rc < 0)
            return -1;
        lws_callback_on_writable(wsi);
        return 0;
    }
    if (p->close_code) {
        if (!p->close_sent)
            return send_close(wsi, p);
        if (!p->half_closed) {
            p->half_closed = true;
            shutdown(lws_get_socket_fd(wsi), SHUT_WR);
        }
        return 0;
    }
    if (p->kind == K_TERMINAL)
        return ws_terminal_write(wsi, p);
    if (p->kind == K_SESSION && p->files) {
        int rc = ws_files_write(wsi, p);
        if (rc)
            return rc < 0 ? -1 : 0;
    }
    if (p->kind == K_SESSION && p->cur) {
        /* Several events per WRITEABLE while the socket takes them: a viewer that keeps up
         * costs one poll round per burst, not per event (this is what makes fan-out cheap). */
        for (int i = 0; i < WS_EVENTS_PER_WRITE; i++) {
            uint64_t before = p->cur->next_seq;
            int before_i = p->cur->batch_i;
            if (ws_cursor_write(wsi, p->cur) < 0)
                return -1;
            if ((p->cur->next_seq == before && p->cur->batch_i == before_i) ||
                lws_send_pipe_choked(wsi))
                break;
        }
    }
    return 0;
}

/* RFC 6455 8.1: a text message that is not UTF-8 fails the connection with 1007. */
static int
refuse_invalid_utf8(struct lws *wsi, pss_t *p)
{
    ws_queue_reply(wsi, p, ws_error_msg("bad_request", "text messages must be UTF-8", NULL));
    ws_close_after_replies(wsi, p, WS_CLOSE_INVALID_DATA, "invalid UTF-8");
    return 0;
}

/* A piece of a client message: reassembled (bounded), text checked as UTF-8 as it comes
 * (a character may be split across fragments), handled once whole. */
static int
on_receive(struct lws *wsi, pss_t *p, const uint8_t *in, size_t len)
{
    if (!p->authed || p->close_code)
        return 0;
    if (p->msg.len + len > WS_MSG_MAX) {
        /* ws_guard refuses such a message at its header already: this is the bound itself. */
        ws_queue_reply(wsi, p, ws_error_msg("too_large", "message over 1 MiB", NULL));
        ws_close_after_replies(wsi, p, WS_CLOSE_TOO_BIG, "message too big");
        return 0;
    }
    bool binary = lws_frame_is_binary(wsi);
    if (!binary && utf8_feed(&p->msg_utf8, in, len) < 0)
        return refuse_invalid_utf8(wsi, p);
    buf_append(&p->msg, in, len);
    if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
        return 0;
    if (!binary && !utf8_complete(&p->msg_utf8))
        return refuse_invalid_utf8(wsi, p);
    handle_message(wsi, p, binary);
    buf_clear(&p->msg);
    p->msg_utf8 = (utf8_state_t){0};
    return 0;
}

static int
callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    pss_t *p = user;
    switch (reason) {
    case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED: ws_guard_attach(wsi, WS_MSG_MAX); break;
    case LWS_CALLBACK_WSI_DESTROY: ws_guard_detach(wsi); break;
    /* An upgrade behind a plain HTTP request on a kept connection would skip the frame watch
     * (ws_guard): nginx never sends one, so it is refused before the handshake's answer. */
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: return ws_guard_unwatched(wsi) ? -1 : 0;
    case LWS_CALLBACK_ESTABLISHED: {
        nconns++;
        int rc = setup(wsi, p);
        check_guard(wsi, p); /* frames may have come with the upgrade request */
        return rc;
    }
    case LWS_CALLBACK_CLOSED:
        nconns--;
        teardown(p);
        break;
    case LWS_CALLBACK_SERVER_WRITEABLE: return on_writeable(wsi, p);
    case LWS_CALLBACK_RECEIVE: return on_receive(wsi, p, in, len);
    /* plain HTTP on the same listener: nginx's route lookups, the routes it sends here */
    case LWS_CALLBACK_HTTP: return p ? http_on_request(wsi, &p->http, in) : -1;
    case LWS_CALLBACK_HTTP_BODY: return p ? http_on_body(wsi, p->http, in, len) : -1;
    case LWS_CALLBACK_HTTP_BODY_COMPLETION: return p ? http_on_body_done(wsi, &p->http) : -1;
    case LWS_CALLBACK_HTTP_WRITEABLE: return p ? http_on_writeable(wsi, &p->http) : -1;
    case LWS_CALLBACK_CLOSED_HTTP:
        if (p)
            http_on_close(&p->http);
        break;
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        if (len >= 2 && !p->peer_close)
            p->peer_close = (uint16_t)(((const uint8_t *)in)[0] << 8 | ((const uint8_t *)in)[1]);
        /* The answer to our close: the handshake is complete, close the TCP connection. */
        return p->close_sent ? -1 : 0;
    default: break;
    }
    return 0;
}

/* lws sends at most tx_packet_size bytes per send() (0: rx_buffer_size, else the context's
 * 4096-byte service buffer) and keeps the rest for the next POLLOUT: a 64 KiB terminal write or
 * HTTP body went out as 16 sends over 16 loop iterations. This bounds nothing else (the rx buffer
 * each connection holds stays the default). */
#define WS_TX_PACKET (256 * 1024)

static const struct lws_protocols protocols[] = {
    {JWT_WS_PROTOCOL, callback, sizeof(pss_t), 0, 0, NULL, WS_TX_PACKET},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

const struct lws_protocols *
ws_protocols(void)
{
    return protocols;
}
