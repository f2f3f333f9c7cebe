/* sessions.c — /api/v1/sessions: create (on a live gateway, over HTTP), list (paged over
 * the sp:sessions sorted set, newest first), get, delete, pause/resume (the gateway freezes
 * the sandbox's cgroup; 501 when its provider cannot). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "auth.h"
#include "clock.h"
#include "gateway_client.h"
#include "redis.h"
#include "session_record.h"
#include "json_util.h"

#define LIST_BATCH    100
#define LIST_SCAN_MAX 5000 /* sessions looked at per page at most (filters may skip many) */

int
api_gateway_pick(api_req_t *r, char *out, size_t cap, char (*skip)[128], size_t nskip)
{
    redisReply *m = api_redis_cmdf(r, "SMEMBERS sp:gateways");
    if (!m)
        return -1;
    long long best = -1;
    for (size_t i = 0; m->type == REDIS_REPLY_ARRAY && i < m->elements; i++) {
        const char *gw = m->element[i]->str;
        size_t k = 0;
        while (gw && k < nskip && strcmp(skip[k], gw) != 0)
            k++;
        if (!gw || k < nskip || api_gateway_alive(r, gw) != 1)
            continue;
        redisReply *n = api_redis_cmdf(r, "SCARD sp:gateway:%s:sessions", gw);
        long long count = n && n->type == REDIS_REPLY_INTEGER ? n->integer : 0;
        if (n)
            freeReplyObject(n);
        if (best < 0 || count < best) {
            best = count;
            snprintf(out, cap, "%s", gw);
        }
    }
    freeReplyObject(m);
    return best >= 0 ? 1 : 0;
}

json_object *
api_gateway_create(api_req_t *r, api_gw_call_t *c, api_err_t *e)
{
    char tried[API_CREATE_TRIES][128], gw[128], key[API_CREATE_KEY_LEN + 1];
    double deadline = clock_mono() + c->timeout_s;
    api_create_key(key);
    json_set_str(c->req, "create_key", key);
    for (size_t n = 0; n < API_CREATE_TRIES; n++) {
        int found = api_gateway_pick(r, gw, sizeof gw, tried, n);
        if (found < 0) {
            api_err_redis(e);
            return NULL;
        }
        if (found == 0) {
            if (n == 0)
                api_err_set(e, ERR_NO_GATEWAY, "no gateway is running");
            return NULL; /* else e holds why the last one tried did not accept */
        }
        c->gw = gw;
        json_object *res = api_gw_call(r, c, e);
        c->gw = NULL;
        if (!res && c->unanswered) /* taken, then no answer: follow it to its outcome */
            return api_create_outcome(r, gw, key, json_get_bool(c->req, "early", false), deadline,
                                      e);
        if (res || !c->unsent)
            return res;
        snprintf(tried[n], sizeof tried[n], "%s", gw);
    }
    return NULL;
}

void
api_sessions_create(api_req_t *r, char **params)
{
    (void)params;
    if (!strcmp(r->claims.role, "viewer")) {
        api_failf(r, ERR_FORBIDDEN, "viewers cannot create sessions");
        return;
    }
    json_object *body = r->body_len ? api_body_object(r) : json_object_new_object();
    if (!body)
        return;
    bool ok;
    long long timeout = api_query_int(r, "timeout", g_api.gw_timeout, 1, API_WAIT_MAX_S, &ok);
    if (!ok) {
        json_object_put(body);
        return;
    }
    if (!api_redis_get(r, true)) {
        json_object_put(body);
        return;
    }
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "session.create");
    json_set(req, "params", body);
    api_err_t e;
    api_gw_call_t c = {.req = req, .timeout_s = (int)timeout};
    json_object *res = api_gateway_create(r, &c, &e);
    json_object_put(req);
    if (res) {
        api_metric_incr(r, "sessions_created", 1);
        api_reply_json(r, 201, res);
    } else {
        api_fail(r, &e);
    }
}

