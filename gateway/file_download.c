/* file_download.c — a sandbox file streamed into an HTTP answer (file_download.h). */
#include "file_download.h"

#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "metrics.h"
#include "session.h"

static http_req_t *
request_of(file_download_t *d)
{
    return d->req ? http_find(d->req) : NULL;
}

/* The request ended (answered, or its client went away): the transfer stops with it. */
static void
on_request_gone(void *ud)
{
    file_download_t *d = ud;
    d->req = 0;
    if (d->st)
        session_stream_cancel(d->st); /* on_close follows, and frees d */
    else
        d->free(d);
}

static void
on_sent(void *ud, size_t n)
{
    file_download_t *d = ud;
    if (d->st)
        session_stream_grant(d->st, n);
}

static void
on_json(void *ud, json_object *msg)
{
    file_download_t *d = ud;
    http_req_t *h = request_of(d);
    if (!h || d->head_sent || strcmp(json_get_str(msg, "event", ""), "size") != 0)
        return;
    long long bytes = json_get_int(msg, "bytes", -1);
    if (bytes < 0) {
        d->fail(d, h, NULL);
        return;
    }
    d->head_sent = true;
    /* a Content-Length always, 0 for an empty file */
    http_stream_head(h, 200, "application/octet-stream", (unsigned long long)bytes, d->extra);
}

static void
on_data(void *ud, const uint8_t *p, size_t n)
{
    file_download_t *d = ud;
    http_req_t *h = request_of(d);
    metrics_transfer(false, n);
    if (h && d->head_sent)
        http_stream_write(h, p, n);
}

static void
on_close(void *ud, json_object *res)
{
    file_download_t *d = ud;
    d->st = NULL;
    http_req_t *h = request_of(d);
    if (!h) {
        d->free(d); /* the request went first */
        return;
    }
    json_object *err = json_get(res, "error");
    if (d->head_sent) {
        if (err) /* the client sees the body end short of its Content-Length; say why here */
            GW_LOG("download of %.200s cut short: %s", d->path,
                   json_get_str(err, "message", "the executor failed"));
        http_stream_end(h); /* short of its Content-Length after an error: the socket closes */
    } else {
        d->fail(d, h, err ? res : NULL);
    }
    /* d is freed with the request (on_request_gone), which no longer waits for the channel */
}

static const session_stream_cbs_t stream_cbs = {.on_json = on_json, .on_data = on_data};

void
file_download_attach(file_download_t *d, http_req_t *h)
{
    d->req = h->id;
    h->ud = d;
    h->free_ud = on_request_gone;
    h->on_sent = on_sent;
}

int
file_download_open(file_download_t *d, gw_session_t *s, json_object *op, err_t *err)
{
    d->st = session_stream_open(s, op, &stream_cbs, on_close, d, false, err);
    return d->st ? 0 : -1;
}
