/* ws_int.h — what ws_server.c (connections, requests, writes) and ws_cursor.c (a client's
 * cursor over a session's event log) share. Not for other modules. */
#ifndef SP_WS_INT_H
#define SP_WS_INT_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "jwt.h"
#include "session.h"
#include "utf8.h"
#include "ws_frames.h"

#define WS_MSG_MAX     (1u << 20) /* largest client message */
#define WS_REPLIES_MAX 64         /* queued replies before a client is cut off */
#define WS_FETCH_BATCH 256        /* events per Redis read while catching up */
#define WS_TERM_WRITE  (64 * 1024)
/* events written in one WRITEABLE while the socket is not choked */
#define WS_EVENTS_PER_WRITE 64

typedef enum { K_NONE, K_CONTROL, K_SESSION, K_TERMINAL } kind_t;

typedef struct reply {
    struct reply *next;
    char *text;
    size_t len;
} reply_t;

/* Heap part of a connection: outlives the lws pss while a Redis read is in flight. */
typedef struct cursor {
    gw_sub_t sub;
    struct lws *wsi; /* NULL once the connection closed */
    gw_session_t *s;
    uint64_t next_seq;
    event_log_entry_t *batch; /* events read from Redis, not yet sent */
    int batch_n, batch_i;
    bool fetching;
} cursor_t;

typedef struct {
    kind_t kind;
    jwt_claims_t claims;
    bool authed;
    char auth_error[ERR_MSG_MAX + 16];
    char session[64];
    cursor_t *cur;
    /* K_TERMINAL: the terminal shown (NULL once it let go of this connection), the offset of
     * the next byte to send from its ring, and, when its session ended, what was not sent. */
    gw_term_t *term;
    gw_term_client_t term_client;
    uint64_t term_sent;
    bool term_acking; /* the client acks what it consumed ({"ack":N}) */
    buf_t term_tail;
    bool term_gone;
    uint16_t peer_close;   /* the code of the client's close frame */
    buf_t msg;             /* a client message being reassembled */
    utf8_state_t msg_utf8; /* where the UTF-8 check of a text message stands */
    reply_t *replies, *replies_tail;
    int nreplies;
    /* Set once the connection is to end: the replies queued so far go out, then a close frame
     * with this code and reason; nothing the client sends is acted on any more. */
    uint16_t close_code;
    const char *close_reason; /* static, short */
    bool close_sent, half_closed;
    bool write_asked; /* WRITEABLE asked for by ws_want_write and not yet delivered */
    uint64_t conn_id;
    struct ws_file_sub *files; /* K_SESSION: its file watches (ws_files.c) */
    struct http_req *http;     /* a plain HTTP request on this connection (http_server.c) */
} pss_t;

/* ws_reply.c: asks for WRITEABLE unless already asked since the last one. Output arriving in
 * many pieces per loop iteration (terminal chunks, stored events) asked each time, and with
 * libuv every ask re-registers the socket with epoll, asked for or not. */
void ws_want_write(struct lws *wsi);
/* ws_reply.c: whether a write may go out now, outside WRITEABLE: nothing queued or asked for
 * ahead of it, no close under way, nothing of a short send still held by lws. lws sends a
 * write's remainder itself when the socket takes less, so ordering and the bound hold. */
bool ws_write_now_ok(struct lws *wsi, const pss_t *p);

/* ws_server.c: refuses what the connection asked for: an error message, then close code 1008
 * with the error's code as the reason. Returns 0 (the connection lives until the close is out). */
int ws_refuse(struct lws *wsi, pss_t *p, const char *code, const char *message);
/* ws_terminal.c: a terminal connection's setup (a new terminal or ?term=ID&since=N), its
 * messages (msg NULL: binary input in p->msg), its writes (-1 to close), its end. */
int ws_terminal_setup(struct lws *wsi, pss_t *p, gw_session_t *s);
void ws_terminal_message(pss_t *p, json_object *msg);
int ws_terminal_write(struct lws *wsi, pss_t *p);
void ws_terminal_teardown(pss_t *p);
/* ws_files.c: files.watch and files.unwatch on a session's socket (s NULL: the session is
 * gone), the next due batch written (1: one was, 0: none is due, -1: close), the
 * connection's watches ended with it. */
void ws_files_watch(struct lws *wsi, pss_t *p, gw_session_t *s, json_object *msg);
void ws_files_unwatch(struct lws *wsi, pss_t *p, gw_session_t *s, json_object *msg);
int ws_files_write(struct lws *wsi, pss_t *p);
void ws_files_teardown(pss_t *p);
/* ws_reply.c: the registry of live connections (ws_lookup finds them). */
void ws_conn_ref_add(uint64_t id, struct lws *wsi);
void ws_conn_ref_del(uint64_t id);
void ws_queue_reply(struct lws *wsi, pss_t *p, json_object *msg); /* takes ownership */
void ws_queue_text(struct lws *wsi, pss_t *p, const char *text, size_t len);
/* Ends the connection after the replies queued so far: a close frame with code and reason (a
 * static string). The first call wins. */
void ws_close_after_replies(struct lws *wsi, pss_t *p, uint16_t code, const char *reason);
int ws_write_text(struct lws *wsi, const char *s, size_t n, enum lws_write_protocol proto);
/* ws_cursor.c */
void ws_cursor_wake(gw_sub_t *sub);
void ws_cursor_gone(gw_sub_t *sub);
void ws_cursor_free(cursor_t *c);
/* Writes the next event for the cursor, if any. Returns -1 to close. */
int ws_cursor_write(struct lws *wsi, cursor_t *c);

#endif
