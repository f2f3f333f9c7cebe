/* xfer.c — streamed file transfers between the REST API and a sandbox (redis/README.md,
 * "Streamed transfers"). Each transfer has a Redis connection of its own for the blocking pops
 * (BLPOP would stall every other command on the shared one) and one executor channel
 * (file.upload or file.download). Windows on both sides keep memory bounded: at most
 * XFER_WINDOW chunks wait in Redis, and the executor's credit is granted back only as the API
 * acknowledges what it took. */
#include "xfer.h"

#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gw.h"
#include "json_util.h"
#include "metrics.h"
#include "redis_client.h"
#include "xalloc.h"

#define XFER_CHUNK     (256u * 1024)
#define XFER_WINDOW    8
#define XFER_MAX       32
#define XFER_WAIT_S    "60"
#define XFER_KEY_TTL   "120"
#define XFER_REPLY_TTL "120"

typedef struct xfer {
    bool upload, done;
    int hold;
    char reply[128], data[160], ack[160];
    redisAsyncContext *blk; /* this transfer's connection for BLPOP; NULL once gone */
    int blk_pending;        /* commands on blk not yet answered */
    session_stream_t *st;   /* NULL once the executor closed the channel */
    /* upload: the chunk being handed to the executor */
    char *pend;
    size_t pend_len, pend_off;
    /* download */
    buf_t out;   /* bytes received, not yet pushed */
    int unacked; /* D items the API has not acknowledged */
    size_t owed; /* executor credit held back while the window is full */
} xfer_t;

static int active;

static void pop_next(xfer_t *x);
static void try_send(xfer_t *x);

/* ---- Redis helpers ---- */

static void
push_item(const char *key, char tag, const void *p, size_t n)
{
    char *item = xmalloc(n + 1);
    item[0] = tag;
    if (n)
        memcpy(item + 1, p, n);
    const char *argv[] = {"RPUSH", key, item};
    size_t lens[] = {5, strlen(key), n + 1};
    redis_client_cmdv(NULL, NULL, 3, argv, lens);
    free(item);
    redis_client_cmd(NULL, NULL, "EXPIRE %s %s", key, XFER_KEY_TTL);
}

static void
send_reply(xfer_t *x, json_object *msg)
{
    size_t len;
    const char *t = json_text(msg, &len);
    const char *argv[] = {"RPUSH", x->reply, t};
    size_t lens[] = {5, strlen(x->reply), len};
    redis_client_cmdv(NULL, NULL, 3, argv, lens);
    redis_client_cmd(NULL, NULL, "EXPIRE %s %s", x->reply, XFER_REPLY_TTL);
    json_object_put(msg);
}

/* ---- life cycle ----
 * Every callback into a transfer holds it (hold++ ... release) so nothing below frees it under
 * its own feet; it is freed when it is done and neither Redis nor the executor will call back. */

static void
release(xfer_t *x)
{
    if (--x->hold > 0 || !x->done || x->blk || x->blk_pending || x->st)
        return;
    free(x->pend);
    buf_free(&x->out);
    free(x);
    active--;
}

/* Ends the transfer once: answers the API with result or error (new references, exactly one
 * non-NULL; error is {"error":{...}}), drops the blocking connection and, unless the executor
 * already closed it, the channel. */
static void
finish(xfer_t *x, json_object *result, json_object *error)
{
    if (x->done) {
        json_object_put(result);
        json_object_put(error);
        return;
    }
    x->done = true;
    json_object *m;
    if (result) {
        m = json_object_new_object();
        json_set_bool(m, "ok", true);
        json_set(m, "result", result);
        /* after a download the API still drains data: its TTL removes it */
        redis_client_cmd(NULL, NULL, "DEL %s", x->upload ? x->data : x->ack);
        if (x->upload)
            redis_client_cmd(NULL, NULL, "DEL %s", x->ack);
    } else {
        m = error;
        json_set_bool(m, "ok", false);
        redis_client_cmd(NULL, NULL, "DEL %s %s", x->data, x->ack);
    }
    send_reply(x, m);
    if (x->st)
        session_stream_cancel(x->st); /* its CLOSE comes back through on_exec_close */
    if (x->blk) {
        redisAsyncContext *ac = x->blk;
        x->blk = NULL;
        ac->data = NULL;
        redisAsyncFree(ac); /* a pending pop is answered NULL (now, or after its callback) */
    }
}

