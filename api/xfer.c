/* xfer.c — the API side of streamed transfers (redis/README.md, "Streamed transfers"): a
 * file.upload or file.download request to the owning gateway's inbox, then tagged items on two
 * lists, sp:xfer:{X}:data and sp:xfer:{X}:ack, on the worker's blocking Redis connection. At
 * most API_XFER_WINDOW chunks are unacknowledged, so a transfer holds one chunk in this process
 * and a few MiB in Redis whatever the file's size. Any failure on this side pushes an A item
 * (the gateway stops and removes what it wrote) and deletes both lists. */
#include "xfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "gateway_client.h"
#include "redis.h"
#include "json_util.h"
#include "xalloc.h"

#define XFER_TTL_S        "120" /* refreshed by every push */
#define XFER_ABORT_WAIT   10    /* s: how long an abort waits for the gateway to confirm */
#define XFER_ABORT_WAIT_S "10"

typedef struct {
    api_req_t *r;
    char id[API_GW_ID_LEN];
    char data[64], ack[64], reply[64];
    char wait_s[16]; /* BLPOP timeout: the longest the other side may keep us waiting */
    int wait_ms;     /* socket read timeout of those BLPOPs */
} api_xfer_t;

/* Names the transfer's keys and sends op (borrowed; "op", "session", "data", "ack" filled in)
 * to gateway gw. 0, or -ERR_UNAVAILABLE with e. */
static int
api_xfer_start(api_xfer_t *x, api_req_t *r, const char *gw, const char *sid, json_object *op,
               const char *name, api_err_t *e)
{
    memset(x, 0, sizeof *x);
    x->r = r;
    if (api_gw_new_id(x->id) < 0)
        return api_err_redis(e);
    snprintf(x->data, sizeof x->data, "sp:xfer:{%s}:data", x->id);
    snprintf(x->ack, sizeof x->ack, "sp:xfer:{%s}:ack", x->id);
    snprintf(x->reply, sizeof x->reply, API_GW_REPLY_FMT, x->id);
    snprintf(x->wait_s, sizeof x->wait_s, "%d", g_api.gw_timeout);
    x->wait_ms = (g_api.gw_timeout + 5) * 1000;
    json_set_str(op, "op", name);
    json_set_str(op, "session", sid);
    json_set_str(op, "data", x->data);
    json_set_str(op, "ack", x->ack);
    return api_gw_send(r, gw, op, x->id, e);
}

/* RPUSH key item; EXPIRE key, pipelined. item[0] is the tag. 0, or -1 when Redis failed. */
static int
api_xfer_push(api_xfer_t *x, const char *key, const char *item, size_t len)
{
    redisContext *c = api_redis_get(x->r, false);
    if (!c)
        return -1;
    const char *push[] = {"RPUSH", key, item};
    size_t push_len[] = {5, strlen(key), len};
    const char *exp[] = {"EXPIRE", key, XFER_TTL_S};
    redisAppendCommandArgv(c, 3, push, push_len);
    redisAppendCommandArgv(c, 3, exp, NULL);
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        redisReply *rep = NULL;
        if (redisGetReply(c, (void **)&rep) != REDIS_OK || !rep) {
            api_redis_drop(x->r);
            return -1;
        }
        if (rep->type == REDIS_REPLY_ERROR)
            rc = -1;
        freeReplyObject(rep);
    }
    return rc;
}

/* BLPOP first second: 1 with *rep (an array [key, item]; caller frees), 0 when the other side
 * kept silent for the whole wait, -1 when Redis failed. */
static int
api_xfer_pop(api_xfer_t *x, const char *first, const char *second, redisReply **rep)
{
    const char *argv[] = {"BLPOP", first, second, x->wait_s};
    redisReply *y = api_redis_cmd(x->r, x->wait_ms, 4, argv);
    *rep = NULL;
    if (!y)
        return -1;
    if (y->type == REDIS_REPLY_ARRAY && y->elements == 2 &&
        y->element[0]->type == REDIS_REPLY_STRING && y->element[1]->type == REDIS_REPLY_STRING) {
        *rep = y;
        return 1;
    }
    int rc = y->type == REDIS_REPLY_NIL || (y->type == REDIS_REPLY_ARRAY && !y->elements) ? 0 : -1;
    freeReplyObject(y);
    return rc;
}

