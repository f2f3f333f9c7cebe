/* http_server.c — the HTTP requests of the gateway's listener (http_server.h): reading one
 * (headers copied, query split, body bounded or streamed), handing it to its route
 * (http_routes.c), its answer (written in WRITEABLE: the head, then the body in pieces of
 * HTTP_WRITE_MAX, or chunked), keep-alive. */
#include "http_server.h"

#include <libwebsockets.h>
#include <uv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "buf.h"
#include "gw.h"
#include "http_rest.h"
#include "json_util.h"
#include "xalloc.h"

#define HTTP_WRITE_MAX     (256 * 1024)
#define HTTP_STREAM_SNDBUF (2 << 20) /* a streamed answer's socket send buffer */
/* Room left before an answer's body for its head: head and body leave in one write (one TCP
 * segment for nginx to read, no wake-up between them). */
#define HTTP_HEAD_MAX 1024

static uint64_t next_id = 1;
/* Requests that wait for an answer: few at a time (one per nginx connection). */
typedef struct live {
    struct live *next;
    http_req_t *h;
} live_t;
static live_t *live;

http_req_t *
http_find(uint64_t id)
{
    for (live_t *l = live; l; l = l->next)
        if (l->h->id == id)
            return l->h;
    return NULL;
}

static void
live_del(http_req_t *h)
{
    for (live_t **pp = &live; *pp; pp = &(*pp)->next)
        if ((*pp)->h == h) {
            live_t *l = *pp;
            *pp = l->next;
            free(l);
            return;
        }
}

static void
req_free(http_req_t *h)
{
    if (!h)
        return;
    live_del(h);
    if (h->free_ud)
        h->free_ud(h->ud);
    for (int i = 0; i < h->nargs; i++)
        free(h->args[i]);
    free(h->body);
    free(h->out);
    free(h->pending);
    free(h);
}

const char *
http_arg(const http_req_t *h, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < h->nargs; i++)
        if (!strncmp(h->args[i], name, n) && h->args[i][n] == '=')
            return h->args[i] + n + 1;
        else if (!strcmp(h->args[i], name))
            return "";
    return NULL;
}

void
http_answer(http_req_t *h, int status, const char *ctype, const char *body, size_t len)
{
    if (h->answered)
        return;
    h->answered = true;
    h->status = status;
    h->out = xmalloc(LWS_PRE + HTTP_HEAD_MAX + len + 1);
    memcpy(h->out + LWS_PRE + HTTP_HEAD_MAX, body, len);
    h->out_len = len;
    if (ctype)
        snprintf(h->extra + strlen(h->extra), sizeof h->extra - strlen(h->extra),
                 "content-type: %s\r\n", ctype);
    http_body_flow(h, true); /* lws gives no WRITEABLE while reading is paused */
    if (h->wsi)
        lws_callback_on_writable(h->wsi);
}

void
http_stream_head(http_req_t *h, int status, const char *ctype, unsigned long long total,
                 const char *extra)
{
    if (h->answered)
        return;
    h->answered = h->streaming = true;
    h->status = status;
    h->stream_total = total;
    if (h->wsi) {
        /* a stream's pieces (HTTP_WRITE_MAX) leave whole and the reader (nginx) may fall behind
         * by a few of them before the gateway waits: the default unix socket buffer (~200 KiB)
         * took less than one piece, the rest copied and sent on a later WRITEABLE */
        int sndbuf = HTTP_STREAM_SNDBUF;
        (void)setsockopt(lws_get_socket_fd(h->wsi), SOL_SOCKET, SO_SNDBUF, &sndbuf,
                         sizeof sndbuf); /* best effort */
    }
    snprintf(h->extra, sizeof h->extra, "content-type: %s\r\n%s", ctype, extra ? extra : "");
    http_body_flow(h, true);
    if (h->wsi)
        lws_callback_on_writable(h->wsi);
}

void
http_stream_write(http_req_t *h, const void *p, size_t n)
{
    if (!h->streaming || h->stream_ended)
        return;
    if (h->pending_off + h->pending_len + n > h->pending_cap) {
        /* what was written moves to the front once, not on every write */
        if (h->pending_off)
            memmove(h->pending, h->pending + h->pending_off, h->pending_len);
        h->pending_off = 0;
        if (h->pending_len + n > h->pending_cap) {
            h->pending_cap = (h->pending_len + n) * 2;
            h->pending = xrealloc(h->pending, h->pending_cap);
        }
    }
    memcpy(h->pending + h->pending_off + h->pending_len, p, n);
    h->pending_len += n;
    if (h->wsi)
        lws_callback_on_writable(h->wsi);
}

