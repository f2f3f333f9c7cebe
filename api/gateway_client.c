/* gateway_client.c — what is left of the Redis inbox on the API's side: XADD a request to a
 * gateway's inbox, parse an answer pushed to a reply list (redis/README.md, "Requests to a
 * gateway"); only xfer.c's streamed transfers still use it. See gateway_client.h. */
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
