/* ws.c — the CLI's WebSocket client: libwebsockets (client role) on a borrowed libuv loop.
 * One protocol callback with one switch; one lws_write per CLIENT_WRITEABLE. Each ws_t is the
 * wsi's opaque user data; when a ws_t is freed before its wsi, the pointer is cleared first so
 * late callbacks (context destruction) find nothing. See ws.h for the pull model. */
#include "ws.h"

#include <libwebsockets.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "http.h"
#include "jwt.h"
#include "xalloc.h"

#define WS_RX_RESUME (1u << 20) /* resume reading once the queue is back under this */

typedef struct ws_node {
    struct ws_node *next;
    bool binary;
    size_t len;
    char *data; /* send: LWS_PRE bytes of headroom, then the payload */
} ws_node_t;

enum { WS_CONNECTING, WS_OPEN, WS_CLOSED };

struct ws_ctx {
    uv_loop_t *loop;
    struct lws_context *lws;
    uv_timer_t timer;
    bool timed_out;
};

struct ws {
    ws_ctx_t *ctx;
    struct lws *wsi;
    int state;
    bool closing;     /* ws_close asked for a close frame */
    bool interrupted; /* ws_interrupt */
    bool rx_paused;
    ws_node_t *rx_head, *rx_tail;
    size_t rx_bytes;
    buf_t partial; /* a message still arriving in fragments */
    ws_node_t *tx_head, *tx_tail;
    size_t tx_bytes;
    void (*drain_cb)(void *);
    void *drain_arg;
    char why[ERR_MSG_MAX]; /* why the connection ended, for err */
    int close_code;
    char auth[8 + JWT_BUF_LEN]; /* "Bearer <token>" */
};

static void
node_push(ws_node_t **head, ws_node_t **tail, ws_node_t *n)
{
    n->next = NULL;
    if (*tail)
        (*tail)->next = n;
    else
        *head = n;
    *tail = n;
}

static ws_node_t *
node_pop(ws_node_t **head, ws_node_t **tail)
{
    ws_node_t *n = *head;
    if (n) {
        *head = n->next;
        if (!*head)
            *tail = NULL;
    }
    return n;
}

static void
mark_closed(ws_t *ws, const char *why)
{
    if (ws->state != WS_CLOSED && !ws->why[0] && why)
        snprintf(ws->why, sizeof ws->why, "%s", why);
    ws->state = WS_CLOSED;
    ws->wsi = NULL;
}

static int
on_receive(struct lws *wsi, ws_t *ws, const void *in, size_t len)
{
    if (ws->partial.len + len > WS_MSG_MAX) {
        snprintf(ws->why, sizeof ws->why, "the server sent a message over %u bytes", WS_MSG_MAX);
        lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, NULL, 0);
        return -1;
    }
    buf_append(&ws->partial, in, len);
    if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
        return 0;
    ws_node_t *n = xcalloc(1, sizeof *n);
    n->binary = lws_frame_is_binary(wsi);
    n->len = ws->partial.len;
    n->data = buf_steal(&ws->partial);
    node_push(&ws->rx_head, &ws->rx_tail, n);
    ws->rx_bytes += n->len;
    if (ws->rx_bytes >= WS_RX_PAUSE && !ws->rx_paused) {
        ws->rx_paused = true;
        lws_rx_flow_control(wsi, 0);
    }
    return 0;
}

