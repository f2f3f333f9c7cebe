/* ws.h — a blocking-style WebSocket client for the CLI: libwebsockets' client on the process's
 * libuv loop, driven by pulling (ws_recv runs the loop until a message, a close or a timeout).
 *
 * Ownership: the caller owns the uv_loop_t (main.c) and lends it to ws_ctx_new; a ws_ctx_t owns
 * the lws context and its timer, ws_t connections are owned by their caller and must be freed
 * with ws_close before ws_ctx_free. Received messages are handed over (the caller frees
 * msg.data). Other handles on the loop (a tty, signals) run while ws_open/ws_recv/ws_close wait.
 *
 * Bounds: received messages queue up to WS_RX_PAUSE bytes, then the socket stops being read
 * (lws_rx_flow_control) until the caller drains the queue; a message over WS_MSG_MAX closes the
 * connection with an error. The send queue is unbounded here: callers that produce without a
 * bound (attach's stdin) watch ws_pending() and resume on the drain callback. */
#ifndef SP_CLI_WS_H
#define SP_CLI_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "err.h"

#define WS_MSG_MAX  (64u << 20) /* largest message accepted from a server */
#define WS_RX_PAUSE (8u << 20)  /* queued received bytes at which reading pauses */

typedef struct ws_ctx ws_ctx_t;
typedef struct ws ws_t;
struct lws_context;

typedef struct {
    bool binary;
    char *data; /* NUL-terminated past len; caller frees */
    size_t len;
} ws_msg_t;

/* Where to connect: "ws://host:port[/prefix]" (http:// is the same), "wss://" or "https://" for
 * TLS. insecure accepts self-signed and mismatched certificates. */
typedef struct {
    const char *url;
    const char *token; /* sent as Authorization: Bearer; NULL or "" for none */
    bool insecure;
} ws_target_t;

/* A client context on loop (borrowed; must outlive the context), with OpenSSL set up only if tls
 * (ws_url_tls: the URLs it will serve). NULL with err set on failure. */
ws_ctx_t *ws_ctx_new(uv_loop_t *loop, bool tls, err_t *err);
/* Does url name a TLS scheme (wss://, https://)? */
bool ws_url_tls(const char *url);
/* Destroys the lws context; the loop must then be run until it has no handles left (main.c
 * does uv_run + uv_loop_close). NULL is a no-op. */
void ws_ctx_free(ws_ctx_t *ctx);

/* For http.c, which runs plain HTTP requests on the same context: its lws context and loop,
 * and url_buf split in place into host, port, path prefix (no leading '/') and TLS. 0, or
 * -EINVAL with err set. */
struct lws_context *ws_ctx_lws(ws_ctx_t *ctx);
uv_loop_t *ws_ctx_loop(ws_ctx_t *ctx);
int ws_parse_url(char *url_buf, const char **host, int *port, const char **prefix, bool *tls,
                 err_t *err);

/* Connects to target's url + path ("/ws/control", may carry a query) and waits up to
 * timeout_ms for the upgrade. Returns the connection, or NULL with err set (bad url, refused,
 * not upgraded: the HTTP status is in the message). */
ws_t *ws_open(ws_ctx_t *ctx, const ws_target_t *target, const char *path, int timeout_ms,
              err_t *err);

/* Queues one message (copied). Returns 0, or -EPIPE when the connection is closed. */
int ws_send(ws_t *ws, bool binary, const void *p, size_t n);
/* Bytes queued but not yet handed to the socket. */
size_t ws_pending(const ws_t *ws);
/* Called (from the loop) each time the send queue becomes empty. */
void ws_on_drain(ws_t *ws, void (*cb)(void *arg), void *arg);

/* Waits up to timeout_ms (< 0: forever) for the next message. Returns 1 with *msg filled,
 * 0 on timeout, or < 0 once the connection is closed and every message was taken, with err
 * saying why ("closed by the server (1008 ...)"); -ECONNRESET for a close, -ECANCELED when
 * ws_interrupt was called. */
int ws_recv(ws_t *ws, ws_msg_t *msg, int timeout_ms, err_t *err);
/* Makes a waiting (or the next) ws_recv return -ECANCELED: for signal handlers on the loop. */
void ws_interrupt(ws_t *ws);

/* Sends a close frame, waits briefly for the server's, frees ws and its queues. NULL is a no-op. */
void ws_close(ws_t *ws);

#endif