void
http_stream_fail(http_req_t *h)
{
    h->stream_failed = true;
    http_stream_end(h);
}

void
http_stream_end(http_req_t *h)
{
    h->stream_ended = true;
    if (h->wsi)
        lws_callback_on_writable(h->wsi);
}

void
http_answer_json(http_req_t *h, int status, json_object *o)
{
    size_t len;
    char *fixed; /* a name that is not UTF-8 in a message (an error naming a path) */
    const char *t = json_valid_text(json_text(o, &len), &len, &fixed);
    http_answer(h, status, NULL, t, len);
    free(fixed);
    json_object_put(o);
}

/* ---- lws callbacks ---- */

static void
copy_header(struct lws *wsi, enum lws_token_indexes t, char *out, size_t cap)
{
    out[0] = '\0';
    if (lws_hdr_total_length(wsi, t) < (int)cap)
        lws_hdr_copy(wsi, out, (int)cap, t);
}

static void
copy_custom(struct lws *wsi, const char *name, char *out, size_t cap)
{
    out[0] = '\0';
    int n = (int)strlen(name), len = lws_hdr_custom_length(wsi, name, n);
    if (len > 0 && len < (int)cap)
        lws_hdr_custom_copy(wsi, out, (int)cap, name, n);
}

static const struct {
    enum lws_token_indexes tok;
    const char *name;
} methods[] = {
    {WSI_TOKEN_GET_URI, "GET"},         {WSI_TOKEN_POST_URI, "POST"},
    {WSI_TOKEN_PUT_URI, "PUT"},         {WSI_TOKEN_DELETE_URI, "DELETE"},
    {WSI_TOKEN_PATCH_URI, "PATCH"},     {WSI_TOKEN_HEAD_URI, "HEAD"},
    {WSI_TOKEN_OPTIONS_URI, "OPTIONS"},
};

int
http_on_request(struct lws *wsi, http_req_t **slot, const char *uri)
{
    req_free(*slot); /* a request left unanswered on this connection (cannot happen) */
    http_req_t *h = xcalloc(1, sizeof *h);
    *slot = h;
    h->id = next_id++;
    h->wsi = wsi;
    live_t *l = xmalloc(sizeof *l);
    l->h = h;
    l->next = live;
    live = l;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (lws_hdr_total_length(wsi, methods[i].tok) > 0) {
            snprintf(h->method, sizeof h->method, "%s", methods[i].name);
            break;
        }
    /* a runtime's own URL is its /runtime/ route (api/openhands/runtime_api_path.c) */
    if (!strncmp(uri, "/rt-", 4))
        snprintf(h->path, sizeof h->path, "/runtime%.500s", uri);
    else
        snprintf(h->path, sizeof h->path, "%.510s", uri);
    copy_header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, h->authorization, sizeof h->authorization);
    copy_header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, h->content_type, sizeof h->content_type);
    copy_header(wsi, WSI_TOKEN_HTTP_CONTENT_ENCODING, h->content_encoding,
                sizeof h->content_encoding);
    copy_custom(wsi, "x-session-api-key:", h->api_key, sizeof h->api_key);
    copy_custom(wsi, "x-sp-uri:", h->uri, sizeof h->uri);
    copy_custom(wsi, "x-sp-method:", h->uri_method, sizeof h->uri_method);
    copy_custom(wsi, "x-sp-route-key:", h->route_key, sizeof h->route_key);
    copy_custom(wsi, "x-sp-preview-origin:", h->preview_origin, sizeof h->preview_origin);
    copy_custom(wsi, "x-access-token:", h->access_token, sizeof h->access_token);
    copy_custom(wsi, "connect-timeout-ms:", h->connect_timeout, sizeof h->connect_timeout);
    copy_custom(wsi, "keepalive-ping-interval:", h->keepalive, sizeof h->keepalive);
    char a[4200]; /* a file path (4096) and its name */
    for (int n = 0; h->nargs < HTTP_ARGS_MAX; n++) {
        int k = lws_hdr_copy_fragment(wsi, a, sizeof a, WSI_TOKEN_HTTP_URI_ARGS, n);
        if (k < 0)
            break;
        h->args[h->nargs++] = xstrdup(a);
    }
    char cl[32] = "";
    copy_header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, cl, sizeof cl);
    h->has_length = cl[0] != '\0';
    h->content_length = strtoull(cl, NULL, 10);
    /* lws reads no chunked body (it would hand us the chunks' framing): nginx never sends one */
    if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0) {
        h->close_after = true;
        http_rest_fail(h, ERR_BAD_REQ, "a chunked request body is not read here: send its length");
        return 0;
    }
    /* lws gives every request 30 s to be read (the body timeout, re-armed per piece of body and
     * cleared at its end): one without a body would lose its connection 30 s in, a long
     * download cut short */
    if (!h->has_length || !h->content_length)
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
    if (http_route_streams(h)) {
        bool body_method =
            !strcmp(h->method, "POST") || !strcmp(h->method, "PUT") || !strcmp(h->method, "PATCH");
        h->body_streamed = true;
        /* without a length lws waits for a body of 100 MiB: taken as empty, the connection
         * closes after the answer */
        h->close_after = !h->has_length && body_method;
        h->body_done = !h->has_length || !h->content_length;
        if (!h->body_done)
            http_body_flow(h, false); /* until the handler can take it */
        http_dispatch(h);
        return 0;
    }
    if (h->has_length && h->content_length > 0) {
        if (h->content_length > HTTP_BODY_MAX)
            h->body_too_big = true;
        return 0; /* the handler runs once the body is in */
    }
    http_dispatch(h);
    return 0;
}

