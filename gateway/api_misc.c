/* api_misc.c — service routes: GET /api/v1/health, GET /api/v1/pool, GET /metrics (Prometheus
 * text) and POST /api/v1/tokens (admin: mint a token). Everything comes from Redis: the API
 * holds no state of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "api_redis.h"
#include "buf.h"
#include "json_util.h"
#include "metrics.h"

#define METRICS_SESSIONS_MAX 10000

/* {"<profile>": {"ready": N, "gateways": {"<gw>": N}}} from the sp:pool:{P}:GW lists. */
static json_object *
pool_json(api_req_t *r)
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

/* [{"id","alive","last_beat","sessions"}] for every gateway in sp:gateways; *live counts. */
static json_object *
gateways_json(api_req_t *r, int *live)
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
    json_object *gws = gateways_json(r, &live), *pool = gws ? pool_json(r) : NULL;
    if (!gws || !pool) {
        json_object_put(gws);
        api_error(r, 503, "unavailable", "Redis is not reachable");
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
    json_object *pool = pool_json(r);
    if (!pool)
        api_error(r, 503, "unavailable", "Redis is not reachable");
    else
        api_reply_json(r, 200, pool);
}

static long long
metric_field(const redisReply *h, const char *name)
{
    for (size_t i = 0; h && h->type == REDIS_REPLY_ARRAY && i + 1 < h->elements; i += 2)
        if (!strcmp(h->element[i]->str, name))
            return atoll(h->element[i + 1]->str);
    return 0;
}

/* What the gateways count (gateway/metrics.h): the action latency histogram, streamed output
 * and transfer bytes. */
static void
print_gateway_counters(buf_t *b, const redisReply *h)
{
    static const double bounds[METRICS_ACTION_NBUCKETS] = METRICS_ACTION_BUCKETS;
    buf_printf(b, "# HELP sandpipe_action_duration_seconds Actions from submission to their "
                  "observation, every origin (REST, /runtime/, WebSocket).\n"
                  "# TYPE sandpipe_action_duration_seconds histogram\n");
    long long cum = 0;
    for (int i = 0; i <= METRICS_ACTION_NBUCKETS; i++) {
        char f[24];
        snprintf(f, sizeof f, "action_b%d", i);
        cum += metric_field(h, f);
        if (i < METRICS_ACTION_NBUCKETS)
            buf_printf(b, "sandpipe_action_duration_seconds_bucket{le=\"%g\"} %lld\n", bounds[i],
                       cum);
        else
            buf_printf(b, "sandpipe_action_duration_seconds_bucket{le=\"+Inf\"} %lld\n", cum);
    }
    buf_printf(b, "sandpipe_action_duration_seconds_sum %.6f\n",
               (double)metric_field(h, "action_sum_us") / 1e6);
    buf_printf(b, "sandpipe_action_duration_seconds_count %lld\n", cum);
    buf_printf(b,
               "# HELP sandpipe_output_bytes_total Bytes of command and terminal output streamed.\n"
               "# TYPE sandpipe_output_bytes_total counter\nsandpipe_output_bytes_total %lld\n",
               metric_field(h, "output_bytes"));
    buf_printf(b,
               "# HELP sandpipe_transfer_bytes_total Bytes moved by streamed file transfers.\n"
               "# TYPE sandpipe_transfer_bytes_total counter\n"
               "sandpipe_transfer_bytes_total{direction=\"upload\"} %lld\n"
               "sandpipe_transfer_bytes_total{direction=\"download\"} %lld\n",
               metric_field(h, "upload_bytes"), metric_field(h, "download_bytes"));
}

