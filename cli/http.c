/* http.c — the CLI's plain HTTP/1.1 requests (see http.h): libwebsockets' HTTP client role on
 * the WebSocket context (one protocol callback, one switch). The http_t lives on http_run's
 * stack and is the wsi's opaque user data; it is detached before http_run returns, so late
 * callbacks (context destruction) find nothing. */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jwt.h"
#include "xalloc.h"

#define HTTP_TX_CHUNK (64u * 1024) /* request body bytes per lws_write */
#define HTTP_RX_CHUNK (64u * 1024)

typedef struct {
    const http_req_t *req;
    struct lws *wsi;
    int status;
    long long sent;     /* request body bytes written */
    long long expect;   /* the response's Content-Length, -1 when not given */
    long long received; /* response body bytes */
    bool done, failed;
    err_t err; /* the first failure */
    char *tx;  /* LWS_PRE, room for a chunk header, HTTP_TX_CHUNK, room for its CRLF */
    uv_timer_t idle;
    char auth[8 + JWT_BUF_LEN];
} http_t;

#define CHUNK_HEAD 12 /* "%lx\r\n" of a chunk up to HTTP_TX_CHUNK */

/* Records the first failure (after success nothing counts) and returns -1. */
static int
fail(http_t *h, int code, const char *msg)
{
    if (!h->failed && !h->done) {
        h->failed = true;
        err_set(&h->err, code, "%s", msg);
    }
    return -1;
}

/* Writes the next piece of the request body; the last one is LWS_WRITE_HTTP_FINAL. */
static int
on_body_writeable(http_t *h, struct lws *wsi)
{
    const http_req_t *q = h->req;
    char *data = h->tx + LWS_PRE + CHUNK_HEAD;
    size_t cap = HTTP_TX_CHUNK;
    if (q->body_len >= 0 && (unsigned long long)(q->body_len - h->sent) < cap)
        cap = (size_t)(q->body_len - h->sent);
    long n = 0;
    if (cap) {
        n = q->body(q->ud, data, cap, &h->err);
        if (n < 0) {
            h->failed = true; /* err set by the source */
            return -1;
        }
    }
    uv_timer_again(&h->idle);
    h->sent += n;
    char *start = data;
    size_t len = (size_t)n;
    bool last;
    if (q->body_len == HTTP_CHUNKED) {
        /* Chunked framing by hand: lws 4.1 sends client bodies as they are given. */
        char head[CHUNK_HEAD + 1];
        int k = snprintf(head, sizeof head, "%lx\r\n", (unsigned long)n);
        start = data - k;
        memcpy(start, head, (size_t)k);
        memcpy(data + n, "\r\n", 2);
        len += (size_t)k + 2;
        last = n == 0;
    } else {
        if (n == 0 && h->sent < q->body_len)
            return fail(h, EIO, "the file ended before its announced size");
        last = h->sent == q->body_len;
    }
    int wrc =
        lws_write(wsi, (unsigned char *)start, len, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP);
    if (wrc < 0)
        return fail(h, EPIPE, "writing the request body failed");
    if (last)
        lws_client_http_body_pending(wsi, 0);
    else
        lws_callback_on_writable(wsi);
    return 0;
}

static int
append_headers(http_t *h, struct lws *wsi, unsigned char **p, unsigned char *end)
{
    const http_req_t *q = h->req;
    if (h->auth[0] &&
        lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, (unsigned char *)h->auth,
                                     (int)strlen(h->auth), p, end))
        return fail(h, EINVAL, "the token does not fit in the request headers");
    if (q->body_len == HTTP_NO_BODY)
        return 0;
    char v[32];
    int vlen = q->body_len >= 0 ? snprintf(v, sizeof v, "%lld", q->body_len)
                                : snprintf(v, sizeof v, "chunked");
    int rc = q->body_len >= 0
                 ? lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH,
                                                (unsigned char *)v, vlen, p, end)
                 : lws_add_http_header_by_name(wsi, (const unsigned char *)"transfer-encoding:",
                                               (unsigned char *)v, vlen, p, end);
    if (rc ||
        lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE,
                                     (const unsigned char *)"application/octet-stream", 24, p, end))
        return fail(h, EINVAL, "the request headers do not fit");
    if (q->body_len != 0) {
        lws_client_http_body_pending(wsi, 1);
        lws_callback_on_writable(wsi);
    }
    return 0;
}

