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
    if (r)
        r->rc = NULL;
}

redisContext *
api_redis_get(api_req_t *r, bool reply)
{
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
api_gw_call(api_req_t *r, const char *gw, json_object *req, int timeout_s, json_object **result,
            json_object **error)
{
    *result = *error = NULL;
    unsigned char rnd[12];
    char id[32], reply[64], inbox[160];
    if (RAND_bytes(rnd, sizeof rnd) != 1)
        return API_GW_REDIS;
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(id + 2 * i, 3, "%02x", rnd[i]);
    snprintf(reply, sizeof reply, "sp:reply:%s", id);
    snprintf(inbox, sizeof inbox, "sp:gateway:%s:inbox", gw);
    json_set_str(req, "id", id);
    json_set_str(req, "reply", reply);
    json_set_str(req, "owner", r->claims.sub);
    json_set_str(req, "role", r->claims.role);
    json_set_str(req, "viewer_session", r->claims.session);
    size_t len;
    const char *t = json_text(req, &len);
    char tbuf[24];
    snprintf(tbuf, sizeof tbuf, "%d", timeout_s);

    const char *xadd[] = {"XADD", inbox, "MAXLEN", "~", INBOX_MAXLEN, "*", "r", t};
    size_t xlens[] = {4, strlen(inbox), 6, 1, strlen(INBOX_MAXLEN), 1, 1, len};
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
    if (bad)
        return API_GW_REDIS;
    const char *blpop[] = {"BLPOP", reply, tbuf};
    x = api_redis_cmd(r, (timeout_s + 5) * 1000, 3, blpop);
    if (!x)
        return API_GW_REDIS;
    if (x->type != REDIS_REPLY_ARRAY || x->elements != 2) {
        int rc = x->type == REDIS_REPLY_ERROR ? API_GW_REDIS : API_GW_TIMEOUT;
        freeReplyObject(x);
        return rc;
    }
    err_t err = {0};
    json_object *m = json_parse(x->element[1]->str, x->element[1]->len, &err);
    freeReplyObject(x);
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
        {"no_space", 507},    {"session_ended", 409},
    };
    for (size_t i = 0; code && i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(code, map[i].code))
            return map[i].status;
    return 500;
}

void
api_gw_reply_failure(api_req_t *r, int rc, json_object *error)
{
    if (rc == API_GW_TIMEOUT) {
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
api_metric_incr(api_req_t *r, const char *field, long long by)
{
    if (!conn || conn->err)
        return;
    redisReply *x = api_redis_cmdf(r, "HINCRBY sp:metrics %s %lld", field, by);
    if (x)
        freeReplyObject(x);
}