void
api_metrics(api_req_t *r, char **params)
{
    (void)params;
    redisContext *c = api_redis_get(r, true);
    if (!c)
        return;
    static const char *const statuses[] = {
        "STARTING_RUNTIME",           "BUILDING_RUNTIME", "RUNTIME_STARTED", "READY", "ERROR",
        "ERROR_RUNTIME_DISCONNECTED", "STOPPED",          "PAUSED"};
    long long by_status[sizeof statuses / sizeof statuses[0]] = {0}, other = 0, events = 0;
    redisReply *z = api_redis_cmdf(r, "ZREVRANGE sp:sessions 0 %d", METRICS_SESSIONS_MAX - 1);
    redisReply *h = z ? api_redis_cmdf(r, "HGETALL sp:metrics") : NULL;
    int live = 0;
    json_object *gws = h ? gateways_json(r, &live) : NULL;
    json_object *pool = gws ? pool_json(r) : NULL;
    bool failed = !pool;
    for (size_t i = 0; !failed && z->type == REDIS_REPLY_ARRAY && i < z->elements; i++) {
        redisAppendCommand(c, "HGET sp:session:{%s} status", z->element[i]->str);
        redisAppendCommand(c, "XLEN sp:session:{%s}:events", z->element[i]->str);
    }
    for (size_t i = 0; !failed && z->type == REDIS_REPLY_ARRAY && i < z->elements; i++) {
        redisReply *st = NULL, *xl = NULL;
        if (redisGetReply(c, (void **)&st) != REDIS_OK ||
            redisGetReply(c, (void **)&xl) != REDIS_OK) {
            if (st)
                freeReplyObject(st);
            api_redis_drop(r);
            failed = true;
            break;
        }
        size_t k = 0;
        while (k < sizeof statuses / sizeof statuses[0] &&
               !(st->type == REDIS_REPLY_STRING && !strcmp(st->str, statuses[k])))
            k++;
        if (k < sizeof statuses / sizeof statuses[0])
            by_status[k]++;
        else
            other++;
        events += xl->type == REDIS_REPLY_INTEGER ? xl->integer : 0;
        freeReplyObject(st);
        freeReplyObject(xl);
    }
    if (failed) {
        if (z)
            freeReplyObject(z);
        if (h)
            freeReplyObject(h);
        json_object_put(gws);
        json_object_put(pool);
        api_error(r, 503, "unavailable", "Redis is not reachable");
        return;
    }
    buf_t b = BUF_INIT;
    buf_printf(&b, "# HELP sandpipe_sessions Sessions known to Redis, by runtime status.\n"
                   "# TYPE sandpipe_sessions gauge\n");
    for (size_t k = 0; k < sizeof statuses / sizeof statuses[0]; k++)
        buf_printf(&b, "sandpipe_sessions{status=\"%s\"} %lld\n", statuses[k], by_status[k]);
    buf_printf(&b, "sandpipe_sessions{status=\"OTHER\"} %lld\n", other);
    buf_printf(&b,
               "# HELP sandpipe_events_stored Events held in the sessions' Redis streams.\n"
               "# TYPE sandpipe_events_stored gauge\nsandpipe_events_stored %lld\n",
               events);
    buf_printf(&b,
               "# HELP sandpipe_gateways Gateways known, and alive (heartbeat present).\n"
               "# TYPE sandpipe_gateways gauge\n"
               "sandpipe_gateways{state=\"known\"} %zu\nsandpipe_gateways{state=\"alive\"} %d\n",
               json_object_array_length(gws), live);
    buf_printf(&b, "# HELP sandpipe_pool_ready Warm sandboxes ready, by profile.\n"
                   "# TYPE sandpipe_pool_ready gauge\n");
    json_object_object_foreach(pool, prof, pv)
        buf_printf(&b, "sandpipe_pool_ready{profile=\"%s\"} %lld\n", prof,
                   (long long)json_get_int(pv, "ready", 0));
    buf_printf(&b,
               "# HELP sandpipe_api_actions_total Actions submitted through the REST API.\n"
               "# TYPE sandpipe_api_actions_total counter\nsandpipe_api_actions_total %lld\n",
               metric_field(h, "actions"));
    buf_printf(&b,
               "# HELP sandpipe_api_sessions_created_total Sessions created through the REST API.\n"
               "# TYPE sandpipe_api_sessions_created_total counter\n"
               "sandpipe_api_sessions_created_total %lld\n",
               metric_field(h, "sessions_created"));
    buf_printf(&b, "# HELP sandpipe_api_responses_total REST API responses by status class.\n"
                   "# TYPE sandpipe_api_responses_total counter\n");
    for (int k = 2; k <= 5; k++) {
        char f[32]; /* room for any int: the compiler cannot see that k is 2..5 */
        snprintf(f, sizeof f, "http_%dxx", k);
        buf_printf(&b, "sandpipe_api_responses_total{class=\"%dxx\"} %lld\n", k,
                   metric_field(h, f));
    }
    buf_printf(&b,
               "# HELP sandpipe_api_errors_total REST API responses with a 5xx status.\n"
               "# TYPE sandpipe_api_errors_total counter\nsandpipe_api_errors_total %lld\n",
               metric_field(h, "errors"));
    print_gateway_counters(&b, h);
    api_reply_raw(r, 200, "text/plain; version=0.0.4", (const char *)b.data, b.len);
    buf_free(&b);
    freeReplyObject(z);
    freeReplyObject(h);
    json_object_put(gws);
    json_object_put(pool);
}

