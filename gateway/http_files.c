/* http_files.c — file downloads over HTTP on the session's own gateway (http_files.h), streamed
 * from the executor's channel to the HTTP connection with the gateway's credit: the executor
 * gets credit back only for bytes that left for the socket, so a slow client slows the file
 * read and the gateway holds at most the executor's window per download. Texts and statuses
 * are sandpipe-api's (common/file_req.c). */
#include "http_files.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err_http.h"
#include "file_req.h"
#include "gw.h"
#include "http_rest.h"
#include "json_util.h"
#include "metrics.h"
#include "session.h"
#include "xalloc.h"

/* One download; outlives its request when the client goes first (the channel's on_close always
 * comes, and frees it). */
typedef struct {
    uint64_t req;         /* the request, while it waits (0 once it is gone) */
    session_stream_t *st; /* NULL once the executor closed the channel */
    bool head_sent;
    jwt_claims_t claims;
    char path[FILE_REQ_PATH_MAX];
    json_object *op; /* file.download's fields */
} download_t;

static http_req_t *
request_of(download_t *d)
{
    return d->req ? http_find(d->req) : NULL;
}

/* The request ended (answered, or its client went away): the transfer stops with it. */
static void
on_request_gone(void *ud)
{
    download_t *d = ud;
    d->req = 0;
    json_object_put(d->op);
    d->op = NULL;
    if (d->st)
        session_stream_cancel(d->st); /* on_close follows, and frees d */
    else
        free(d);
}

static void
on_sent(void *ud, size_t n)
{
    download_t *d = ud;
    if (d->st)
        session_stream_grant(d->st, n);
}

static void
on_json(void *ud, json_object *msg)
{
    download_t *d = ud;
    http_req_t *h = request_of(d);
    if (!h || d->head_sent || strcmp(json_get_str(msg, "event", ""), "size") != 0)
        return;
    long long bytes = json_get_int(msg, "bytes", -1);
    if (bytes < 0) {
        http_rest_fail(h, ERR_INTERNAL, "the executor announced no size");
        return;
    }
    char disp[1200], extra[1400];
    file_req_disposition(disp, sizeof disp, d->path);
    snprintf(extra, sizeof extra, "content-disposition: %s\r\ncache-control: no-store\r\n", disp);
    d->head_sent = true;
    http_stream_head(h, 200, "application/octet-stream", (unsigned long long)bytes, extra);
}

static void
on_data(void *ud, const uint8_t *p, size_t n)
{
    download_t *d = ud;
    http_req_t *h = request_of(d);
    metrics_transfer(false, n);
    if (h && d->head_sent)
        http_stream_write(h, p, n);
}

static void
on_close(void *ud, json_object *res)
{
    download_t *d = ud;
    d->st = NULL;
    http_req_t *h = request_of(d);
    if (!h) {
        free(d); /* the request went first */
        return;
    }
    json_object *err = json_get(res, "error");
    if (d->head_sent) {
        if (err) /* the client sees the body end short of its Content-Length; say why here */
            GW_LOG("download of %.200s cut short: %s", d->path,
                   json_get_str(err, "message", "the executor failed"));
        http_stream_end(h); /* short of its Content-Length after an error: the socket closes */
    } else if (err) {
        http_rest_fail_with(h, err, "the download failed");
    } else {
        http_rest_fail(h, ERR_INTERNAL, "the executor sent no size");
    }
    /* d is freed with the request (on_request_gone), which no longer waits for the channel */
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
    download_t *d = h->ud;
    gw_session_t *s = http_rest_session(h, r, &d->claims, r ? r->sid : "", false);
    if (!s)
        return;
    err_t err = {0};
    d->st = session_stream_open(s, d->op, &stream_cbs, on_close, d, false, &err);
    if (!d->st)
        http_rest_fail(h, err.code ? err.code : ERR_INTERNAL, "%s", err.msg);
}

void
http_files_download(http_req_t *h, const char *id)
{
    download_t *d = xcalloc(1, sizeof *d);
    d->req = h->id;
    h->ud = d;
    h->free_ud = on_request_gone;
    h->on_sent = on_sent;
    if (!http_rest_auth(h, &d->claims))
        return;
    err_t err = {0};
    file_req_query_t q = http_rest_query(h);
    d->op = file_req_download(&q, &err);
    if (!d->op) {
        http_rest_fail(h, err.code, "%s", err.msg);
        return;
    }
    snprintf(d->path, sizeof d->path, "%s", json_get_str(d->op, "path", ""));
    route_resolve(id, on_route, (void *)(uintptr_t)h->id);
}