static void
fail(xfer_t *x, int code, const char *msg)
{
    finish(x, NULL, json_error_new(code, msg));
}

/* ---- the executor channel ---- */

static void
push_out(xfer_t *x)
{
    while (x->out.len) {
        size_t n = x->out.len < XFER_CHUNK ? x->out.len : XFER_CHUNK;
        push_item(x->data, 'D', x->out.data, n);
        buf_consume(&x->out, n);
        x->unacked++;
        if (x->st && x->unacked <= XFER_WINDOW)
            session_stream_grant(x->st, n);
        else
            x->owed += n;
    }
}

static void
on_exec_json(void *ud, json_object *msg)
{
    xfer_t *x = ud;
    if (x->upload || x->done || strcmp(json_get_str(msg, "event", ""), "size") != 0)
        return;
    size_t len;
    const char *t = json_text(msg, &len);
    push_item(x->data, 'H', t, len);
}

static void
on_exec_data(void *ud, const uint8_t *p, size_t n)
{
    xfer_t *x = ud;
    if (x->upload || x->done)
        return;
    buf_append(&x->out, p, n);
    metrics_transfer(false, n);
    /* Push a full chunk, or whatever is here once the executor has used all its credit (it
     * sends nothing more before we grant). */
    if (x->out.len >= XFER_CHUNK || session_stream_recv_window(x->st) == 0)
        push_out(x);
}

static void
try_send(xfer_t *x)
{
    if (x->done || !x->pend || !x->st)
        return;
    while (x->pend_off < x->pend_len) {
        ssize_t k = session_stream_send(x->st, x->pend + x->pend_off, x->pend_len - x->pend_off);
        if (k < 0) {
            fail(x, ERR_BUSY, "the executor stopped taking the upload");
            return;
        }
        if (k == 0)
            return; /* on_writable continues */
        x->pend_off += (size_t)k;
    }
    metrics_transfer(true, x->pend_len);
    free(x->pend);
    x->pend = NULL;
    push_item(x->ack, 'K', NULL, 0);
    pop_next(x);
}

static void
on_exec_writable(void *ud)
{
    xfer_t *x = ud;
    x->hold++;
    try_send(x);
    release(x);
}

static void
on_exec_close(void *ud, json_object *res)
{
    xfer_t *x = ud;
    x->hold++;
    x->st = NULL;
    json_object *err = json_get(res, "error");
    if (err) {
        json_object *e = json_object_new_object();
        json_set(e, "error", json_object_get(err));
        finish(x, NULL, e);
    } else {
        if (!x->upload && !x->done)
            push_out(x); /* the tail, before the reply: the API reads data first */
        finish(x, json_object_get(res), NULL);
    }
    release(x);
}

static const session_stream_cbs_t stream_cbs = {
    .on_json = on_exec_json,
    .on_data = on_exec_data,
    .on_writable = on_exec_writable,
};

/* ---- the blocking pops ---- */

static void
handle_pop(xfer_t *x, redisReply *r)
{
    if (!r) { /* the connection is going away: we freed it, or Redis did */
        x->blk = NULL;
        fail(x, ERR_BUSY, "lost the Redis connection of the transfer");
        return;
    }
    if (x->done)
        return;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        if (!x->upload && x->unacked == 0) { /* nothing owed by the API: the file is slow */
            pop_next(x);
            return;
        }
        fail(x, ERR_BUSY,
             x->upload ? "the upload stalled: no data from the API for " XFER_WAIT_S " s"
                       : "the download stalled: the API took nothing for " XFER_WAIT_S " s");
        return;
    }
    redisReply *item = r->element[1];
    char tag = item->len ? item->str[0] : '?';
    if (tag == 'A') {
        char m[200];
        int n = item->len - 1 < 150 ? (int)item->len - 1 : 150;
        snprintf(m, sizeof m, "aborted by the API: %.*s", n, item->str + 1);
        fail(x, ERR_BUSY, m);
    } else if (x->upload && tag == 'D') {
        x->pend_len = item->len - 1;
        x->pend_off = 0;
        x->pend = xmalloc(x->pend_len ? x->pend_len : 1);
        memcpy(x->pend, item->str + 1, x->pend_len);
        try_send(x);
    } else if (x->upload && tag == 'E') {
        if (!x->st || session_stream_eof(x->st) < 0)
            fail(x, ERR_BUSY, "the executor stopped taking the upload");
        /* else the executor's CLOSE brings the result */
    } else if (!x->upload && tag == 'K') {
        if (x->unacked > 0)
            x->unacked--;
        if (x->owed && x->unacked < XFER_WINDOW && x->st) {
            session_stream_grant(x->st, x->owed);
            x->owed = 0;
        }
        pop_next(x);
    } else {
        fail(x, ERR_PROTO, "malformed transfer item");
    }
}