/* Loads the sessions ids[0..n) with one pipelined round trip; appends the visible ones that
 * pass the status filter to arr. Returns 0 or -1 (Redis failure). */
static int
load_batch(api_req_t *r, char **ids, size_t n, const char *status, json_object *arr, size_t *added,
           size_t limit, size_t *consumed)
{
    redisContext *c = api_redis_get(r, false);
    if (!c)
        return -1;
    for (size_t i = 0; i < n; i++) {
        redisAppendCommand(c, "HGETALL sp:session:{%s}", ids[i]);
        redisAppendCommand(c, "XREVRANGE sp:session:{%s}:events + - COUNT 1", ids[i]);
    }
    int rc = 0;
    *consumed = 0;
    for (size_t i = 0; i < n; i++) {
        redisReply *h = NULL, *x = NULL;
        if (redisGetReply(c, (void **)&h) != REDIS_OK ||
            redisGetReply(c, (void **)&x) != REDIS_OK) {
            if (h)
                freeReplyObject(h);
            api_redis_drop(r);
            return -1;
        }
        if (rc == 0 && *added < limit) {
            *consumed = i + 1;
            if (h->type == REDIS_REPLY_ARRAY && h->elements > 0) {
                json_object *s = api_session_from_hash(h);
                const char *owner = json_get_str(s, "owner", "");
                bool keep = api_may_see(r, ids[i], owner) &&
                            (!*status || !strcmp(status, json_get_str(s, "status", "")));
                int64_t seq = 0;
                if (x->type == REDIS_REPLY_ARRAY && x->elements == 1 &&
                    x->element[0]->elements >= 1) {
                    const char *dash = strchr(x->element[0]->element[0]->str, '-');
                    seq = dash ? atoll(dash + 1) : 0;
                }
                json_set_int(s, "last_seq", seq);
                if (keep) {
                    json_object_array_add(arr, s);
                    (*added)++;
                } else {
                    json_object_put(s);
                }
            }
        }
        freeReplyObject(h);
        freeReplyObject(x);
    }
    return rc;
}

void
api_sessions_list(api_req_t *r, char **params)
{
    (void)params;
    bool ok;
    long long limit = api_query_int(r, "limit", 50, 1, 500, &ok);
    if (!ok)
        return;
    char cursor[200] = "", status[40] = "";
    if (api_query(r, "cursor", cursor, sizeof cursor) == -2 ||
        api_query(r, "status", status, sizeof status) == -2) {
        api_failf(r, ERR_BAD_REQ, "malformed cursor or status");
        return;
    }
    /* cursor "<score>,<id>": the last session of the previous page (newest first). */
    char max[64] = "+inf", last_id[128] = "";
    if (*cursor) {
        char *comma = strchr(cursor, ',');
        char *end = NULL;
        if (!comma || comma == cursor || strlen(comma + 1) >= sizeof last_id) {
            api_failf(r, ERR_BAD_REQ, "malformed cursor");
            return;
        }
        *comma = '\0';
        strtod(cursor, &end);
        if (*end || strlen(cursor) >= sizeof max) {
            api_failf(r, ERR_BAD_REQ, "malformed cursor");
            return;
        }
        /* lengths checked above; the precision tells the compiler */
        snprintf(max, sizeof max, "%.*s", (int)sizeof max - 1, cursor);
        snprintf(last_id, sizeof last_id, "%.*s", (int)sizeof last_id - 1, comma + 1);
    }
    if (!api_redis_get(r, true))
        return;
    json_object *arr = json_object_new_array();
    size_t added = 0, scanned = 0;
    char next[200] = "";
    bool more = true;
    long long offset = 0;
    while (added < (size_t)limit && scanned < LIST_SCAN_MAX && more) {
        redisReply *z =
            api_redis_cmdf(r, "ZREVRANGEBYSCORE sp:sessions %s -inf WITHSCORES LIMIT %lld %d", max,
                           offset, LIST_BATCH);
        if (!z || z->type != REDIS_REPLY_ARRAY) {
            if (z)
                freeReplyObject(z);
            json_object_put(arr);
            api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
            return;
        }
        size_t pairs = z->elements / 2;
        more = pairs == LIST_BATCH;
        offset += (long long)pairs;
        char *ids[LIST_BATCH], *scores[LIST_BATCH];
        size_t n = 0;
        for (size_t i = 0; i < pairs; i++) {
            char *id = z->element[2 * i]->str, *score = z->element[2 * i + 1]->str;
            /* Same score as the cursor: skip what the previous page already had. */
            if (*last_id && !strcmp(score, max) && strcmp(id, last_id) >= 0)
                continue;
            ids[n] = id;
            scores[n] = score;
            n++;
        }
        size_t consumed = 0;
        if (load_batch(r, ids, n, status, arr, &added, (size_t)limit, &consumed) < 0) {
            freeReplyObject(z);
            json_object_put(arr);
            api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
            return;
        }
        scanned += pairs;
        if (consumed > 0)
            snprintf(next, sizeof next, "%s,%s", scores[consumed - 1], ids[consumed - 1]);
        if (consumed < n)
            more = true;
        freeReplyObject(z);
    }
    json_object *o = json_object_new_object();
    json_set(o, "sessions", arr);
    json_set(o, "next_cursor", more && *next ? json_object_new_string(next) : NULL);
    api_reply_json(r, 200, o);
}