/* Deletes both lists (the reply list expires by itself). */
static void
api_xfer_cleanup(api_xfer_t *x)
{
    const char *argv[] = {"DEL", x->data, x->ack};
    redisReply *y = api_redis_cmd(x->r, 0, 3, argv);
    if (y)
        freeReplyObject(y);
}

/* Tells the gateway to stop (A on key, the list it reads) and cleans up. The gateway answers
 * an abort once it has stopped and deleted both lists: deleting them before it read the A
 * would leave it waiting out its timeout, and a K it pushes meanwhile would recreate a list. */
static void
api_xfer_abort(api_xfer_t *x, const char *key, const char *why)
{
    char item[160];
    int n = snprintf(item, sizeof item, "A%s", why);
    if (api_xfer_push(x, key, item, (size_t)n < sizeof item ? (size_t)n : sizeof item - 1) == 0) {
        const char *argv[] = {"BLPOP", x->reply, XFER_ABORT_WAIT_S};
        redisReply *y = api_redis_cmd(x->r, (XFER_ABORT_WAIT + 5) * 1000, 3, argv);
        if (y)
            freeReplyObject(y);
    }
    api_xfer_cleanup(x);
}

/* Waits for the gateway's answer on the reply list only: its result, or NULL with e. */
static json_object *
api_xfer_wait_reply(api_xfer_t *x, api_err_t *e)
{
    const char *argv[] = {"BLPOP", x->reply, x->wait_s};
    redisReply *y = api_redis_cmd(x->r, x->wait_ms, 3, argv);
    if (!y) {
        api_err_redis(e);
        return NULL;
    }
    json_object *res = NULL;
    if (y->type == REDIS_REPLY_ARRAY && y->elements == 2)
        res = api_gw_parse_reply(y->element[1]->str, y->element[1]->len, e);
    else if (y->type == REDIS_REPLY_ERROR)
        api_err_redis(e);
    else
        api_gw_no_answer(e);
    freeReplyObject(y);
    return res;
}

static int
aborted(api_err_t *e, const char *why)
{
    return api_err_set(e, ERR_ABORTED, "%s", why);
}

/* The gateway pushed A: it gave up and replies with its reason, which is what we return (its
 * result, should it answer with one). */
static json_object *
gateway_aborted(api_xfer_t *x, const redisReply *item, api_err_t *e)
{
    json_object *res = api_xfer_wait_reply(x, e);
    if (!res && !api_gw_refused(e))
        api_err_set(e, ERR_ABORTED, "the gateway stopped the transfer: %.*s",
                    (int)(item->len > 100 ? 100 : item->len - 1), item->str + 1);
    api_xfer_cleanup(x);
    return res;
}

/* Upload: waits until fewer than API_XFER_WINDOW chunks are unacknowledged. 0 to go on, or
 * -code with e when the transfer is over (the gateway answered early, gave up, or went
 * silent). */
static int
upload_wait_window(api_xfer_t *x, int *unacked, api_err_t *e)
{
    while (*unacked >= API_XFER_WINDOW) {
        redisReply *y;
        int k = api_xfer_pop(x, x->ack, x->reply, &y);
        if (k <= 0) {
            api_xfer_abort(x, x->data, k ? "redis failed" : "no acknowledgement in time");
            return k ? api_err_redis(e) : api_gw_no_answer(e);
        }
        const redisReply *key = y->element[0], *item = y->element[1];
        int rc = 0;
        json_object *res = NULL;
        if (!strcmp(key->str, x->reply)) {
            /* An answer before the end: the gateway gave up (too_large, path_escape, ...). */
            res = api_gw_parse_reply(item->str, item->len, e);
            api_xfer_cleanup(x);
            rc = -1;
        } else if (item->len && item->str[0] == 'K') {
            (*unacked)--;
        } else if (item->len && item->str[0] == 'A') {
            res = gateway_aborted(x, item, e);
            rc = -1;
        }
        freeReplyObject(y);
        if (res) { /* cannot be a success before E: do not pretend */
            json_object_put(res);
            return aborted(e, "the gateway ended the upload early");
        }
        if (rc)
            return -e->code;
    }
    return 0;
}

