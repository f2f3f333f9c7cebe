/* gateway_client.c — requests from an API worker to a gateway: XADD to the gateway's inbox, the
 * answer BLPOPed from a reply list (redis/README.md, "Requests to a gateway"). See
 * gateway_client.h. */
#include "gateway_client.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

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

/* Fills req's routing fields (request id, reply key, who asks) and the XADD of it to gw's inbox
 * into argv/lens (pointing into inbox and req's text, valid while both live). */
static void
inbox_xadd_as(const char *gw, json_object *req, const char *id, const char *reply,
              const char *owner, const char *role, const char *viewer_session, char *inbox,
              size_t cap, const char *argv[8], size_t lens[8])
{
    snprintf(inbox, cap, "sp:gateway:%s:inbox", gw);
    json_set_str(req, "id", id);
    json_set_str(req, "reply", reply);
    json_set_str(req, "owner", owner);
    json_set_str(req, "role", role);
    json_set_str(req, "viewer_session", viewer_session);
    size_t len;
    const char *t = json_text(req, &len);
    const char *a[] = {"XADD", inbox, "MAXLEN", "~", INBOX_MAXLEN, "*", "r", t};
    size_t l[] = {4, strlen(inbox), 6, 1, strlen(INBOX_MAXLEN), 1, 1, len};
    memcpy(argv, a, sizeof a);
    memcpy(lens, l, sizeof l);
}

/* Runs a filled XADD: API_GW_OK, or API_GW_REDIS (connection dropped on failure). */
static int
send_xadd(api_req_t *r, const char **xadd, const size_t *xlens)
{
    redisContext *c = api_redis_get(r, false);
    if (!c)
        return API_GW_REDIS;
    redisReply *x = redisCommandArgv(c, 8, xadd, xlens);
    if (!x) {
        api_redis_drop(r);
        return API_GW_REDIS;
    }
    int bad = x->type == REDIS_REPLY_ERROR;
    freeReplyObject(x);
    return bad ? API_GW_REDIS : API_GW_OK;
}

/* The routing fields and XADD of req as r's token asks (reply key from id). */
static void
inbox_xadd(api_req_t *r, const char *gw, json_object *req, const char *id, char *inbox, size_t cap,
           const char *argv[8], size_t lens[8])
{
    char reply[64];
    snprintf(reply, sizeof reply, API_GW_REPLY_FMT, id);
    inbox_xadd_as(gw, req, id, reply, r->claims.sub, r->claims.role, r->claims.session, inbox, cap,
                  argv, lens);
}

int
api_gw_send_as(api_req_t *r, const char *gw, json_object *req, const char *id, const char *reply,
               const char *owner, const char *role)
{
    char inbox[160];
    const char *xadd[8];
    size_t xlens[8];
    inbox_xadd_as(gw, req, id, reply, owner, role, "", inbox, sizeof inbox, xadd, xlens);
    return send_xadd(r, xadd, xlens);
}

int
api_gw_send(api_req_t *r, const char *gw, json_object *req, const char *id)
{
    char inbox[160];
    const char *xadd[8];
    size_t xlens[8];
    inbox_xadd(r, gw, req, id, inbox, sizeof inbox, xadd, xlens);
    return send_xadd(r, xadd, xlens);
}

int
api_gw_parse_reply(const char *text, size_t len, json_object **result, json_object **error)
{
    err_t err = {0};
    json_object *m = json_parse(text, len, &err);
    if (!m)
        return API_GW_REDIS;
    int rc;
    if (json_get_bool(m, "ok", false)) {
        json_object *res = json_get(m, "result");
        *result = res ? json_object_get(res) : json_object_new_object();
        rc = API_GW_OK;
    } else {
        json_object *e = json_get(m, "error");
        *error = e ? json_object_get(e) : json_error_new(ERR_BASE, "the gateway failed");
        rc = API_GW_ERROR;
    }
    json_object_put(m);
    return rc;
}

/* Reads one BLPOP answer of a pipelined call: API_GW_OK/ERROR with *result or *error,
 * API_GW_TIMEOUT (nil), API_GW_REDIS (connection lost: dropped). */
static int
read_answer(api_req_t *r, redisContext *c, json_object **result, json_object **error)
{
    redisReply *x = NULL;
    if (redisGetReply(c, (void **)&x) != REDIS_OK || !x) {
        api_redis_drop(r);
        return API_GW_REDIS;
    }
    int rc;
    if (x->type != REDIS_REPLY_ARRAY || x->elements != 2)
        rc = x->type == REDIS_REPLY_ERROR ? API_GW_REDIS : API_GW_TIMEOUT;
    else
        rc = api_gw_parse_reply(x->element[1]->str, x->element[1]->len, result, error);
    freeReplyObject(x);
    return rc;
}

