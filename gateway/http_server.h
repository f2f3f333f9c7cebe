/* http_server.h — the gateway's HTTP side, on the same lws listener as its WebSockets: the
 * session-bound REST routes nginx sends straight to the session's owner (docs/api.md, "nginx"),
 * and the route lookup nginx asks before it sends them (route.c). One request at a time per
 * connection (HTTP/1.1 keep-alive from nginx); a request answers once, maybe later (an action's
 * observation), looked up by its id then, since its connection may have gone meanwhile. */
#ifndef SP_HTTP_SERVER_H
#define SP_HTTP_SERVER_H

#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jwt.h"

struct lws;
typedef struct http_req http_req_t;

#define HTTP_BODY_MAX (16u << 20) /* the largest body read whole (nginx --body-max's default) */
#define HTTP_ARGS_MAX 8

/* What a handler reads of its request (all copied when the request came: valid until it has
 * answered). */
struct http_req {
    uint64_t id;     /* http_find() finds it while it waits for its answer */
    struct lws *wsi; /* NULL once the client went away */
    char method[8];
    char path[512];     /* decoded, without the query; /rt-X/… as /runtime/rt-X/… */
    char uri[1024];     /* X-SP-URI: the request nginx asks the route of (lookups) */
    char uri_method[8]; /* X-SP-Method: its method */
    char authorization[JWT_BUF_LEN + 16];
    char api_key[JWT_BUF_LEN]; /* X-Session-API-Key */
    char route_key[80];        /* X-SP-Route-Key: nginx's, on its route lookups (route_key.h) */
    /* X-SP-Preview-Origin: nginx's wildcard preview origin, "http://{port}-{session}.DOMAIN:N"
     * ("" none: path previews only; nginx/render.sh --preview-domain) */
    char preview_origin[256];
    char content_type[256];
    char content_encoding[32]; /* "" when absent (E2B's gzip uploads: envd_upload.c) */
    /* E2B's envd headers (envd_connect.h): X-Access-Token, Connect-Timeout-Ms,
     * Keepalive-Ping-Interval ("" when absent) */
    char access_token[64];
    char connect_timeout[24];
    char keepalive[16];
    char *args[HTTP_ARGS_MAX]; /* query "name=value", decoded */
    int nargs;
    char *body; /* NUL-terminated */
    size_t body_len;
    bool body_too_big;
    /* A streamed body (a route that reads it as it comes: http_body_sink): dispatched at its
     * headers, the bytes handed on as they arrive, reading paused and resumed (http_body_flow).
     * Once the answer is out, the rest of the body is read and dropped (lingering), so the
     * connection stays in step; without a Content-Length (lws would wait for 100 MiB) the
     * connection closes after the answer instead. */
    bool body_streamed, body_done, lingering, close_after, rx_paused;
    bool has_length;
    unsigned long long content_length;
    void (*on_body)(void *ud, const void *p, size_t n);
    void (*on_body_end)(void *ud);
    /* the answer */
    int status;
    char *out; /* LWS_PRE bytes, then the body */
    size_t out_len, out_off;
    char extra[512]; /* more header lines, "name: value\r\n"… ("" none) */
    bool answered, head_sent;
    void *ud; /* the handler's, freed by it (free_ud) when the request ends */
    void (*free_ud)(void *ud);
    /* a streamed answer (http_stream_head): the body comes in pieces, stream_total bytes in
     * all (the Content-Length); pending: the pieces not yet written */
    bool streaming, stream_ended, stream_failed;
    unsigned long long stream_total, stream_sent;
    char *pending;
    size_t pending_off, pending_len, pending_cap; /* [off, off + len) of pending */
    void (*on_sent)(void *ud, size_t n);          /* n bytes of the body left for the socket */
};

/* Once, at start-up (the loop exists). */
void http_server_init(void);
/* lws callback reasons of the HTTP side (ws_server.c's callback hands them here). slot is the
 * connection's http_req_t pointer (pss). Each returns what the lws callback returns. */
int http_on_request(struct lws *wsi, http_req_t **slot, const char *uri);
int http_on_body(struct lws *wsi, http_req_t *h, const void *in, size_t len);
int http_on_body_done(struct lws *wsi, http_req_t **slot);
int http_on_writeable(struct lws *wsi, http_req_t **slot);
void http_on_close(http_req_t **slot);

/* The request of this id if it still waits for its answer, else NULL. */
http_req_t *http_find(uint64_t id);
/* Answers h: status, body (copied; JSON unless ctype says otherwise), written when its socket
 * can take it. The first answer counts. */
void http_answer(http_req_t *h, int status, const char *ctype, const char *body, size_t len);
void http_answer_json(http_req_t *h, int status, json_object *o); /* takes o */
/* A streamed answer: status and headers now (extra: more "name: value\r\n" lines), then
 * http_stream_write pieces of exactly total bytes in all, then http_stream_end. on_sent(ud, n)
 * tells the producer what left (for its credit). Ending short of total closes the connection
 * (the client sees the body cut short). */
void http_stream_head(http_req_t *h, int status, const char *ctype, unsigned long long total,
                      const char *extra);
void http_stream_write(http_req_t *h, const void *p, size_t n);
void http_stream_end(http_req_t *h);
/* total HTTP_STREAM_CHUNKED: a body of unknown length, sent chunked; http_stream_fail ends it
 * without its last-chunk (the client sees it cut short). */
#define HTTP_STREAM_CHUNKED ULLONG_MAX
void http_stream_fail(http_req_t *h);
/* A streamed request's body goes to on_body as it comes, then on_end once it is all in (both
 * may run before this returns: what came so far). Reading is paused until http_body_flow(h,
 * true). Nothing more is handed on once h has answered. */
void http_body_sink(http_req_t *h, void (*on_body)(void *ud, const void *p, size_t n),
                    void (*on_end)(void *ud));
/* Resumes (on) or pauses reading a streamed body from the connection (lws rx flow control):
 * the client's TCP window, then nginx, then the client wait while paused. */
void http_body_flow(http_req_t *h, bool on);
/* Whether the gateway serves method (NULL: any, its 405 included) on uri (a raw request URI; the
 * lookup itself aside): what nginx may send here. */
bool http_serves(const char *method, const char *uri);
/* Does h's route read its body as it comes (http_body_sink) rather than whole? */
bool http_route_streams(const http_req_t *h);
/* Runs h's route, or answers 404/405 (http_routes.c). */
void http_dispatch(http_req_t *h);
/* The query argument name (without "="), or NULL. */
const char *http_arg(const http_req_t *h, const char *name);

#endif
