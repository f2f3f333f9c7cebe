/* sandbox_metrics.c — GET /sandboxes/{id}/metrics?start=&end= (getMetrics): the sandbox's CPU,
 * memory and disk now, sampled by its gateway (session.stats: its cgroup, else its executor's
 * health) when asked; sandpipe keeps no history of them, so the answer is that one sample, or
 * none when start and end (unix seconds) leave it out. See e2b.h. */
#include <stdio.h>
#include <string.h>

#include "e2b.h"
#include "json_util.h"

/* E2B's SandboxMetric of a session.stats sample (new ref). */
static json_object *
metric(json_object *st)
{
    double at = json_get_double(st, "at", 0);
    json_object *m = json_object_new_object();
    json_set(m, "timestamp", e2b_rfc3339(at));
    json_set_int(m, "timestampUnix", (int64_t)at);
    char pct[32]; /* two decimals, as written: json-c would print the double's every digit */
    snprintf(pct, sizeof pct, "%.2f", json_get_double(st, "cpu_used_pct", 0));
    json_set(m, "cpuUsedPct",
             json_object_new_double_s(json_get_double(st, "cpu_used_pct", 0), pct));
    json_set_int(m, "cpuCount", json_get_int(st, "cpu_count", 1));
    json_set_int(m, "memUsed", json_get_int(st, "memory_used_bytes", 0));
    json_set_int(m, "memTotal", json_get_int(st, "memory_total_bytes", 0));
    json_set_int(m, "memCache", json_get_int(st, "memory_cache_bytes", 0));
    json_set_int(m, "diskUsed", json_get_int(st, "disk_used_bytes", 0));
    json_set_int(m, "diskTotal", json_get_int(st, "disk_total_bytes", 0));
    return m;
}

void
api_e2b_metrics(api_req_t *r, char **params)
{
    if (e2b_auth(r, false) < 0)
        return;
    bool ok;
    long long start = api_query_int(r, "start", -1, 0, 1LL << 40, &ok);
    long long end = ok ? api_query_int(r, "end", -1, 0, 1LL << 40, &ok) : -1;
    if (!ok)
        return;
    api_err_t e;
    char gw[128];
    json_object *s = e2b_sandbox_load(r, params[0], &e);
    if (!s || api_session_live(r, s, gw, sizeof gw, &e) < 0) {
        json_object_put(s);
        api_fail(r, &e);
        return;
    }
    json_object_put(s);
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "session.stats");
    json_set_str(req, "session", params[0]);
    json_object *st = api_gw_ask(r, gw, req, g_api.gw_timeout, &e);
    json_object_put(req);
    if (!st) {
        api_fail(r, &e);
        return;
    }
    json_object *arr = json_object_new_array();
    long long t = (long long)json_get_double(st, "at", 0);
    if ((start < 0 || t >= start) && (end < 0 || t <= end))
        json_object_array_add(arr, metric(st));
    json_object_put(st);
    api_reply_json(r, 200, arr);
}