void
api_sessions_get(api_req_t *r, char **params)
{
    api_err_t e;
    json_object *s = api_session_load(r, params[0], &e);
    if (s)
        api_reply_json(r, 200, s);
    else
        api_fail(r, &e);
}

json_object *
api_session_for_write(api_req_t *r, const char *sid, api_err_t *e)
{
    json_object *s = api_session_load(r, sid, e);
    if (s && !api_may_write(r, sid, json_get_str(s, "owner", ""))) {
        json_object_put(s);
        api_err_set(e, ERR_FORBIDDEN, "this token is read-only");
        return NULL;
    }
    return s;
}

void
api_sessions_delete(api_req_t *r, char **params)
{
    api_err_t e;
    json_object *s = api_session_for_write(r, params[0], &e);
    if (!s) {
        api_fail(r, &e);
        return;
    }
    if (!strcmp(json_get_str(s, "status", ""), "STOPPED")) {
        api_reply_json(r, 200, s); /* already gone: DELETE is idempotent */
        return;
    }
    char gw[128];
    snprintf(gw, sizeof gw, "%s", json_get_str(s, "gateway", ""));
    json_object_put(s);
    int alive = api_gateway_alive(r, gw);
    if (alive < 0) {
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        return;
    }
    if (alive == 0) {
        api_failf(r, ERR_GATEWAY_DOWN, "the session's gateway %.100s is not running", gw);
        return;
    }
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "session.delete");
    json_set_str(req, "session", params[0]);
    api_gw_relay(r, gw, req);
    json_object_put(req);
}

/* session.pause / session.resume through the owning gateway: the session (PAUSED / READY),
 * or the gateway's refusal (unsupported → 501, busy → 409). */
static void
pause_op(api_req_t *r, const char *sid, const char *op)
{
    api_err_t e;
    char gw[128];
    if (api_session_gateway_for_write(r, sid, gw, sizeof gw, &e) < 0) {
        api_fail(r, &e);
        return;
    }
    json_object *req = json_object_new_object();
    json_set_str(req, "op", op);
    json_set_str(req, "session", sid);
    api_gw_relay(r, gw, req); /* "unsupported" is a 501 there, like every gateway code */
    json_object_put(req);
}

void
api_sessions_pause(api_req_t *r, char **params)
{
    pause_op(r, params[0], "session.pause");
}

void
api_sessions_resume(api_req_t *r, char **params)
{
    pause_op(r, params[0], "session.resume");
}