static int
on_writeable(struct lws *wsi, ws_t *ws)
{
    ws_node_t *n = node_pop(&ws->tx_head, &ws->tx_tail);
    if (n) {
        int wrc = lws_write(wsi, (unsigned char *)n->data + LWS_PRE, n->len,
                            n->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
        ws->tx_bytes -= n->len;
        free(n->data);
        free(n);
        if (wrc < 0) {
            snprintf(ws->why, sizeof ws->why, "write to the server failed");
            return -1;
        }
        if (ws->tx_head)
            lws_callback_on_writable(wsi);
        else if (ws->drain_cb)
            ws->drain_cb(ws->drain_arg);
        if (ws->tx_head || !ws->closing)
            return 0;
    }
    if (ws->closing) {
        lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
        return -1;
    }
    return 0;
}

static int
callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    (void)user;
    ws_t *ws = wsi ? lws_get_opaque_user_data(wsi) : NULL;
    if (!ws)
        return 0;
    switch (reason) {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
        if (ws->auth[0]) {
            unsigned char **p = in, *end = *p + len;
            if (lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION,
                                             (unsigned char *)ws->auth, (int)strlen(ws->auth), p,
                                             end)) {
                snprintf(ws->why, sizeof ws->why, "the token does not fit in the handshake");
                return -1;
            }
        }
        break;
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        ws->wsi = wsi;
        ws->state = WS_OPEN;
        if (ws->tx_head || ws->closing)
            lws_callback_on_writable(wsi);
        break;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR: {
        char msg[ERR_MSG_MAX];
        int status = (int)lws_http_client_http_response(wsi);
        if (status && status != 101)
            snprintf(msg, sizeof msg, "HTTP %d instead of a WebSocket upgrade%s%.150s", status,
                     in ? ": " : "", in ? (const char *)in : "");
        else
            snprintf(msg, sizeof msg, "%.160s (is a gateway listening there?)",
                     in && len ? (const char *)in : "connection failed");
        mark_closed(ws, msg);
        lws_set_opaque_user_data(wsi, NULL);
        break;
    }
    case LWS_CALLBACK_CLIENT_RECEIVE: return on_receive(wsi, ws, in, len);
    case LWS_CALLBACK_CLIENT_WRITEABLE: return on_writeable(wsi, ws);
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        if (len >= 2) {
            const uint8_t *b = in;
            ws->close_code = b[0] << 8 | b[1];
            snprintf(ws->why, sizeof ws->why, "closed by the server (%d%s%.*s)", ws->close_code,
                     len > 2 ? " " : "", (int)(len > 2 ? (len - 2 > 120 ? 120 : len - 2) : 0),
                     (const char *)in + 2);
        } else {
            snprintf(ws->why, sizeof ws->why, "closed by the server");
        }
        break;
    case LWS_CALLBACK_CLIENT_CLOSED:
        mark_closed(ws, ws->closing ? "closed" : "connection closed by the server");
        lws_set_opaque_user_data(wsi, NULL);
        break;
    default: break;
    }
    return 0;
}

