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
} xfer_t;

/* Names the transfer's keys and sends op (borrowed; "op", "session", "data", "ack" filled in)
 * to gateway gw. API_GW_OK or API_GW_REDIS. */
static int
xfer_start(xfer_t *x, api_req_t *r, const char *gw, const char *sid, json_object *op,
           const char *name)
{
    memset(x, 0, sizeof *x);
    x->r = r;
    if (api_gw_new_id(x->id) < 0)
        return API_GW_REDIS;
    snprintf(x->data, sizeof x->data, "sp:xfer:{%s}:data", x->id);
    snprintf(x->ack, sizeof x->ack, "sp:xfer:{%s}:ack", x->id);
    snprintf(x->reply, sizeof x->reply, API_GW_REPLY_FMT, x->id);
    snprintf(x->wait_s, sizeof x->wait_s, "%d", g_api.gw_timeout);
    x->wait_ms = (g_api.gw_timeout + 5) * 1000;
    json_set_str(op, "op", name);
    json_set_str(op, "session", sid);
    json_set_str(op, "data", x->data);
    json_set_str(op, "ack", x->ack);
    return api_gw_send(r, gw, op, x->id);
}

/* RPUSH key item; EXPIRE key, pipelined. item[0] is the tag. 0, or -1 when Redis failed. */
static int
xfer_push(xfer_t *x, const char *key, const char *item, size_t len)
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
xfer_pop(xfer_t *x, const char *first, const char *second, redisReply **rep)
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
xfer_cleanup(xfer_t *x)
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
xfer_abort(xfer_t *x, const char *key, const char *why)
{
    char item[160];
    int n = snprintf(item, sizeof item, "A%s", why);
    if (xfer_push(x, key, item, (size_t)n < sizeof item ? (size_t)n : sizeof item - 1) == 0) {
        const char *argv[] = {"BLPOP", x->reply, XFER_ABORT_WAIT_S};
        redisReply *y = api_redis_cmd(x->r, (XFER_ABORT_WAIT + 5) * 1000, 3, argv);
        if (y)
            freeReplyObject(y);
    }
    xfer_cleanup(x);
}

/* Waits for the gateway's answer on the reply list only. */
static int
xfer_wait_reply(xfer_t *x, json_object **res, json_object **err)
{
    const char *argv[] = {"BLPOP", x->reply, x->wait_s};
    redisReply *y = api_redis_cmd(x->r, x->wait_ms, 3, argv);
    if (!y)
        return API_GW_REDIS;
    int rc;
    if (y->type == REDIS_REPLY_ARRAY && y->elements == 2)
        rc = api_gw_parse_reply(y->element[1]->str, y->element[1]->len, res, err);
    else
        rc = y->type == REDIS_REPLY_ERROR ? API_GW_REDIS : API_GW_TIMEOUT;
    freeReplyObject(y);
    return rc;
}

static int
aborted(json_object **err, const char *why)
{
    *err = json_object_new_object();
    json_set_str(*err, "code", "aborted");
    json_set_str(*err, "message", why);
    return API_GW_ERROR;
}

/* The gateway pushed A: it gave up and replies with its reason, which is what we return. */
static int
gateway_aborted(xfer_t *x, const redisReply *item, json_object **res, json_object **err)
{
    int rc = xfer_wait_reply(x, res, err);
    if (rc == API_GW_TIMEOUT || rc == API_GW_REDIS) {
        char why[160];
        snprintf(why, sizeof why, "the gateway stopped the transfer: %.*s",
                 (int)(item->len > 100 ? 100 : item->len - 1), item->str + 1);
        rc = aborted(err, why);
    }
    xfer_cleanup(x);
    return rc;
}

/* Upload: waits until fewer than API_XFER_WINDOW chunks are unacknowledged. 0 to go on, or the
 * transfer's final result (the gateway answered early, gave up, or went silent). */
static int
upload_wait_window(xfer_t *x, int *unacked, json_object **res, json_object **err)
{
    while (*unacked >= API_XFER_WINDOW) {
        redisReply *y;
        int k = xfer_pop(x, x->ack, x->reply, &y);
        if (k <= 0) {
            xfer_abort(x, x->data, k ? "redis failed" : "no acknowledgement in time");
            return k ? API_GW_REDIS : API_GW_TIMEOUT;
        }
        const redisReply *key = y->element[0], *item = y->element[1];
        int rc = 0;
        if (!strcmp(key->str, x->reply)) {
            /* An answer before the end: the gateway gave up (too_large, path_escape, ...). */
            rc = api_gw_parse_reply(item->str, item->len, res, err);
            xfer_cleanup(x);
            if (rc == API_GW_OK) { /* cannot be a success before E: do not pretend */
                json_object_put(*res);
                *res = NULL;
                rc = aborted(err, "the gateway ended the upload early");
            }
        } else if (item->len && item->str[0] == 'K') {
            (*unacked)--;
        } else if (item->len && item->str[0] == 'A') {
            rc = gateway_aborted(x, item, res, err);
        }
        freeReplyObject(y);
        if (rc)
            return rc;
    }
    return 0;
}