static uv_timer_t untimer;

static void
clear_timeouts(uv_timer_t *t)
{
    (void)t;
    for (live_t *l = live; l; l = l->next)
        if (l->h->rx_paused && l->h->wsi)
            lws_set_timeout(l->h->wsi, NO_PENDING_TIMEOUT, 0);
}

void
http_server_init(void)
{
    uv_timer_init(g_gw.loop, &untimer);
    uv_unref((uv_handle_t *)&untimer);
}

void
http_body_sink(http_req_t *h, void (*on_body)(void *ud, const void *p, size_t n),
               void (*on_end)(void *ud))
{
    h->on_body = on_body;
    h->on_body_end = on_end;
    uint64_t id = h->id;
    if (h->body_len && !h->answered) { /* what came before the sink */
        char *early = h->body;
        size_t n = h->body_len;
        h->body = NULL;
        h->body_len = 0;
        on_body(h->ud, early, n);
        free(early);
    }
    if (http_find(id) == h && h->body_done && !h->answered)
        on_end(h->ud);
}

void
http_body_flow(http_req_t *h, bool on)
{
    if (!h->wsi)
        return;
    /* lws restarts its 30 s body timeout after each piece it hands us, after our callback:
     * while we hold the reading (a slow sandbox disk) the loop's next turn clears it (nginx's
     * proxy_send_timeout bounds the wait instead) */
    if (!on)
        uv_timer_start(&untimer, clear_timeouts, 0, 0);
    if (h->rx_paused == !on)
        return;
    h->rx_paused = !on;
    lws_rx_flow_control(h->wsi, on ? 1 : 0);
}

/* A streamed body's bytes: to the sink, held until there is one, dropped once answered. */
static int
streamed_body(http_req_t *h, const void *in, size_t len)
{
    if (h->answered || h->body_done)
        return 0;
    if (h->on_body) {
        h->on_body(h->ud, in, len);
        return 0;
    }
    if (h->body_len + len > HTTP_BODY_MAX) /* only the pieces read with the headers come early */
        return -1;
    h->body = xrealloc(h->body, h->body_len + len + 1);
    memcpy(h->body + h->body_len, in, len);
    h->body_len += len;
    return 0;
}

