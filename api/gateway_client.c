/* gateway_client.c — requests from an API worker to a gateway: XADD to the gateway's inbox, the
 * answer BLPOPed from a reply list (redis/README.md, "Requests to a gateway"). See
 * gateway_client.h. */
#include "gateway_client.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "auth.h"
#include "json_util.h"
#include "redis.h"

#define INBOX_MAXLEN "10000"

int
api_gateway_alive(api_req_t *r, const char *gw)
{
    redisReply *x = api_redis_cmdf(r, "EXISTS sp:gateway:%s", gw);
    if (!x)
        return -1;
    int alive = x->type == REDIS_REPLY_INTEGER && x->integer > 0;
    freeReplyObject(x);
    return alive;
}

int
api_gw_new_id(char id[API_GW_ID_LEN])
{
    unsigned char rnd[12];
    if (RAND_bytes(rnd, sizeof rnd) != 1)
        return -1;
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(id + 2 * i, 3, "%02x", rnd[i]);
    return 0;
}

/* The XADD of a request to a gateway's inbox: argv points into inbox and the request's text
 * (valid while both live). */
typedef struct {
    char inbox[160];
    const char *argv[8];
    size_t lens[8];
} xadd_t;

/* Who a request is made for (the gateway checks the rights again). */
typedef struct {
    const char *owner, *role, *viewer_session;
} asker_t;

/* Fills req's routing fields (request id, reply key, who asks) and x, the XADD of it to gw's
 * inbox. */
static void
inbox_xadd(xadd_t *x, const char *gw, json_object *req, const char *id, const char *reply,
           const asker_t *who)
{
    snprintf(x->inbox, sizeof x->inbox, "sp:gateway:%s:inbox", gw);
    json_set_str(req, "id", id);
    json_set_str(req, "reply", reply);
    json_set_str(req, "owner", who->owner);
    json_set_str(req, "role", who->role);
    json_set_str(req, "viewer_session", who->viewer_session);
    size_t len;
    const char *t = json_text(req, &len);
    const char *a[] = {"XADD", x->inbox, "MAXLEN", "~", INBOX_MAXLEN, "*", "r", t};
    size_t l[] = {4, strlen(x->inbox), 6, 1, strlen(INBOX_MAXLEN), 1, 1, len};
    memcpy(x->argv, a, sizeof a);
    memcpy(x->lens, l, sizeof l);
}

/* r's token as the asker. */
static asker_t
token_asker(const api_req_t *r)
{
    return (asker_t){r->claims.sub, r->claims.role, r->claims.session};
}

/* Runs a filled XADD: 0, or -ERR_UNAVAILABLE (connection dropped on failure). */
static int
send_xadd(api_req_t *r, xadd_t *xadd, api_err_t *e)
{
    redisContext *c = api_redis_get(r, false);
    if (!c)
        return api_err_redis(e);
    redisReply *x = redisCommandArgv(c, 8, xadd->argv, xadd->lens);
    if (!x) {
        api_redis_drop(r);
        return api_err_redis(e);
    }
    int bad = x->type == REDIS_REPLY_ERROR;
    freeReplyObject(x);
    return bad ? api_err_redis(e) : 0;
}

int
api_gw_send_as(api_req_t *r, const char *gw, json_object *req, const char *reply, const char *owner,
               const char *role)
{
    const char *id = strncmp(reply, "sp:reply:", 9) ? reply : reply + 9;
    asker_t who = {owner, role, ""};
    xadd_t x = {0};
    inbox_xadd(&x, gw, req, id, reply, &who);
    return send_xadd(r, &x, NULL);
}

int
api_gw_send(api_req_t *r, const char *gw, json_object *req, const char *id, api_err_t *e)
{
    char reply[64];
    snprintf(reply, sizeof reply, API_GW_REPLY_FMT, id);
    asker_t who = token_asker(r);
    xadd_t x = {0};
    inbox_xadd(&x, gw, req, id, reply, &who);
    return send_xadd(r, &x, e);
}

json_object *
api_gw_parse_reply(const char *text, size_t len, api_err_t *e)
{
    err_t perr = {0};
    json_object *m = json_parse(text, len, &perr);
    if (!m) {
        api_err_redis(e);
        return NULL;
    }
    json_object *res = NULL;
    if (json_get_bool(m, "ok", false)) {
        res = json_get(m, "result");
        res = res ? json_object_get(res) : json_object_new_object();
    } else {
        api_err_from_gateway(e, json_get(m, "error"));
    }
    json_object_put(m);
    return res;
}

int
api_gw_no_answer(api_err_t *e)
{
    return api_err_set(e, ERR_TIMEOUT, "the gateway did not answer in time");
}

/* Reads one BLPOP answer of a pipelined call: the result, or NULL with e (the gateway's error;
 * ERR_TIMEOUT for nil; ERR_UNAVAILABLE when the connection was lost: then dropped). */