json_object *
api_xfer_upload(api_req_t *r, const char *gw, const char *sid, json_object *op,
                const api_xfer_source_t *src, api_err_t *e)
{
    api_xfer_t x;
    if (api_xfer_start(&x, r, gw, sid, op, "file.upload", e) < 0)
        return NULL;
    char *buf = xmalloc(1 + API_XFER_CHUNK);
    int unacked = 0;
    json_object *res = NULL;
    for (;;) {
        /* Fill a whole chunk (the source may return less than asked) before pushing it. */
        size_t len = 0;
        ssize_t n = 1;
        while (len < API_XFER_CHUNK &&
               (n = src->read(src->ud, buf + 1 + len, API_XFER_CHUNK - len)) > 0)
            len += (size_t)n;
        if (n < 0) {
            api_xfer_abort(&x, x.data, "the client went away");
            aborted(e, "the upload's source failed (the client went away)");
            break;
        }
        if (len) {
            if (upload_wait_window(&x, &unacked, e) < 0)
                break;
            buf[0] = 'D';
            if (api_xfer_push(&x, x.data, buf, 1 + len) < 0) {
                api_xfer_abort(&x, x.data, "redis failed");
                api_err_redis(e);
                break;
            }
            unacked++;
        }
        if (n == 0) {
            if (api_xfer_push(&x, x.data, "E", 1) < 0)
                api_err_redis(e);
            else
                res = api_xfer_wait_reply(&x, e);
            if (res || api_gw_refused(e))
                api_xfer_cleanup(&x);
            else
                api_xfer_abort(&x, x.data, "no answer in time");
            break;
        }
    }
    free(buf);
    return res;
}

json_object *
api_xfer_download(api_req_t *r, const char *gw, const char *sid, json_object *op,
                  const api_xfer_sink_t *dst, api_err_t *e)
{
    api_xfer_t x;
    if (api_xfer_start(&x, r, gw, sid, op, "file.download", e) < 0)
        return NULL;
    bool started = false;
    for (;;) {
        redisReply *y;
        /* data before reply: BLPOP takes the first non-empty list, and every chunk is pushed
         * before the answer. */
        int k = api_xfer_pop(&x, x.data, x.reply, &y);
        if (k <= 0) {
            api_xfer_abort(&x, x.ack, k ? "redis failed" : "no data in time");
            if (k)
                api_err_redis(e);
            else
                api_gw_no_answer(e);
            return NULL;
        }
        const redisReply *key = y->element[0], *item = y->element[1];
        char tag = item->len ? item->str[0] : '\0';
        bool over = false;
        json_object *res = NULL;
        if (!strcmp(key->str, x.reply)) {
            res = api_gw_parse_reply(item->str, item->len, e);
            api_xfer_cleanup(&x);
            over = true;
        } else if (tag == 'H' && !started) {
            err_t perr = {0};
            json_object *h = json_parse(item->str + 1, item->len - 1, &perr);
            started = true;
            if (!h || dst->header(dst->ud, h) < 0) {
                api_xfer_abort(&x, x.ack, h ? "the client went away" : "bad header");
                aborted(e, h ? "the download's sink failed" : "the gateway sent a bad H");
                over = true;
            }
            json_object_put(h);
        } else if (tag == 'D') {
            over = true;
            if (!started) {
                api_xfer_abort(&x, x.ack, "data before the header");
                aborted(e, "the gateway sent data before the header");
            } else if (dst->write(dst->ud, item->str + 1, item->len - 1) < 0) {
                api_xfer_abort(&x, x.ack, "the client went away");
                aborted(e, "the download's sink failed (the client went away)");
            } else if (api_xfer_push(&x, x.ack, "K", 1) < 0) {
                api_xfer_abort(&x, x.ack, "redis failed");
                api_err_redis(e);
            } else {
                over = false;
            }
        } else if (tag == 'A') {
            res = gateway_aborted(&x, item, e);
            over = true;
        }
        freeReplyObject(y);
        if (over)
            return res;
    }
}