void
api_tokens_create(api_req_t *r, char **params)
{
    (void)params;
    json_object *body = api_body_object(r);
    if (!body)
        return;
    jwt_claims_t c = {0};
    json_object *sub = json_get(body, "sub"), *role = json_get(body, "role"),
                *sess = json_get(body, "session"), *ttl = json_get(body, "ttl");
    const char *why = NULL;
    if (!sub || !json_object_is_type(sub, json_type_string) || !*json_object_get_string(sub) ||
        json_object_get_string_len(sub) >= (int)sizeof c.sub)
        why = "sub must be a non-empty string under 128 bytes";
    else if (!role || !json_object_is_type(role, json_type_string) ||
             (strcmp(json_object_get_string(role), "admin") &&
              strcmp(json_object_get_string(role), "user") &&
              strcmp(json_object_get_string(role), "viewer")))
        why = "role must be \"admin\", \"user\" or \"viewer\"";
    else if (sess && (!json_object_is_type(sess, json_type_string) ||
                      json_object_get_string_len(sess) >= (int)sizeof c.session))
        why = "session must be a string";
    else if (!strcmp(json_object_get_string(role), "viewer") &&
             (!sess || !*json_object_get_string(sess)))
        why = "a viewer token needs a session";
    else if (ttl && (!json_object_is_type(ttl, json_type_int) || json_object_get_int64(ttl) < 1 ||
                     json_object_get_int64(ttl) > 366LL * 86400))
        why = "ttl must be an integer number of seconds in [1, 31622400]";
    if (why) {
        json_object_put(body);
        api_error(r, 400, "bad_request", "%s", why);
        return;
    }
    snprintf(c.sub, sizeof c.sub, "%s", json_object_get_string(sub));
    snprintf(c.role, sizeof c.role, "%s", json_object_get_string(role));
    if (sess)
        snprintf(c.session, sizeof c.session, "%s", json_object_get_string(sess));
    c.iat = (int64_t)time(NULL);
    c.exp = c.iat + (ttl ? json_object_get_int64(ttl) : 3600);
    json_object_put(body);
    char *tok = jwt_sign(g_api.secret, g_api.secret_len, &c);
    if (!tok) {
        api_error(r, 400, "bad_request", "these claims cannot be signed (control characters?)");
        return;
    }
    json_object *o = json_object_new_object();
    json_set_str(o, "token", tok);
    json_set_str(o, "sub", c.sub);
    json_set_str(o, "role", c.role);
    if (*c.session)
        json_set_str(o, "session", c.session);
    json_set_int(o, "exp", c.exp);
    free(tok);
    api_reply_json(r, 201, o);
}