static void
on_established(http_t *h, struct lws *wsi)
{
    h->status = (int)lws_http_client_http_response(wsi);
    char v[32];
    if (lws_hdr_copy(wsi, v, sizeof v, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0)
        h->expect = strtoll(v, NULL, 10);
}

int
http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    (void)user;
    http_t *h = wsi ? lws_get_opaque_user_data(wsi) : NULL;
    if (!h)
        return 0;
    switch (reason) {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: {
        unsigned char **p = in, *end = *p + len;
        return append_headers(h, wsi, p, end);
    }
    case LWS_CALLBACK_CLIENT_HTTP_WRITEABLE: return on_body_writeable(h, wsi);
    case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP: on_established(h, wsi); break;
    case LWS_CALLBACK_RECEIVE_CLIENT_HTTP: {
        char buf[LWS_PRE + HTTP_RX_CHUNK];
        char *px = buf + LWS_PRE;
        int lenx = (int)HTTP_RX_CHUNK;
        if (lws_http_client_read(wsi, &px, &lenx) < 0)
            return fail(h, EIO, "reading the response failed");
        return 0;
    }
    case LWS_CALLBACK_RECEIVE_CLIENT_HTTP_READ:
        uv_timer_again(&h->idle);
        h->received += (long long)len;
        if (h->req->sink(h->req->ud, h->status, in, len, &h->err) < 0) {
            h->failed = true;
            return -1;
        }
        return 0;
    case LWS_CALLBACK_COMPLETED_CLIENT_HTTP:
        if (h->expect >= 0 && h->received != h->expect)
            return fail(h, EIO, "the response was cut short");
        h->done = true;
        break;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        fail(h, ECONNREFUSED, in && len ? (const char *)in : "connection failed");
        h->wsi = NULL;
        lws_set_opaque_user_data(wsi, NULL);
        break;
    case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
        if (!h->done && h->expect >= 0 && h->received == h->expect && h->status)
            h->done = true; /* closed right after the last byte */
        fail(h, ECONNRESET, "the server closed the connection before the response ended");
        h->wsi = NULL;
        lws_set_opaque_user_data(wsi, NULL);
        break;
    default: break;
    }
    return 0;
}

static void
on_idle(uv_timer_t *t)
{
    http_t *h = t->data;
    fail(h, ETIMEDOUT, "no progress for 120 s: giving up");
}

static void
on_idle_closed(uv_handle_t *t)
{
    *(bool *)t->data = true;
}

int
http_run(ws_ctx_t *ctx, const ws_target_t *t, const http_req_t *req, err_t *err)
{
    char url[1024];
    if (snprintf(url, sizeof url, "%s", t->url ? t->url : "") >= (int)sizeof url)
        return err_set(err, EINVAL, "the url is too long");
    const char *host, *prefix;
    int port;
    bool tls;
    if (ws_parse_url(url, &host, &port, &prefix, &tls, err) < 0)
        return -EINVAL;
    size_t plen = strlen(prefix);
    while (plen && prefix[plen - 1] == '/')
        plen--;
    char *full = xasprintf("%s%.*s%s", plen ? "/" : "", (int)plen, prefix, req->path);
    http_t h = {.req = req, .expect = -1};
    if (t->token && *t->token)
        snprintf(h.auth, sizeof h.auth, "Bearer %s", t->token);
    h.tx = xmalloc(LWS_PRE + CHUNK_HEAD + HTTP_TX_CHUNK + 2);
    uv_loop_t *loop = ws_ctx_loop(ctx);
    uv_timer_init(loop, &h.idle);
    h.idle.data = &h;
    uv_timer_start(&h.idle, on_idle, HTTP_IDLE_MS, HTTP_IDLE_MS);

    struct lws_client_connect_info ci;
    memset(&ci, 0, sizeof ci);
    ci.context = ws_ctx_lws(ctx);
    ci.address = host;
    ci.port = port;
    ci.path = full;
    ci.host = host;
    ci.origin = host;
    ci.method = req->method;
    ci.alpn = "http/1.1"; /* the chunked framing above is HTTP/1.1's */
    ci.ssl_connection = tls ? LCCSCF_USE_SSL : 0;
    if (tls && t->insecure)
        ci.ssl_connection |= LCCSCF_ALLOW_SELFSIGNED | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK |
                             LCCSCF_ALLOW_EXPIRED | LCCSCF_ALLOW_INSECURE;
    ci.local_protocol_name = HTTP_PROTOCOL_NAME;
    ci.opaque_user_data = &h;
    ci.pwsi = &h.wsi;
    if (!lws_client_connect_via_info(&ci) && !h.failed)
        fail(&h, ECONNREFUSED, "cannot start the connection");
    while (!h.done && !h.failed)
        uv_run(loop, UV_RUN_ONCE);
    if (h.wsi) { /* still open (kept alive, or given up on): it must forget us */
        lws_set_opaque_user_data(h.wsi, NULL);
        if (h.failed)
            lws_set_timeout(h.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
    }
    bool closed = false;
    h.idle.data = &closed;
    uv_close((uv_handle_t *)&h.idle, on_idle_closed);
    while (!closed)
        uv_run(loop, UV_RUN_ONCE);
    free(h.tx);
    int rc = h.status;
    if (!h.done) {
        err_set(err, h.err.code ? h.err.code : EIO, "%s%s%s", h.err.msg,
                h.err.code == ECONNREFUSED ? " at " : "", h.err.code == ECONNREFUSED ? t->url : "");
        rc = h.err.code ? -h.err.code : -EIO;
    }
    free(full);
    return rc;
}