int
http_on_body(struct lws *wsi, http_req_t *h, const void *in, size_t len)
{
    (void)wsi;
    if (h && h->body_streamed && len)
        return streamed_body(h, in, len);
    if (!h || h->body_too_big || len == 0) /* lws may pass an empty chunk with in NULL */
        return 0;
    if (h->body_len + len > HTTP_BODY_MAX) {
        h->body_too_big = true;
        free(h->body);
        h->body = NULL;
        h->body_len = 0;
        return 0;
    }
    h->body = xrealloc(h->body, h->body_len + len + 1);
    memcpy(h->body + h->body_len, in, len);
    h->body_len += len;
    h->body[h->body_len] = '\0';
    return 0;
}

int
http_on_body_done(struct lws *wsi, http_req_t **slot)
{
    http_req_t *h = *slot;
    if (!h)
        return -1;
    if (h->body_streamed) {
        bool ended = h->body_done;
        h->body_done = true;
        if (h->lingering) { /* answered already: the connection is ready for the next */
            req_free(h);
            *slot = NULL;
            return lws_http_transaction_completed(wsi) ? -1 : 0;
        }
        if (!ended && !h->answered && h->on_body_end)
            h->on_body_end(h->ud);
        return 0;
    }
    if (!h->answered)
        http_dispatch(h);
    return 0;
}

/* The answer is out: the next request may come on the connection, once the body is read. */
static int
answered(struct lws *wsi, http_req_t **slot)
{
    http_req_t *h = *slot;
    if (h->close_after)
        return -1;
    if (h->body_streamed && !h->body_done) {
        /* the handler is done with it; the rest of the body is read and dropped */
        if (h->free_ud)
            h->free_ud(h->ud);
        h->free_ud = NULL;
        h->ud = NULL;
        h->on_body = NULL;
        h->on_body_end = NULL;
        live_del(h);
        h->lingering = true;
        http_body_flow(h, true);
        return 0;
    }
    req_free(h);
    *slot = NULL;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* n bytes of the pending body went out. */
static void
pending_taken(http_req_t *h, size_t n)
{
    h->pending_len -= n;
    h->pending_off = h->pending_len ? h->pending_off + n : 0;
}

/* The next chunk of a chunked body (HTTP_STREAM_CHUNKED): at most HTTP_WRITE_MAX, framed, one
 * lws_write; the last-chunk once it ended. A stream that failed ends without the last-chunk:
 * the connection closes and nginx and the client see the body cut short. */
static int
write_chunked(struct lws *wsi, http_req_t **slot)
{
    static unsigned char piece[LWS_PRE + 16 + HTTP_WRITE_MAX + 8];
    http_req_t *h = *slot;
    if (h->pending_len) {
        size_t n = h->pending_len < HTTP_WRITE_MAX ? h->pending_len : HTTP_WRITE_MAX;
        int k = snprintf((char *)piece + LWS_PRE, 16, "%zx\r\n", n);
        memcpy(piece + LWS_PRE + k, h->pending + h->pending_off, n);
        memcpy(piece + LWS_PRE + k + n, "\r\n", 2);
        pending_taken(h, n);
        h->stream_sent += n;
        if (lws_write(wsi, piece + LWS_PRE, (size_t)k + n + 2, LWS_WRITE_HTTP) <
            (int)((size_t)k + n + 2))
            return -1;
        if (h->on_sent)
            h->on_sent(h->ud, n);
        if (h->pending_len || h->stream_ended)
            lws_callback_on_writable(wsi);
        return 0;
    }
    if (!h->stream_ended)
        return 0; /* more is coming: its writer asks for WRITEABLE */
    if (h->stream_failed)
        return -1;
    memcpy(piece + LWS_PRE, "0\r\n\r\n", 5);
    if (lws_write(wsi, piece + LWS_PRE, 5, LWS_WRITE_HTTP_FINAL) < 5)
        return -1;
    return answered(wsi, slot);
}

/* The next piece of a streamed body: at most HTTP_WRITE_MAX, one lws_write. */
static int
write_streamed(struct lws *wsi, http_req_t **slot)
{
    static unsigned char piece[LWS_PRE + HTTP_WRITE_MAX];
    http_req_t *h = *slot;
    if (h->stream_total == HTTP_STREAM_CHUNKED)
        return write_chunked(wsi, slot);
    if (h->pending_len) {
        size_t n = h->pending_len < HTTP_WRITE_MAX ? h->pending_len : HTTP_WRITE_MAX;
        if (h->stream_sent + n > h->stream_total)
            return -1; /* more than announced: a bug upstream, not a body to send */
        memcpy(piece + LWS_PRE, h->pending + h->pending_off, n);
        pending_taken(h, n);
        h->stream_sent += n;
        bool last = h->stream_sent == h->stream_total;
        if (lws_write(wsi, piece + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) <
            (int)n)
            return -1;
        if (h->on_sent)
            h->on_sent(h->ud, n);
        if (h->pending_len || !h->stream_ended)
            lws_callback_on_writable(wsi);
        if (!last || !h->stream_ended)
            return 0;
    }
    if (!h->stream_ended)
        return 0; /* more is coming: its writer asks for WRITEABLE */
    if (h->stream_sent < h->stream_total)
        return -1; /* cut short: the client must not take it for the whole body */
    if (h->stream_total == 0 && lws_write(wsi, piece + LWS_PRE, 0, LWS_WRITE_HTTP_FINAL) < 0)
        return -1;
    return answered(wsi, slot);
}

/* The head at *p (up to end): status, length, content type, the extra lines, the blank line. */
static int
write_head(struct lws *wsi, http_req_t *h, uint8_t **p, uint8_t *end)
{
    bool chunked = h->streaming && h->stream_total == HTTP_STREAM_CHUNKED;
    if (lws_add_http_header_status(wsi, (unsigned)h->status, p, end) ||
        (chunked ? lws_add_http_header_by_name(wsi, (const uint8_t *)"transfer-encoding:",
                                               (const uint8_t *)"chunked", 7, p, end)
                 : lws_add_http_header_content_length(
                       wsi, h->streaming ? h->stream_total : h->out_len, p, end)))
        return -1;
    if (!strstr(h->extra, "content-type:") &&
        lws_add_http_header_by_name(
            wsi, (const uint8_t *)"content-type:", (const uint8_t *)"application/json", 16, p, end))
        return -1;
    for (char *line = h->extra; *line;) { /* "name: value\r\n" each */
        char *colon = strchr(line, ':'), *eol = strstr(line, "\r\n");
        if (!colon || !eol)
            break;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(colon + 1 - line), line);
        const char *v = colon + 2;
        if (lws_add_http_header_by_name(wsi, (const uint8_t *)name, (const uint8_t *)v,
                                        (int)(eol - v), p, end))
            return -1;
        line = eol + 2;
    }
    return lws_finalize_http_header(wsi, p, end) ? -1 : 0;
}