int
api_gw_call2(api_req_t *r, const char *gw, bool check_alive, json_object *req, int timeout_s,
             int second_s, json_object **result, json_object **second, json_object **error)
{
    *result = *error = NULL;
    if (second)
        *second = NULL;
    char id[API_GW_ID_LEN], reply[64], t1[24], t2[24], inbox[160];
    if (api_gw_new_id(id) < 0)
        return API_GW_REDIS;
    const char *xadd[8];
    size_t xlens[8];
    inbox_xadd(r, gw, req, id, inbox, sizeof inbox, xadd, xlens);
    snprintf(reply, sizeof reply, API_GW_REPLY_FMT, id);
    snprintf(t1, sizeof t1, "%d", timeout_s);
    snprintf(t2, sizeof t2, "%d", second_s);
    const char *blpop1[] = {"BLPOP", reply, t1}, *blpop2[] = {"BLPOP", reply, t2};
    redisContext *c = api_redis_get(r, false);
    if (!c)
        return API_GW_REDIS;
    /* The heartbeat check, XADD and the BLPOPs in one write: one round trip whatever the number
     * of answers. (A request queued to a dead gateway's inbox is harmless: a gateway reads only
     * what arrives after it started.) */
    if (check_alive)
        redisAppendCommand(c, "EXISTS sp:gateway:%s", gw);
    redisAppendCommandArgv(c, 8, xadd, xlens);
    redisAppendCommandArgv(c, 3, blpop1, NULL);
    if (second)
        redisAppendCommandArgv(c, 3, blpop2, NULL);
    api_redis_set_timeout(c, ((timeout_s > second_s ? timeout_s : second_s) + 5) * 1000);
    redisReply *x = NULL;
    if (check_alive) {
        if (redisGetReply(c, (void **)&x) != REDIS_OK || !x || x->type != REDIS_REPLY_INTEGER) {
            if (x)
                freeReplyObject(x);
            api_redis_drop(r);
            return API_GW_REDIS;
        }
        bool alive = x->integer > 0;
        freeReplyObject(x);
        x = NULL;
        if (!alive) {
            api_redis_drop(r); /* abandons the queued BLPOPs */
            return API_GW_DEAD;
        }
    }
    if (redisGetReply(c, (void **)&x) != REDIS_OK || !x || x->type == REDIS_REPLY_ERROR) {
        /* not queued: drop the connection rather than wait out the BLPOPs */
        if (x)
            freeReplyObject(x);
        api_redis_drop(r);
        return API_GW_REDIS;
    }
    freeReplyObject(x);
    int rc = read_answer(r, c, result, error);
    if (second && rc != API_GW_REDIS) {
        json_object *e2 = NULL;
        /* a first answer that is an error is the only one: the second BLPOP just times out */
        int rc2 = rc == API_GW_OK ? read_answer(r, c, second, &e2) : API_GW_REDIS;
        if (rc != API_GW_OK) {
            api_redis_drop(r); /* do not sit out the second BLPOP */
        } else if (rc2 == API_GW_ERROR) {
            json_object_put(*result);
            *result = NULL;
            *error = e2;
            rc = API_GW_ERROR;
        } else if (rc2 == API_GW_REDIS) {
            json_object_put(*result);
            *result = NULL;
            rc = API_GW_REDIS;
        }
    }
    if (r->rc)
        api_redis_set_timeout(c, API_REDIS_TIMEOUT_MS);
    return rc;
}

int
api_gw_call(api_req_t *r, const char *gw, json_object *req, int timeout_s, json_object **result,
            json_object **error)
{
    return api_gw_call2(r, gw, false, req, timeout_s, 0, result, NULL, error);
}

int
api_gw_status(const char *code)
{
    static const struct {
        const char *code;
        int status;
    } map[] = {
        {"not_found", 404},   {"bad_request", 400},       {"protocol_error", 400},
        {"invalid", 400},     {"is_directory", 400},      {"not_directory", 400},
        {"path_escape", 403}, {"permission_denied", 403}, {"unauthorized", 403},
        {"forbidden", 403},   {"token_expired", 401},     {"busy", 409},
        {"exists", 409},      {"not_empty", 409},         {"too_large", 413},
        {"no_space", 507},    {"session_ended", 409},     {"unsupported", 501},
    };
    for (size_t i = 0; code && i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(code, map[i].code))
            return map[i].status;
    return 500;
}

void
api_gw_reply_failure(api_req_t *r, int rc, json_object *error)
{
    if (rc == API_GW_DEAD) {
        api_error(r, 503, "unavailable", "the session's gateway is not running");
    } else if (rc == API_GW_TIMEOUT) {
        api_error(r, 504, "timeout", "the gateway did not answer in time");
    } else if (rc == API_GW_REDIS) {
        api_error(r, 503, "unavailable", "Redis is not reachable");
    } else {
        const char *code = json_get_str(error, "code", "internal");
        api_error(r, api_gw_status(code), code, "%s",
                  json_get_str(error, "message", "the gateway failed"));
    }
}

void
api_gw_relay(api_req_t *r, const char *gw, json_object *req)
{
    json_object *res, *err;
    int rc = api_gw_call(r, gw, req, g_api.gw_timeout, &res, &err);
    if (rc == API_GW_OK) {
        api_reply_json(r, 200, res);
    } else {
        api_gw_reply_failure(r, rc, err);
        json_object_put(err);
    }
}