static const struct lws_protocols protocols[] = {
    {"sandpipe-cli", callback, 0, 65536, 0, NULL, 0},
    {HTTP_PROTOCOL_NAME, http_callback, 0, 65536, 0, NULL, 0}, /* http.c's plain requests */
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void
on_timer(uv_timer_t *t)
{
    ws_ctx_t *ctx = t->data;
    ctx->timed_out = true;
}

/* Runs the loop until done(ws) or timeout_ms (< 0: no limit). Returns true when done. */
static bool
run_until(ws_t *ws, bool (*done)(const ws_t *), int timeout_ms)
{
    ws_ctx_t *ctx = ws->ctx;
    if (done(ws))
        return true;
    ctx->timed_out = false;
    if (timeout_ms >= 0)
        uv_timer_start(&ctx->timer, on_timer, (uint64_t)timeout_ms, 0);
    while (!done(ws) && !ctx->timed_out && !ws->interrupted)
        uv_run(ctx->loop, UV_RUN_ONCE);
    uv_timer_stop(&ctx->timer);
    return done(ws);
}

bool
ws_url_tls(const char *url)
{
    return url && (!strncmp(url, "wss://", 6) || !strncmp(url, "https://", 8));
}

ws_ctx_t *
ws_ctx_new(uv_loop_t *loop, bool tls, err_t *err)
{
    ws_ctx_t *ctx = xcalloc(1, sizeof *ctx);
    ctx->loop = loop;
    if (!getenv("SANDPIPE_DEBUG"))
        lws_set_log_level(0, NULL);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    void *foreign[] = {loop};
    /* OpenSSL's setup (the client SSL_CTX, the system's CA store) costs ~25 ms of CPU: only for
     * wss:// and https:// URLs. */
    info.options = LWS_SERVER_OPTION_LIBUV | (tls ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0);
    info.foreign_loops = foreign;
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.timeout_secs = 15;
    info.gid = (gid_t)-1;
    info.uid = (uid_t)-1;
    ctx->lws = lws_create_context(&info);
    if (!ctx->lws) {
        free(ctx);
        err_set(err, ENOMEM, "cannot create the WebSocket client context");
        return NULL;
    }
    uv_timer_init(loop, &ctx->timer);
    ctx->timer.data = ctx;
    return ctx;
}

static void
on_ctx_timer_closed(uv_handle_t *h)
{
    free(h->data);
}

void
ws_ctx_free(ws_ctx_t *ctx)
{
    if (!ctx)
        return;
    /* With a foreign libuv loop, lws 4.1 finishes destroying its context only when it is
     * called again once the loop has run its handles' close callbacks. */
    struct lws_context *lws = ctx->lws;
    uv_loop_t *loop = ctx->loop;
    lws_context_destroy(lws);
    uv_close((uv_handle_t *)&ctx->timer, on_ctx_timer_closed);
    uv_run(loop, UV_RUN_DEFAULT);
    lws_context_destroy(lws);
}

struct lws_context *
ws_ctx_lws(ws_ctx_t *ctx)
{
    return ctx->lws;
}

uv_loop_t *
ws_ctx_loop(ws_ctx_t *ctx)
{
    return ctx->loop;
}

int
ws_parse_url(char *url_buf, const char **host, int *port, const char **prefix, bool *tls,
             err_t *err)
{
    const char *scheme = NULL, *path = NULL;
    char *raw = xstrdup(url_buf);
    if (lws_parse_uri(url_buf, &scheme, host, port, &path) || !**host) {
        err_set(err, EINVAL, "bad url \"%.200s\" (expected ws://HOST:PORT or wss://HOST:PORT)",
                raw);
        free(raw);
        return -EINVAL;
    }
    if (!strcmp(scheme, "ws") || !strcmp(scheme, "http")) {
        *tls = false;
    } else if (!strcmp(scheme, "wss") || !strcmp(scheme, "https")) {
        *tls = true; /* lws_parse_uri already defaults the port to 443 */
    } else {
        err_set(err, EINVAL, "bad url \"%.200s\": the scheme must be ws, wss, http or https", raw);
        free(raw);
        return -EINVAL;
    }
    free(raw);
    *prefix = path;
    return 0;
}

static bool
not_connecting(const ws_t *ws)
{
    return ws->state != WS_CONNECTING;
}

ws_t *
ws_open(ws_ctx_t *ctx, const ws_target_t *t, const char *path, int timeout_ms, err_t *err)
{
    char url[1024];
    if (snprintf(url, sizeof url, "%s", t->url ? t->url : "") >= (int)sizeof url) {
        err_set(err, EINVAL, "the url is too long");
        return NULL;
    }
    const char *host, *prefix;
    int port;
    bool tls;
    if (ws_parse_url(url, &host, &port, &prefix, &tls, err) < 0)
        return NULL;
    /* lws_parse_uri drops the leading '/' of the url's path: it is the prefix (nginx location). */
    size_t plen = strlen(prefix);
    while (plen && prefix[plen - 1] == '/')
        plen--;
    char *full = plen ? xasprintf("/%.*s%s", (int)plen, prefix, path) : xstrdup(path);
    ws_t *ws = xcalloc(1, sizeof *ws);
    ws->ctx = ctx;
    if (t->token && *t->token) {
        if (strlen(t->token) > JWT_MAX_LEN) {
            free(full);
            free(ws);
            err_set(err, EINVAL, "the token is too long");
            return NULL;
        }
        snprintf(ws->auth, sizeof ws->auth, "Bearer %s", t->token);
    }
    struct lws_client_connect_info ci;
    memset(&ci, 0, sizeof ci);
    ci.context = ctx->lws;
    ci.address = host;
    ci.port = port;
    ci.path = full;
    ci.host = host;
    ci.origin = host;
    ci.ssl_connection = tls ? LCCSCF_USE_SSL : 0;
    if (tls && t->insecure)
        ci.ssl_connection |= LCCSCF_ALLOW_SELFSIGNED | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK |
                             LCCSCF_ALLOW_EXPIRED | LCCSCF_ALLOW_INSECURE;
    ci.ietf_version_or_minus_one = -1;
    ci.local_protocol_name = protocols[0].name;
    ci.opaque_user_data = ws;
    ws->state = WS_CONNECTING;
    struct lws *wsi = lws_client_connect_via_info(&ci);
    if (ws->state == WS_CONNECTING) {
        if (wsi)
            ws->wsi = wsi;
        else
            mark_closed(ws, "cannot start the connection");
    }
    run_until(ws, not_connecting, timeout_ms);
    if (ws->state != WS_OPEN) {
        if (ws->state == WS_CONNECTING)
            snprintf(ws->why, sizeof ws->why, "timed out");
        err_set(err, ECONNREFUSED, "cannot connect to %s%s: %s", t->url, full, ws->why);
        free(full);
        ws_close(ws);
        return NULL;
    }
    free(full);
    return ws;
}

int
ws_send(ws_t *ws, bool binary, const void *p, size_t n)
{
    if (ws->state != WS_OPEN || ws->closing)
        return -EPIPE;
    ws_node_t *node = xcalloc(1, sizeof *node);
    node->binary = binary;
    node->len = n;
    node->data = xmalloc(LWS_PRE + n + 1);
    if (n)
        memcpy(node->data + LWS_PRE, p, n);
    node_push(&ws->tx_head, &ws->tx_tail, node);
    ws->tx_bytes += n;
    lws_callback_on_writable(ws->wsi);
    return 0;
}

size_t
ws_pending(const ws_t *ws)
{
    return ws->tx_bytes;
}

void
ws_on_drain(ws_t *ws, void (*cb)(void *arg), void *arg)
{
    ws->drain_cb = cb;
    ws->drain_arg = arg;
}

static bool
has_message_or_closed(const ws_t *ws)
{
    return ws->rx_head || ws->state == WS_CLOSED;
}

int
ws_recv(ws_t *ws, ws_msg_t *msg, int timeout_ms, err_t *err)
{
    run_until(ws, has_message_or_closed, timeout_ms);
    ws_node_t *n = node_pop(&ws->rx_head, &ws->rx_tail);
    if (n) {
        ws->rx_bytes -= n->len;
        if (ws->rx_paused && ws->rx_bytes < WS_RX_RESUME && ws->wsi) {
            ws->rx_paused = false;
            lws_rx_flow_control(ws->wsi, 1);
        }
        msg->binary = n->binary;
        msg->data = n->data;
        msg->len = n->len;
        free(n);
        return 1;
    }
    if (ws->interrupted) {
        ws->interrupted = false;
        return err_set(err, ECANCELED, "interrupted");
    }
    if (ws->state == WS_CLOSED)
        return err_set(err, ECONNRESET, "%s", ws->why[0] ? ws->why : "connection closed");
    return 0;
}

void
ws_interrupt(ws_t *ws)
{
    ws->interrupted = true;
}

static bool
is_closed(const ws_t *ws)
{
    return ws->state == WS_CLOSED;
}

void
ws_close(ws_t *ws)
{
    if (!ws)
        return;
    if (ws->wsi && ws->state == WS_OPEN) {
        ws->closing = true;
        ws->interrupted = false;
        lws_callback_on_writable(ws->wsi);
        run_until(ws, is_closed, 1000);
    }
    if (ws->wsi) /* still there: it outlives us, so it must forget us */
        lws_set_opaque_user_data(ws->wsi, NULL);
    ws_node_t *n;
    while ((n = node_pop(&ws->rx_head, &ws->rx_tail))) {
        free(n->data);
        free(n);
    }
    while ((n = node_pop(&ws->tx_head, &ws->tx_tail))) {
        free(n->data);
        free(n);
    }
    buf_free(&ws->partial);
    free(ws);
}
