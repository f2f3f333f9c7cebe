/* metrics.c — GET /metrics: Prometheus text from the counters the gateways and API workers
 * keep in Redis (gateway/metrics.h names them) and the sessions' own usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "buf.h"
#include "json_util.h"
#include "health.h"
#include "redis.h"
#include "gateway/metrics.h"

#define METRICS_SESSIONS_MAX 10000

static long long
metric_field(const redisReply *h, const char *name)
{
    for (size_t i = 0; h && h->type == REDIS_REPLY_ARRAY && i + 1 < h->elements; i += 2)
        if (!strcmp(h->element[i]->str, name))
            return atoll(h->element[i + 1]->str);
    return 0;
}

/* What the gateways count (gateway/metrics.h): the action latency histogram, streamed output
 * and transfer bytes, refusals, events appended. */
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
    buf_printf(b,
               "# HELP sandpipe_network_refused_total Connections (tcp) and names (dns) the "
               "sandboxes' network policies refused (each session's own: GET "
               "/api/v1/sessions/{id}/network).\n"
               "# TYPE sandpipe_network_refused_total counter\n"
               "sandpipe_network_refused_total{proto=\"tcp\"} %lld\n"
               "sandpipe_network_refused_total{proto=\"dns\"} %lld\n",
               metric_field(h, "net_refused_tcp"), metric_field(h, "net_refused_dns"));
    buf_printf(b,
               "# HELP sandpipe_events_total Events appended to the sessions' logs.\n"
               "# TYPE sandpipe_events_total counter\nsandpipe_events_total %lld\n",
               metric_field(h, "events"));
    buf_printf(b,
               "# HELP sandpipe_events_unreplicated_total Events stored on a Redis primary that "
               "had no replica to confirm them (Sentinel mode, after the hold: operations.md "
               "\"Redis\").\n"
               "# TYPE sandpipe_events_unreplicated_total counter\n"
               "sandpipe_events_unreplicated_total %lld\n",
               metric_field(h, "events_unreplicated"));
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
    json_object *gws = h ? api_gateways_json(r, &live) : NULL;
    json_object *pool = gws ? api_pool_json(r) : NULL;
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
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
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
