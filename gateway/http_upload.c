/* http_upload.c — an upload streamed from the HTTP connection into the executor's file.upload
 * channel (http_upload.h). The gateway holds at most what lws read last: what the executor's
 * credit does not take yet waits in pending while reading from the connection is paused
 * (http_body_flow), and resumes when the executor grants more (on_writable). The executor
 * writes a temp file and renames it over the target only at EOF, which is sent only once the
 * whole body is in: a client that goes away, a body over the limit or any error cancels the
 * channel, and the temp file goes with it. Texts and statuses are sandpipe-api's
 * (common/file_req.c). */
#include "http_upload.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err_http.h"
#include "file_req.h"
#include "gw.h"
#include "http_relay.h"
#include "http_rest.h"
#include "json_util.h"
#include "metrics.h"
#include "route.h"
#include "session.h"
#include "xalloc.h"

/* One upload; outlives its request when the client goes first (the channel's on_close always
 * comes, and frees it). */
typedef struct {
    uint64_t req;         /* the request, while it waits (0 once it is gone) */
    session_stream_t *st; /* the channel, once open and until the executor closed it */
    jwt_claims_t claims;
    json_object *op; /* file.upload's fields */
    char id[128];
    long long max; /* bytes the file may have */
    unsigned long long received;
    buf_t pending; /* body bytes the executor has not taken yet */
    bool body_ended, eof_sent;
} upload_t;

static http_req_t *
request_of(upload_t *u)
{
    return u->req ? http_find(u->req) : NULL;
}

/* The request ended (answered, or its client went away): the upload stops with it; the
 * executor removes its temp file unless EOF went and the rename is done or under way. */
static void
on_request_gone(void *ud)
{
    upload_t *u = ud;
    u->req = 0;
    json_object_put(u->op);
    u->op = NULL;
    buf_free(&u->pending);
    if (u->st)
        session_stream_cancel(u->st); /* on_close follows, and frees u */
    else
        free(u);
}

/* Answers the error and stops the channel (the request's end frees u). */
static void
fail(upload_t *u, http_req_t *h, int code, const char *msg)
{
    if (u->st)
        session_stream_cancel(u->st);
    http_rest_fail(h, code, "%s", msg);
}

/* Hands the executor what its credit takes; reading pauses while anything waits. */
static void
pump(upload_t *u)
{
    http_req_t *h = request_of(u);
    if (!h || h->answered || !u->st)
        return;
    while (u->pending.len) {
        ssize_t k = session_stream_send(u->st, u->pending.data, u->pending.len);
        if (k < 0) {
            fail(u, h, ERR_BUSY, "the executor stopped taking the upload");
            return;
        }
        if (k == 0)
            break; /* on_writable comes with more credit */
        metrics_transfer(true, (size_t)k);
        buf_consume(&u->pending, (size_t)k);
    }
    http_body_flow(h, u->pending.len == 0 && !u->body_ended);
    if (u->body_ended && !u->pending.len && !u->eof_sent) {
        u->eof_sent = true;
        if (session_stream_eof(u->st) < 0)
            fail(u, h, ERR_BUSY, "the executor stopped taking the upload");
        /* else its CLOSE brings the result */
    }
}

static void
on_body(void *ud, const void *p, size_t n)
{
    upload_t *u = ud;
    http_req_t *h = request_of(u);
    if (!h)
        return;
    u->received += n;
    if (u->received > (unsigned long long)u->max) {
        char m[96];
        snprintf(m, sizeof m, "the file is over %lld bytes", u->max);
        fail(u, h, ERR_TOO_BIG, m);
        return;
    }
    buf_append(&u->pending, p, n);
    pump(u);
}

static void
on_body_end(void *ud)
{
    upload_t *u = ud;
    http_req_t *h = request_of(u);
    if (!h)
        return;
    if (h->has_length && u->received < h->content_length) {
        fail(u, h, ERR_BAD_REQ, "the request body was cut short");
        return;
    }
    u->body_ended = true;
    pump(u);
}

static void
on_writable(void *ud)
{
    pump(ud);
}

static void
on_close(void *ud, json_object *res)
{
    upload_t *u = ud;
    u->st = NULL;
    http_req_t *h = request_of(u);
    if (!h) {
        free(u); /* the request went first */
        return;
    }
    json_object *err = json_get(res, "error");
    if (err)
        http_rest_fail_with(h, err, "the upload failed");
    else if (!u->eof_sent)
        http_rest_fail(h, ERR_INTERNAL, "the executor ended the upload before its end");
    else
        http_answer_json(h, 200, json_object_get(res));
    /* u is freed with the request (on_request_gone), which no longer waits for the channel */
}

static const session_stream_cbs_t stream_cbs = {
    .on_json = NULL,
    .on_data = NULL,
    .on_writable = on_writable,
};

static void
on_route(void *ud, const route_t *r)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    upload_t *u = h->ud;
    gw_session_t *s = http_rest_session(h, r, &u->claims, u->id, true);
    if (!s)
        return;
    err_t err = {0};
    u->st = session_stream_open(s, u->op, &stream_cbs, on_close, u, true, &err);
    if (!u->st) {
        http_rest_fail(h, err.code ? err.code : ERR_INTERNAL, "%s", err.msg);
        return;
    }
    http_body_sink(h, on_body, on_body_end); /* what came so far, then reading resumes */
    if (http_find(u->req) == h && !h->answered)
        pump(u);
}

bool
http_upload_streams(const http_req_t *h)
{
    file_req_query_t q = http_rest_query(h);
    return !file_req_bool(&q, "append", false);
}

void
http_files_put(http_req_t *h, const char *id)
{
    if (!h->body_streamed) { /* ?append=true */
        http_files_append(h, id);
        return;
    }
    upload_t *u = xcalloc(1, sizeof *u);
    u->req = h->id;
    snprintf(u->id, sizeof u->id, "%s", id);
    h->ud = u;
    h->free_ud = on_request_gone;
    if (!http_rest_auth(h, &u->claims))
        return;
    err_t err = {0};
    bool append = false;
    file_req_query_t q = http_rest_query(h);
    u->op = file_req_upload(&q, g_gw.cfg.upload_max, &append, &err);
    if (!u->op) {
        http_rest_fail(h, err.code, "%s", err.msg);
        return;
    }
    u->max = json_get_int(u->op, "max_bytes", 0);
    if (h->has_length && h->content_length > (unsigned long long)u->max) {
        http_rest_fail(h, ERR_TOO_BIG, "the file is over %lld bytes", u->max);
        return;
    }
    route_resolve(id, on_route, (void *)(uintptr_t)h->id);
}