static void
on_pop(redisAsyncContext *c, void *reply, void *privdata)
{
    (void)c;
    xfer_t *x = privdata;
    x->hold++;
    x->blk_pending--;
    handle_pop(x, reply);
    release(x);
}

static void
pop_next(xfer_t *x)
{
    if (x->done || !x->blk)
        return;
    x->blk_pending++;
    redisAsyncCommand(x->blk, on_pop, x, "BLPOP %s %s", x->upload ? x->data : x->ack, XFER_WAIT_S);
}

static void
on_blk_connect(const redisAsyncContext *c, int status)
{
    xfer_t *x = c->data;
    if (status != REDIS_OK && x) {
        x->blk = NULL; /* hiredis frees it; the pending pop is answered NULL */
    }
}

static void
on_blk_disconnect(const redisAsyncContext *c, int status)
{
    (void)status;
    xfer_t *x = c->data;
    if (x)
        x->blk = NULL;
}

/* ---- entry ---- */

int
xfer_start(gw_session_t *s, json_object *r, bool upload, err_t *err)
{
    const char *reply = json_get_str(r, "reply", ""), *data = json_get_str(r, "data", ""),
               *ack = json_get_str(r, "ack", "");
    if (strncmp(data, "sp:xfer:", 8) || strncmp(ack, "sp:xfer:", 8) || strlen(data) >= 160 ||
        strlen(ack) >= 160 || strlen(reply) >= 128)
        return err_set(err, ERR_BAD_REQ, "a transfer needs \"data\" and \"ack\" keys sp:xfer:...");
    if (active >= XFER_MAX)
        return err_set(err, ERR_BUSY, "too many transfers at once on this gateway (%d)", XFER_MAX);
    json_object *req = json_object_new_object();
    json_set_str(req, "op", upload ? "file.upload" : "file.download");
    static const char *const fields[] = {"path",      "mode",   "parents",
                                         "max_bytes", "offset", "length"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (json_get(r, fields[i]))
            json_set(req, fields[i], json_object_get(json_get(r, fields[i])));
    xfer_t *x = xcalloc(1, sizeof *x);
    x->upload = upload;
    snprintf(x->reply, sizeof x->reply, "%s", reply);
    snprintf(x->data, sizeof x->data, "%s", data);
    snprintf(x->ack, sizeof x->ack, "%s", ack);
    x->blk = redis_client_async_open(g_gw.cfg.redis);
    if (!x->blk || x->blk->err) {
        if (x->blk)
            redisAsyncFree(x->blk);
        free(x);
        json_object_put(req);
        return err_set(err, ERR_BUSY, "cannot open a Redis connection for the transfer");
    }
    x->st = session_stream_open(s, req, &stream_cbs, on_exec_close, x, upload, err);
    json_object_put(req);
    if (!x->st) {
        redisAsyncFree(x->blk);
        free(x);
        return -1;
    }
    active++;
    x->blk->data = x;
    redisLibuvAttach(x->blk, g_gw.loop);
    redisAsyncSetConnectCallback(x->blk, on_blk_connect);
    redisAsyncSetDisconnectCallback(x->blk, on_blk_disconnect);
    pop_next(x); /* queued until connected */
    return 0;
}