static json_object *
read_answer(api_req_t *r, redisContext *c, api_err_t *e)
{
    redisReply *x = NULL;
    if (redisGetReply(c, (void **)&x) != REDIS_OK || !x) {
        api_redis_drop(r);
        api_err_redis(e);
        return NULL;
    }
    json_object *res = NULL;
    if (x->type == REDIS_REPLY_ARRAY && x->elements == 2)
        res = api_gw_parse_reply(x->element[1]->str, x->element[1]->len, e);
    else if (x->type == REDIS_REPLY_ERROR)
        api_err_redis(e);
    else
        api_gw_no_answer(e);
    freeReplyObject(x);
    return res;
}

/* The heartbeat answer of a pipelined call: 0, or -code with e (connection dropped). */
static int
read_alive(api_req_t *r, redisContext *c, api_err_t *e)
{
    redisReply *x = NULL;
    if (redisGetReply(c, (void **)&x) != REDIS_OK || !x || x->type != REDIS_REPLY_INTEGER) {
        if (x)
            freeReplyObject(x);
        api_redis_drop(r);
        return api_err_redis(e);
    }
    bool alive = x->integer > 0;
    freeReplyObject(x);
    if (alive)
        return 0;
    api_redis_drop(r); /* abandons the queued BLPOPs */
    return api_err_set(e, ERR_GATEWAY_DOWN, "the session's gateway is not running");
}

json_object *
api_gw_call(api_req_t *r, api_gw_call_t *c, api_err_t *e)
{
    c->second = NULL;
    char id[API_GW_ID_LEN], reply[64], t1[24], t2[24];
    if (api_gw_new_id(id) < 0) {
        api_err_redis(e);
        return NULL;
    }
    snprintf(reply, sizeof reply, API_GW_REPLY_FMT, id);
    asker_t who = token_asker(r);
    xadd_t xadd = {0};
    inbox_xadd(&xadd, c->gw, c->req, id, reply, &who);
    snprintf(t1, sizeof t1, "%d", c->timeout_s);
    snprintf(t2, sizeof t2, "%d", c->second_s);
    const char *blpop1[] = {"BLPOP", reply, t1}, *blpop2[] = {"BLPOP", reply, t2};
    redisContext *rc = api_redis_get(r, false);
    if (!rc) {
        api_err_redis(e);
        return NULL;
    }
    /* The heartbeat check, XADD and the BLPOPs in one write: one round trip whatever the number
     * of answers. (A request queued to a dead gateway's inbox is harmless: a gateway reads only
     * what arrives after it started.) */
    if (c->check_alive)
        redisAppendCommand(rc, "EXISTS sp:gateway:%s", c->gw);
    redisAppendCommandArgv(rc, 8, xadd.argv, xadd.lens);
    redisAppendCommandArgv(rc, 3, blpop1, NULL);
    if (c->second_s > 0)
        redisAppendCommandArgv(rc, 3, blpop2, NULL);
    int longest = c->timeout_s > c->second_s ? c->timeout_s : c->second_s;
    api_redis_set_timeout(rc, (longest + 5) * 1000);
    if (c->check_alive && read_alive(r, rc, e) < 0)
        return NULL;
    redisReply *x = NULL;
    if (redisGetReply(rc, (void **)&x) != REDIS_OK || !x || x->type == REDIS_REPLY_ERROR) {
        /* not queued: drop the connection rather than wait out the BLPOPs */
        if (x)
            freeReplyObject(x);
        api_redis_drop(r);
        api_err_redis(e);
        return NULL;
    }
    freeReplyObject(x);
    api_err_t first = {0};
    json_object *res = read_answer(r, rc, &first);
    if (c->second_s > 0) {
        if (!res) {
            /* an error is the only answer: drop the second BLPOP rather than sit it out (or
             * leave its reply to the next command) */
            api_redis_drop(r);
        } else {
            api_err_t second = {0};
            c->second = read_answer(r, rc, &second);
            /* no second answer in time is no error: the first one holds */
            if (!c->second && second.code != ERR_TIMEOUT) {
                json_object_put(res);
                res = NULL;
                first = second;
            }
        }
    }
    if (r->rc)
        api_redis_set_timeout(rc, API_REDIS_TIMEOUT_MS);
    if (!res && e)
        *e = first;
    return res;
}

json_object *
api_gw_ask(api_req_t *r, const char *gw, json_object *req, int timeout_s, api_err_t *e)
{
    api_gw_call_t c = {.gw = gw, .req = req, .timeout_s = timeout_s};
    return api_gw_call(r, &c, e);
}

bool
api_gw_refused(const api_err_t *e)
{
    return e->code != ERR_TIMEOUT && e->code != ERR_UNAVAILABLE && e->code != ERR_GATEWAY_DOWN;
}

void
api_gw_relay(api_req_t *r, const char *gw, json_object *req)
{
    api_err_t e;
    json_object *res = api_gw_ask(r, gw, req, g_api.gw_timeout, &e);
    if (res)
        api_reply_json(r, 200, res);
    else
        api_fail(r, &e);
}
