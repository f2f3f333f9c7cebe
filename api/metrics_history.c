/* metrics_history.c — GET /api/v1/metrics/history?seconds=N: the counters of /metrics as they
 * were every METRICS_HISTORY_STEP_S seconds over the last N (the copies the gateways keep in the
 * stream sp:metrics:history, gateway/metrics.h), for the overview's charts: their history is
 * the service's, not the page's, so it is there at the first load and survives a reload.
 *
 * {"step":10,"bounds":[0.001,…],"samples":[{"t":1718000000.123,"action_count":N,
 *  "action_buckets":[cumulative counts per bound, +Inf last],"action_sum_seconds":S,
 *  "output_bytes":N,"events":N},…]} oldest first; a client takes rates between neighbours. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "json_util.h"
#include "redis.h"
#include "gateway/metrics.h"

#define HISTORY_SECONDS_DEFAULT 1800

/* The value of field name in a stream entry's field list, 0 when absent. */
static long long
entry_field(const redisReply *f, const char *name)
{
    for (size_t k = 0; k + 1 < f->elements; k += 2)
        if (f->element[k]->type == REDIS_REPLY_STRING && !strcmp(f->element[k]->str, name) &&
            f->element[k + 1]->type == REDIS_REPLY_STRING)
            return atoll(f->element[k + 1]->str);
    return 0;
}

static json_object *
sample_json(const redisReply *f)
{
    json_object *o = json_object_new_object();
    json_set(o, "t", json_object_new_double((double)entry_field(f, "t") / 1000.0));
    json_object *buckets = json_object_new_array();
    long long cum = 0;
    for (int i = 0; i <= METRICS_ACTION_NBUCKETS; i++) {
        char name[24];
        snprintf(name, sizeof name, "action_b%d", i);
        cum += entry_field(f, name);
        json_object_array_add(buckets, json_object_new_int64(cum));
    }
    json_set_int(o, "action_count", cum);
    json_set(o, "action_buckets", buckets);
    json_set(o, "action_sum_seconds",
             json_object_new_double((double)entry_field(f, "action_sum_us") / 1e6));
    json_set_int(o, "output_bytes", entry_field(f, "output_bytes"));
    json_set_int(o, "events", entry_field(f, "events"));
    return o;
}

void
api_metrics_history(api_req_t *r, char **params)
{
    (void)params;
    bool ok = true;
    long long seconds = api_query_int(r, "seconds", HISTORY_SECONDS_DEFAULT, 60,
                                      (long long)METRICS_HISTORY_STEP_S * METRICS_HISTORY_LEN, &ok);
    if (!ok)
        return;
    long long from_ms = ((long long)time(NULL) - seconds) * 1000;
    redisReply *x = api_redis_cmdf(r, "XRANGE sp:metrics:history %lld + COUNT %d",
                                   from_ms > 0 ? from_ms : 0, METRICS_HISTORY_LEN);
    if (!x || x->type != REDIS_REPLY_ARRAY) {
        if (x)
            freeReplyObject(x);
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        return;
    }
    json_object *out = json_object_new_object(), *samples = json_object_new_array();
    json_set_int(out, "step", METRICS_HISTORY_STEP_S);
    static const double bounds[METRICS_ACTION_NBUCKETS] = METRICS_ACTION_BUCKETS;
    json_object *b = json_object_new_array();
    for (int i = 0; i < METRICS_ACTION_NBUCKETS; i++)
        json_object_array_add(b, json_object_new_double(bounds[i]));
    json_set(out, "bounds", b);
    for (size_t i = 0; i < x->elements; i++) {
        const redisReply *e = x->element[i];
        if (e->type == REDIS_REPLY_ARRAY && e->elements == 2 &&
            e->element[1]->type == REDIS_REPLY_ARRAY)
            json_object_array_add(samples, sample_json(e->element[1]));
    }
    json_set(out, "samples", samples);
    freeReplyObject(x);
    api_reply_json(r, 200, out);
}