int
api_xfer_upload(api_req_t *r, const char *gw, const char *sid, json_object *op, api_xfer_read_fn rd,
                void *ud, json_object **res, json_object **err)
{
    *res = *err = NULL;
    xfer_t x;
    int rc = xfer_start(&x, r, gw, sid, op, "file.upload");
    if (rc != API_GW_OK)
        return rc;
    char *buf = xmalloc(1 + API_XFER_CHUNK);
    int unacked = 0;
    for (;;) {
        /* Fill a whole chunk (the source may return less than asked) before pushing it. */
        size_t len = 0;
        ssize_t n = 1;
        while (len < API_XFER_CHUNK && (n = rd(ud, buf + 1 + len, API_XFER_CHUNK - len)) > 0)
            len += (size_t)n;
        if (n < 0) {
            xfer_abort(&x, x.data, "the client went away");
            rc = aborted(err, "the upload's source failed (the client went away)");
            break;
        }
        if (len) {
            if ((rc = upload_wait_window(&x, &unacked, res, err)) != 0)
                break;
            buf[0] = 'D';
            if (xfer_push(&x, x.data, buf, 1 + len) < 0) {
                xfer_abort(&x, x.data, "redis failed");
                rc = API_GW_REDIS;
                break;
            }
            unacked++;
        }
        if (n == 0) {
            rc = xfer_push(&x, x.data, "E", 1) < 0 ? API_GW_REDIS : xfer_wait_reply(&x, res, err);
            if (rc == API_GW_OK || rc == API_GW_ERROR)
                xfer_cleanup(&x);
            else
                xfer_abort(&x, x.data, "no answer in time");
            break;
        }
    }
    free(buf);
    return rc;
}

int
api_xfer_download(api_req_t *r, const char *gw, const char *sid, json_object *op,
                  api_xfer_header_fn hdr, api_xfer_write_fn wr, void *ud, json_object **res,
                  json_object **err)
{
    *res = *err = NULL;
    xfer_t x;
    int rc = xfer_start(&x, r, gw, sid, op, "file.download");
    if (rc != API_GW_OK)
        return rc;
    bool started = false;
    for (;;) {
        redisReply *y;
        /* data before reply: BLPOP takes the first non-empty list, and every chunk is pushed
         * before the answer. */
        int k = xfer_pop(&x, x.data, x.reply, &y);
        if (k <= 0) {
            xfer_abort(&x, x.ack, k ? "redis failed" : "no data in time");
            return k ? API_GW_REDIS : API_GW_TIMEOUT;
        }
        const redisReply *key = y->element[0], *item = y->element[1];
        char tag = item->len ? item->str[0] : '\0';
        rc = -100; /* go on */
        if (!strcmp(key->str, x.reply)) {
            rc = api_gw_parse_reply(item->str, item->len, res, err);
            xfer_cleanup(&x);
        } else if (tag == 'H' && !started) {
            err_t perr = {0};
            json_object *h = json_parse(item->str + 1, item->len - 1, &perr);
            started = true;
            if (!h || hdr(ud, h) < 0) {
                xfer_abort(&x, x.ack, h ? "the client went away" : "bad header");
                rc = aborted(err, h ? "the download's sink failed" : "the gateway sent a bad H");
            }
            json_object_put(h);
        } else if (tag == 'D') {
            if (!started) {
                xfer_abort(&x, x.ack, "data before the header");
                rc = aborted(err, "the gateway sent data before the header");
            } else if (wr(ud, item->str + 1, item->len - 1) < 0) {
                xfer_abort(&x, x.ack, "the client went away");
                rc = aborted(err, "the download's sink failed (the client went away)");
            } else if (xfer_push(&x, x.ack, "K", 1) < 0) {
                xfer_abort(&x, x.ack, "redis failed");
                rc = API_GW_REDIS;
            }
        } else if (tag == 'A') {
            rc = gateway_aborted(&x, item, res, err);
        }
        freeReplyObject(y);
        if (rc != -100)
            return rc;
    }
}
