/* http_rt_view.c — GET /runtime/{id}/view?path=<absolute path>: OpenHands' file viewer page
 * (common/file_view.h) for a client of the action server. The file is read over the executor's
 * file.download channel and streamed into the page as base64 as it comes, under the executor's
 * credit (as http_files.c): the gateway holds one piece at a time, whatever the file's size. */
#include "http_rt_view.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "file_view.h"
#include "gw.h"
#include "http_rt.h"
#include "json_util.h"
#include "metrics.h"
#include "xalloc.h"

#define VIEW_CTYPE "text/html; charset=utf-8"
#define VIEW_HEADERS                                                                               \
    "content-security-policy: " FILE_VIEW_CSP "\r\ncache-control: no-store\r\n"                    \
    "x-content-type-options: nosniff\r\n"

/* One view; outlives its request when the client goes first (the channel's on_close always
 * comes, and frees it). */
typedef struct {
    uint64_t req;         /* the request, while it waits (0 once it is gone) */
    session_stream_t *st; /* NULL once the executor closed the channel */
    const char *mime;     /* set once the page's head is out */
    base64_stream_t b64;
    size_t head_len;          /* the page's bytes before the file's */
    unsigned long long sent;  /* the page's bytes that left for the socket */
    unsigned long long given; /* file bytes granted back to the executor */
    char path[RT_PATH_MAX];
} view_t;

static http_req_t *
request_of(view_t *v)
{
    return v->req ? http_find(v->req) : NULL;
}

static void
on_request_gone(void *ud)
{
    view_t *v = ud;
    v->req = 0;
    if (v->st)
        session_stream_cancel(v->st); /* on_close follows, and frees v */
    else
        free(v);
}

static void
answer_page(http_req_t *h, int status, const buf_t *page)
{
    snprintf(h->extra, sizeof h->extra, "%s", VIEW_HEADERS);
    http_answer(h, status, VIEW_CTYPE, page->data ? page->data : "", page->len);
}

/* The executor gets back, in file bytes, what left for the socket in base64 (3 for 4). */
static void
on_sent(void *ud, size_t n)
{
    view_t *v = ud;
    v->sent += n;
    if (!v->st || v->sent <= v->head_len)
        return;
    unsigned long long read = (v->sent - v->head_len) / 4 * 3;
    if (read > v->given) {
        session_stream_grant(v->st, (size_t)(read - v->given));
        v->given = read;
    }
}

static void
on_json(void *ud, json_object *msg)
{
    view_t *v = ud;
    http_req_t *h = request_of(v);
    if (!h || h->answered || strcmp(json_get_str(msg, "event", ""), "size") != 0)
        return;
    long long bytes = json_get_int(msg, "bytes", -1);
    const char *mime = file_view_mime(v->path);
    buf_t page = BUF_INIT;
    if (bytes < 0 || !mime) {
        int status =
            file_view_error(&page, v->path, bytes < 0 ? EIO : 0, "the executor announced no size");
        answer_page(h, status, &page); /* the request ends, and its end cancels the channel */
        buf_free(&page);
        return;
    }
    v->mime = mime;
    file_view_head(&page, v->path, mime);
    v->head_len = page.len;
    http_stream_head(h, 200, VIEW_CTYPE, file_view_page_len(v->path, mime, (size_t)bytes),
                     VIEW_HEADERS);
    http_stream_write(h, page.data, page.len);
    buf_free(&page);
}

static void
on_data(void *ud, const uint8_t *p, size_t n)
{
    view_t *v = ud;
    http_req_t *h = request_of(v);
    metrics_transfer(false, n);
    if (!h || !v->mime)
        return;
    char *out = xmalloc(BASE64_STREAM_MAX(n));
    size_t k = base64_stream_feed(&v->b64, p, n, out);
    http_stream_write(h, out, k);
    free(out);
}

/* The reading's error as the errno file_view_error knows. */
static int
error_code(json_object *err)
{
    const char *code = json_get_str(err, "code", "");
    if (!strcmp(code, "not_found"))
        return ENOENT;
    if (!strcmp(code, "is_directory"))
        return EISDIR;
    return EIO;
}

static void
on_close(void *ud, json_object *res)
{
    view_t *v = ud;
    v->st = NULL;
    http_req_t *h = request_of(v);
    if (!h) {
        free(v); /* the request went first */
        return;
    }
    json_object *err = json_get(res, "error");
    if (v->mime) {
        if (err) { /* the client sees the body end short of its Content-Length */
            GW_LOG("view of %.200s cut short: %s", v->path,
                   json_get_str(err, "message", "the executor failed"));
        } else {
            char last[4];
            size_t k = base64_stream_end(&v->b64, last);
            http_stream_write(h, last, k);
            buf_t t = BUF_INIT;
            file_view_tail(&t, v->mime);
            http_stream_write(h, t.data, t.len);
            buf_free(&t);
        }
        http_stream_end(h);
    } else if (!h->answered) {
        buf_t page = BUF_INIT;
        int status = file_view_error(&page, v->path, err ? error_code(err) : EIO,
                                     json_get_str(err, "message", "the executor sent no size"));
        answer_page(h, status, &page);
        buf_free(&page);
    }
    /* v is freed with the request (on_request_gone), which no longer waits for the channel */
}

static const session_stream_cbs_t stream_cbs = {
    .on_json = on_json,
    .on_data = on_data,
    .on_writable = NULL,
};

static void
on_route(void *ud, const route_t *r)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    view_t *v = h->ud;
    jwt_claims_t c;
    if (!http_rt_live(h, r) || !http_rt_authed(h, r, false, &c))
        return;
    const char *path = http_arg(h, "path");
    if (!path) {
        http_rt_invalid(h, "missing", "query", "path", "Field required");
        return;
    }
    if (strlen(path) >= sizeof v->path) {
        http_rt_invalid(h, "string_type", "query", "path", "Input should be a valid string");
        return;
    }
    snprintf(v->path, sizeof v->path, "%s", path);
    buf_t page = BUF_INIT;
    int status = file_view_check(&page, v->path);
    if (status) {
        answer_page(h, status, &page);
        buf_free(&page);
        return;
    }
    gw_session_t *s = http_rt_here(h, r);
    if (!s)
        return;
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "file.download");
    json_set_name(op, "path", v->path);
    err_t err = {0};
    v->st = session_stream_open(s, op, &stream_cbs, on_close, v, false, &err);
    json_object_put(op);
    if (!v->st)
        http_rt_fail(h, err.code ? err.code : ERR_INTERNAL, err.msg);
}

void
http_rt_view(http_req_t *h, const char *id)
{
    view_t *v = xcalloc(1, sizeof *v);
    v->req = h->id;
    h->ud = v;
    h->free_ud = on_request_gone;
    h->on_sent = on_sent;
    route_resolve(id, on_route, (void *)(uintptr_t)h->id);
}