int
http_on_writeable(struct lws *wsi, http_req_t **slot)
{
    http_req_t *h = *slot;
    if (!h || !h->answered || h->lingering)
        return 0;
    if (h->streaming) {
        if (!h->head_sent) {
            uint8_t head[LWS_PRE + HTTP_HEAD_MAX], *start = head + LWS_PRE, *p = start;
            if (write_head(wsi, h, &p, head + sizeof head - 1) < 0 ||
                lws_write(wsi, start, (size_t)(p - start), LWS_WRITE_HTTP_HEADERS) !=
                    (int)(p - start))
                return -1;
            h->head_sent = true;
        }
        return write_streamed(wsi, slot);
    }
    /* The head is built apart, then copied just before the body: one write for both (lws keeps
     * what the socket does not take and sends it before anything else). */
    uint8_t *body = (uint8_t *)h->out + LWS_PRE + HTTP_HEAD_MAX;
    size_t n = h->out_len - h->out_off, hl = 0;
    if (n > HTTP_WRITE_MAX)
        n = HTTP_WRITE_MAX;
    if (!h->head_sent) {
        uint8_t head[HTTP_HEAD_MAX], *p = head;
        if (write_head(wsi, h, &p, head + sizeof head - 1) < 0)
            return -1;
        hl = (size_t)(p - head);
        memcpy(body - hl, head, hl);
        h->head_sent = true;
    }
    bool last = h->out_off + n == h->out_len;
    if (lws_write(wsi, body + h->out_off - hl, hl + n,
                  last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < (int)(hl + n))
        return -1;
    h->out_off += n;
    if (!last) {
        lws_callback_on_writable(wsi);
        return 0;
    }
    return answered(wsi, slot);
}

void
http_on_close(http_req_t **slot)
{
    http_req_t *h = *slot;
    *slot = NULL;
    req_free(h);
}
