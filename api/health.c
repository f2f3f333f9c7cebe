/* health.c — GET /api/v1/health (Redis, the live gateways and the warm pool) and GET
 * /api/v1/pool. Everything comes from Redis: the API holds no state of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "buf.h"
#include "json_util.h"
#include "health.h"
#include "redis.h"

json_object *
api_pool_json(api_req_t *r)
{
    json_object *o = json_object_new_object();
    char cursor[32] = "0";
    int rounds = 0;
    do {
        redisReply *x = api_redis_cmdf(r, "SCAN %s MATCH sp:pool:* COUNT 200", cursor);
        if (!x || x->type != REDIS_REPLY_ARRAY || x->elements != 2) {
            if (x)
                freeReplyObject(x);
            json_object_put(o);
            return NULL;
        }
        snprintf(cursor, sizeof cursor, "%s", x->element[0]->str);
        redisReply *keys = x->element[1];
        for (size_t i = 0; i < keys->elements; i++) {
            const char *k = keys->element[i]->str;
            const char *lb = strchr(k, '{'), *rb = lb ? strchr(lb, '}') : NULL;
            if (!lb || !rb || rb[1] != ':')
                continue;
            char profile[64], gw[128];
            snprintf(profile, sizeof profile, "%.*s", (int)(rb - lb - 1), lb + 1);
            snprintf(gw, sizeof gw, "%s", rb + 2);
            redisReply *n = api_redis_cmdf(r, "LLEN %s", k);
            long long len = n && n->type == REDIS_REPLY_INTEGER ? n->integer : 0;
            if (n)
                freeReplyObject(n);
            json_object *p = json_get(o, profile);
            if (!p) {
                p = json_object_new_object();
                json_set_int(p, "ready", 0);
                json_set(p, "gateways", json_object_new_object());
                json_set(o, profile, p);
            }
            json_set_int(p, "ready", json_get_int(p, "ready", 0) + len);
            json_set_int(json_get(p, "gateways"), gw, len);
        }
        freeReplyObject(x);
    } while (strcmp(cursor, "0") != 0 && ++rounds < 100);
    return o;
}

json_object *
api_gateways_json(api_req_t *r, int *live)
{
    *live = 0;
    redisReply *m = api_redis_cmdf(r, "SMEMBERS sp:gateways");
    if (!m || m->type != REDIS_REPLY_ARRAY) {
        if (m)
            freeReplyObject(m);
        return NULL;
    }
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < m->elements; i++) {
        const char *gw = m->element[i]->str;
        redisReply *b = api_redis_cmdf(r, "GET sp:gateway:%s", gw);
        redisReply *n = api_redis_cmdf(r, "SCARD sp:gateway:%s:sessions", gw);
        const char *beat = b && b->type == REDIS_REPLY_STRING ? b->str : NULL;
        bool alive = beat != NULL;
        json_object *g = json_object_new_object();
        json_set_str(g, "id", gw);
        json_set_bool(g, "alive", alive);
        json_set(g, "last_beat", beat ? json_object_new_double(atof(beat)) : NULL);
        json_set_int(g, "sessions", n && n->type == REDIS_REPLY_INTEGER ? n->integer : 0);
        json_object_array_add(arr, g);
        *live += alive;
        if (b)
            freeReplyObject(b);
        if (n)
            freeReplyObject(n);
    }
    freeReplyObject(m);
    return arr;
}

void
api_health(api_req_t *r, char **params)
{
    (void)params;
    if (!api_redis_get(r, true))
        return;
    int live;
    json_object *gws = api_gateways_json(r, &live), *pool = gws ? api_pool_json(r) : NULL;
    if (!gws || !pool) {
        json_object_put(gws);
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        return;
    }
    json_object *o = json_object_new_object();
    json_set_str(o, "status", live > 0 ? "ok" : "degraded");
    json_set_bool(o, "redis", true);
    json_set_str(o, "version", API_VERSION);
    json_set_int(o, "live_gateways", live);
    json_set(o, "gateways", gws);
    json_set(o, "pool", pool);
    api_reply_json(r, 200, o);
}

void
api_pool(api_req_t *r, char **params)
{
    (void)params;
    if (!api_redis_get(r, true))
        return;
    json_object *pool = api_pool_json(r);
    if (!pool)
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
    else
        api_reply_json(r, 200, pool);
}
