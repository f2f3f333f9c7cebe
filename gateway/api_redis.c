/* api_redis.c — the API worker's Redis connection, session records and gateway inbox calls.
 * See api_redis.h and redis/README.md. */
#include "api_redis.h"

#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "api.h"
#include "api_auth.h"
#include "json_util.h"

#define REDIS_TIMEOUT_MS 5000
#define INBOX_MAXLEN     "10000"

static redisContext *conn; /* one per worker process */
static int posted;         /* commands sent without waiting: replies not read yet */

static void
set_timeout(redisContext *c, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    redisSetTimeout(c, tv);
}

void
api_redis_drop(api_req_t *r)
{
    if (conn)
        redisFree(conn);
    conn = NULL;
    posted = 0;
    if (r)
        r->rc = NULL;
}

/* Reads (and discards) the replies of posted commands, so the next reply read is the next
 * command's. -1 when the connection failed (then dropped). */
static int
drain(api_req_t *r)
{
    while (posted > 0) {
        void *rep = NULL;
        if (redisGetReply(conn, &rep) != REDIS_OK) {
            api_redis_drop(r);
            return -1;
        }
        freeReplyObject(rep);
        posted--;
    }
    return 0;
}

redisContext *
api_redis_get(api_req_t *r, bool reply)
{
    if (conn && posted)
        drain(r);
    if (conn && conn->err)
        api_redis_drop(r);
    if (!conn) {
        struct timeval tv = {1, 0};
        const char *a = g_api.redis;
        if (!strncmp(a, "unix:", 5)) {
            conn = redisConnectUnixWithTimeout(a + 5, tv);
        } else {
            char host[256];
            snprintf(host, sizeof host, "%s", a);
            char *colon = strrchr(host, ':');
            int port = 6379;
            if (colon) {
                *colon = '\0';
                port = atoi(colon + 1);
            }
            conn = redisConnectWithTimeout(host, port, tv);
        }
        if (!conn || conn->err) {
            api_redis_drop(r);
            if (reply)
                api_error(r, 503, "unavailable", "Redis is not reachable");
            return NULL;
        }
        set_timeout(conn, REDIS_TIMEOUT_MS);
    }
    r->rc = conn;
    return conn;
}

redisReply *
api_redis_cmd(api_req_t *r, int timeout_ms, int argc, const char **argv)
{
    redisContext *c = api_redis_get(r, false);
    if (!c)
        return NULL;
    if (timeout_ms > 0)
        set_timeout(c, timeout_ms);
    redisReply *rep = redisCommandArgv(c, argc, argv, NULL);
    if (!rep) {
        api_redis_drop(r);
        return NULL;
    }
    if (timeout_ms > 0)
        set_timeout(c, REDIS_TIMEOUT_MS);
    return rep;
}

redisReply *
api_redis_cmdf(api_req_t *r, const char *fmt, ...)
{
    redisContext *c = api_redis_get(r, false);
    if (!c)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    redisReply *rep = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!rep)
        api_redis_drop(r);
    return rep;
}

static const redisReply *
hash_field(const redisReply *h, const char *name)
{
    if (!h || h->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (size_t i = 0; i + 1 < h->elements; i += 2)
        if (h->element[i]->type == REDIS_REPLY_STRING && !strcmp(h->element[i]->str, name))
            return h->element[i + 1];
    return NULL;
}

json_object *
api_session_from_hash(const redisReply *h)
{
    static const char *const strs[] = {"id", "owner", "status", "profile", "gateway"};
    json_object *o = json_object_new_object();
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        const redisReply *v = hash_field(h, strs[i]);
        json_set_str(o, strs[i], v && v->str ? v->str : "");
    }
    const redisReply *sb = hash_field(h, "sandbox");
    const char *provider = "";
    json_object *sbj = NULL;
    if (sb && sb->str) {
        err_t err = {0};
        sbj = json_parse(sb->str, sb->len, &err);
        provider = json_get_str(sbj, "provider", "");
    }
    json_set_str(o, "provider", provider);
    if (json_get_str(sbj, "warning", "")[0]) /* degraded isolation, as the gateway reports it */
        json_set_str(o, "warning", json_get_str(sbj, "warning", ""));
    json_object_put(sbj);
    const redisReply *v = hash_field(h, "created");
    json_set(o, "created", json_object_new_double(v && v->str ? atof(v->str) : 0.0));
    v = hash_field(h, "idle_timeout");
    json_set_int(o, "idle_timeout", v && v->str ? atoll(v->str) : 0);
    v = hash_field(h, "max_lifetime");
    json_set_int(o, "max_lifetime", v && v->str ? atoll(v->str) : 0);
    v = hash_field(h, "ended");
    if (v && v->str)
        json_set(o, "ended", json_object_new_double(atof(v->str)));
    return o;
}

static int64_t
last_seq(api_req_t *r, const char *sid)
{
    redisReply *x = api_redis_cmdf(r, "XREVRANGE sp:session:{%s}:events + - COUNT 1", sid);
    int64_t seq = 0;
    if (x && x->type == REDIS_REPLY_ARRAY && x->elements == 1 &&
        x->element[0]->type == REDIS_REPLY_ARRAY && x->element[0]->elements >= 1) {
        const char *id = x->element[0]->element[0]->str;
        const char *dash = id ? strchr(id, '-') : NULL;
        seq = dash ? atoll(dash + 1) : 0;
    }
    if (x)
        freeReplyObject(x);
    return seq;
}

json_object *
api_session_load(api_req_t *r, const char *sid, bool *found)
{
    *found = false;
    if (!*sid || strlen(sid) > 100 || strpbrk(sid, "{}\r\n "))
        return NULL;
    if (!api_redis_get(r, true)) {
        *found = true;
        return NULL;
    }
    redisReply *h = api_redis_cmdf(r, "HGETALL sp:session:{%s}", sid);
    if (!h) {
        *found = true;
        api_error(r, 503, "unavailable", "Redis is not reachable");
        return NULL;
    }
    if (h->type != REDIS_REPLY_ARRAY || h->elements == 0) {
        freeReplyObject(h);
        return NULL;
    }
    const redisReply *owner = hash_field(h, "owner");
    if (!api_may_see(r, sid, owner && owner->str ? owner->str : "")) {
        freeReplyObject(h);
        return NULL;
    }
    json_object *s = api_session_from_hash(h);
    freeReplyObject(h);
    json_set_int(s, "last_seq", last_seq(r, sid));
    *found = true;
    return s;
}

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
    set_timeout(c, ((timeout_s > second_s ? timeout_s : second_s) + 5) * 1000);
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
        set_timeout(c, REDIS_TIMEOUT_MS);
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
api_redis_post(api_req_t *r, const char *fmt, ...)
{
    (void)r;
    if (!conn || conn->err)
        return; /* best effort: never connects for a counter */
    va_list ap;
    va_start(ap, fmt);
    if (redisvAppendCommand(conn, fmt, ap) == REDIS_OK)
        posted++;
    va_end(ap);
}

void
api_redis_end_request(api_req_t *r)
{
    if (!conn || !posted)
        return;
    int done = 0;
    while (!done)
        if (redisBufferWrite(conn, &done) != REDIS_OK) {
            api_redis_drop(r);
            return;
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

void
api_metric_incr(api_req_t *r, const char *field, long long by)
{
    api_redis_post(r, "HINCRBY sp:metrics %s %lld", field, by);
}
