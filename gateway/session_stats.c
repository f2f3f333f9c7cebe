/* session_stats.c — see session_stats.h. A request holds the caller's callback until the
 * executor's health or the timer, whichever comes first; the other one only releases it. */
#include "session_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "gw.h"
#include "json_util.h"
#include "session_int.h"
#include "xalloc.h"

static int64_t
positive(json_object *o, const char *key)
{
    int64_t v = json_get_int(o, key, 0);
    return v > 0 ? v : 0;
}

json_object *
session_stats_compose(const stats_in_t *in, double *cpu_s, bool *keep)
{
    json_object *hcpu = json_get(in->health, "cpu"), *hmem = json_get(in->health, "memory"),
                *hdisk = json_get(in->health, "disk");
    /* CPU time: the cgroup's counts every process the sandbox ever ran; the executor's only
     * those alive now */
    json_object *usec = json_get(in->usage, "cpu_usage_usec");
    double cpu = usec ? (double)positive(in->usage, "cpu_usage_usec") / 1e6
                      : json_get_double(hcpu, "seconds", 0);
    int64_t cores = in->cpu_millicores > 0 ? (in->cpu_millicores + 999) / 1000
                                           : (in->host_cpus > 0 ? in->host_cpus : 1);
    double since = in->started > 0 ? in->now - in->started : 0, used = cpu;
    *keep = true;
    if (in->prev_at > 0 && cpu >= in->prev_cpu_s) {
        if (in->now - in->prev_at >= STATS_CPU_WINDOW_MIN_S) {
            since = in->now - in->prev_at;
            used = cpu - in->prev_cpu_s;
        } else {
            *keep = false; /* too short to measure: the older sample is the next window's start */
        }
    }
    double pct = since > 0 ? 100.0 * used / (since * (double)cores) : 0;
    pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
    *cpu_s = cpu;

    /* memory: the cgroup's (page cache apart, as E2B counts it), else the processes' RSS */
    int64_t mem, cache = 0;
    if (json_get(in->usage, "memory_bytes")) {
        mem = positive(in->usage, "memory_bytes");
        cache = positive(in->usage, "memory_cache_bytes");
        mem = mem > cache ? mem - cache : 0;
    } else {
        mem = positive(hmem, "rss_bytes");
    }
    int64_t total = in->memory_limit > 0            ? in->memory_limit
                    : positive(hmem, "total_bytes") ? positive(hmem, "total_bytes")
                                                    : in->host_memory;

    /* disk: its own disk's filesystem, else the workspace's as the executor sees it */
    int64_t disk_used, disk_total;
    if (json_get(in->usage, "disk_size_bytes")) {
        disk_used = positive(in->usage, "disk_used_bytes");
        disk_total = positive(in->usage, "disk_size_bytes");
    } else {
        disk_used = positive(hdisk, "used_bytes");
        disk_total = positive(hdisk, "total_bytes");
    }

    json_object *o = json_object_new_object();
    json_set(o, "at", json_object_new_double(in->now));
    json_set_int(o, "cpu_count", cores);
    char two[32]; /* two decimals, as written: json-c would print the double's every digit */
    snprintf(two, sizeof two, "%.2f", pct);
    json_set(o, "cpu_used_pct", json_object_new_double_s(pct, two));
    json_set(o, "cpu_seconds", json_object_new_double(cpu));
    json_set_int(o, "memory_used_bytes", mem);
    json_set_int(o, "memory_cache_bytes", cache);
    json_set_int(o, "memory_total_bytes", total);
    json_set_int(o, "disk_used_bytes", disk_used);
    json_set_int(o, "disk_total_bytes", disk_total);
    return o;
}

typedef struct {
    session_stats_cb cb;
    void *ud;
    char sid[64];
    json_object *usage;
    uv_timer_t timer;
    int refs; /* the health's callback and the timer */
    bool answered;
} stats_req_t;

static void
req_release(stats_req_t *q)
{
    if (--q->refs > 0)
        return;
    json_object_put(q->usage);
    free(q);
}

static void
on_timer_closed(uv_handle_t *h)
{
    req_release(h->data);
}

/* The sample from what is there (health may be NULL), kept as the session's last one. */
static void
answer(stats_req_t *q, json_object *health)
{
    if (q->answered)
        return;
    q->answered = true;
    uv_close((uv_handle_t *)&q->timer, on_timer_closed); /* its reference goes with it */
    gw_session_t *s = session_find(q->sid);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    stats_in_t in = {
        .usage = q->usage,
        .health = health,
        .host_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN),
        .host_memory = pages > 0 && page > 0 ? (int64_t)pages * page : 0,
        .now = gw_wall(),
    };
    if (s) {
        in.memory_limit = s->sb.memory_bytes;
        in.cpu_millicores = s->sb.cpu_millicores;
        in.prev_cpu_s = s->stats_cpu_s;
        in.prev_at = s->stats_at;
        in.started = s->created;
    }
    double up = json_get_double(health, "uptime", 0);
    if (up > 0) /* the executor started with the sandbox (a warm one before its session) */
        in.started = in.now - up;
    double cpu_s = 0;
    bool keep = false;
    json_object *o = session_stats_compose(&in, &cpu_s, &keep);
    if (s && keep) {
        s->stats_cpu_s = cpu_s;
        s->stats_at = in.now;
    }
    q->cb(q->ud, o);
    json_object_put(o);
}

static void
on_health(void *ud, json_object *res)
{
    stats_req_t *q = ud;
    answer(q, json_get(res, "error") ? NULL : res);
    req_release(q);
}

static void
on_timeout(uv_timer_t *t)
{
    answer(t->data, NULL); /* the executor did not answer in time: the cgroup alone */
}

void
session_stats(gw_session_t *s, session_stats_cb cb, void *ud)
{
    stats_req_t *q = xcalloc(1, sizeof *q);
    q->cb = cb;
    q->ud = ud;
    snprintf(q->sid, sizeof q->sid, "%s", s->id);
    q->usage = s->prov && s->prov->usage ? s->prov->usage(&s->sb) : NULL;
    uv_timer_init(g_gw.loop, &q->timer);
    q->timer.data = q;
    q->refs = 2;
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "health");
    err_t err = {0};
    /* a paused sandbox's executor is frozen: its cgroup says what it holds */
    int rc = s->status == SESSION_PAUSED ? -1 : session_probe_op(s, op, on_health, q, &err);
    json_object_put(op);
    if (rc < 0) {
        q->refs--; /* no health will come */
        answer(q, NULL);
        return;
    }
    uv_timer_start(&q->timer, on_timeout, STATS_HEALTH_TIMEOUT_MS, 0);
}
