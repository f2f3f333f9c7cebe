/* http_runtime.c — the action server's small routes (http_runtime.h). Each resolves its
 * session's route, checks it as every /runtime route does (http_rt.h), then answers from the
 * route, or from one executor op of the session (health, oh.list_files) called directly: no
 * other transport in between. The reference for every text: sandpipe-api's former
 * api/openhands/action_server.c (git history), docs/api.md. */
#include "http_runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw.h"
#include "http_rt.h"
#include "json_util.h"
#include "oh_stats.h"
#include "redis_client.h"
#include "route.h"
#include "session.h"
#include "xalloc.h"

#define RT_HEALTH_TIMEOUT_MS 5000 /* server_info's wait for the sandbox's health */

typedef enum { RT_ALIVE, RT_HEALTH, RT_READY, RT_INFO, RT_LIST } rt_kind_t;

/* One request's state, freed with it (free_ud; a running timer closes first). */
typedef struct {
    uint64_t req;
    rt_kind_t kind;
    char sid[128];
    json_object *op; /* list_files: the executor op (owned) */
    /* server_info */
    uv_timer_t timer;
    bool timer_on;
    double created, last, prev_cpu, prev_at;
} rt_t;

static void
on_closed(uv_handle_t *t)
{
    free(t->data);
}

static void
rt_free(void *ud)
{
    rt_t *x = ud;
    json_object_put(x->op);
    x->op = NULL;
    if (!x->timer_on) {
        free(x);
        return;
    }
    uv_timer_stop(&x->timer);
    uv_close((uv_handle_t *)&x->timer, on_closed);
}

static http_req_t *
request(void *ud)
{
    return http_find((uint64_t)(uintptr_t)ud);
}

/* ---- server_info ---- */

static void
info_answer(http_req_t *h, json_object *health)
{
    rt_t *x = h->ud;
    if (h->answered)
        return; /* the health came after the timeout's zeros, or the other way round */
    double now = gw_wall(), cpu_s = 0, pct = 0;
    bool store = false;
    if (health)
        pct = oh_cpu_percent(health, now, x->prev_cpu, x->prev_at, &store, &cpu_s);
    if (store)
        redis_client_cmd(NULL, NULL, "HSET sp:session:{%s}:runtime cpu_seconds %f cpu_at %f",
                         x->sid, cpu_s, now);
    http_answer_json(h, 200, oh_server_info(health, pct, now - x->created, now - x->last));
}

static void
on_health(void *ud, json_object *res)
{
    http_req_t *h = request(ud);
    if (h)
        info_answer(h, json_get(res, "error") ? NULL : res);
}

static void
on_health_timeout(uv_timer_t *t)
{
    rt_t *x = t->data;
    http_req_t *h = http_find(x->req);
    if (h)
        info_answer(h,
                    NULL); /* the sandbox did not answer: zeros, as upstream's psutil would not */
}

static void
on_runtime_hash(redisReply *rep, void *ud)
{
    http_req_t *h = request(ud);
    if (!h)
        return;
    rt_t *x = h->ud;
    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 3) {
        if (rep->element[0]->type == REDIS_REPLY_STRING)
            x->last = atof(rep->element[0]->str);
        if (rep->element[1]->type == REDIS_REPLY_STRING &&
            rep->element[2]->type == REDIS_REPLY_STRING)
            x->prev_cpu = atof(rep->element[1]->str), x->prev_at = atof(rep->element[2]->str);
    }
    gw_session_t *s = session_find(x->sid);
    if (s && session_last_executed(s) > x->last) /* not yet written to Redis */
        x->last = session_last_executed(s);
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "health");
    err_t err = {0};
    int rc = s ? session_probe_op(s, op, on_health, ud, &err) : -1;
    json_object_put(op);
    if (rc < 0) {
        info_answer(h, NULL);
        return;
    }
    uv_timer_init(g_gw.loop, &x->timer);
    x->timer.data = x;
    x->timer_on = true;
    uv_timer_start(&x->timer, on_health_timeout, RT_HEALTH_TIMEOUT_MS, 0);
}

static void
info_start(http_req_t *h, gw_session_t *s)
{
    rt_t *x = h->ud;
    json_object *d = session_describe(s);
    x->created = x->last = json_get_double(d, "created", gw_wall());
    json_object_put(d);
    redis_client_cmd(on_runtime_hash, (void *)(uintptr_t)h->id,
                     "HMGET sp:session:{%s}:runtime last_execute cpu_seconds cpu_at", x->sid);
}

/* ---- list_files ---- */

static void
on_listed(void *ud, json_object *res)
{
    http_req_t *h = request(ud);
    if (!h)
        return;
    json_object *err = json_get(res, "error");
    if (err) {
        http_rt_failf(h, ERR_INTERNAL, "Error listing files: %.378s",
                      json_get_str(err, "message", "the runtime did not answer"));
        return;
    }
    json_object *files = json_get(res, "files");
    http_answer_json(h, 200, files ? json_object_get(files) : json_object_new_array());
}

static void
list_start(http_req_t *h, gw_session_t *s)
{
    rt_t *x = h->ud;
    if (!x->op) {
        http_rt_invalid(h, "json_invalid", "body", NULL, "JSON decode error");
        return;
    }
    err_t err = {0};
    json_set_str(x->op, "op", "oh.list_files");
    if (session_probe_op(s, x->op, on_listed, (void *)(uintptr_t)h->id, &err) < 0)
        http_rt_failf(h, ERR_INTERNAL, "Error listing files: %.378s", err.msg);
}

/* ---- the routes ---- */

static void
probe_answer(http_req_t *h, const route_t *r, bool ready)
{
    json_object *o = json_object_new_object();
    if (!r) {
        json_object_put(o);
        http_rt_fail(h, ERR_UNAVAILABLE, "Service Unavailable: Redis is not reachable");
    } else if (!r->starting && (!r->found || !r->status[0] || !strcmp(r->status, "STOPPED"))) {
        json_object_put(o);
        http_rt_fail(h, ERR_NOT_FOUND, "Not Found");
    } else if (!strcmp(r->status, "PAUSED")) {
        json_object_put(o);
        http_rt_fail(h, ERR_UNAVAILABLE, "Runtime is paused");
    } else if (!strcmp(r->status, "READY") && r->gw_alive) {
        json_set_str(o, "status", ready ? "ready" : "ok");
        http_answer_json(h, 200, o);
    } else {
        json_set_str(o, "status", "initializing");
        json_set_str(o, "message", "Server is still initializing");
        http_answer_json(h, 503, o);
    }
}

static void
on_route(void *ud, const route_t *r)
{
    http_req_t *h = request(ud);
    if (!h)
        return;
    rt_t *x = h->ud;
    if (x->kind == RT_HEALTH || x->kind == RT_READY) {
        probe_answer(h, r, x->kind == RT_READY);
        return;
    }
    jwt_claims_t c;
    if (!http_rt_live(h, r) || (x->kind == RT_LIST && !http_rt_authed(h, r, false, &c)))
        return;
    gw_session_t *s = http_rt_here(h, r);
    if (!s)
        return;
    snprintf(x->sid, sizeof x->sid, "%s", r->sid);
    json_object *o;
    switch (x->kind) {
    case RT_ALIVE:
        o = json_object_new_object();
        json_set_str(o, "status", strcmp(r->status, "READY") ? "not initialized" : "ok");
        http_answer_json(h, 200, o);
        break;
    case RT_INFO: info_start(h, s); break;
    case RT_LIST: list_start(h, s); break;
    default: break;
    }
}

static rt_t *
rt_new(http_req_t *h, rt_kind_t kind)
{
    rt_t *x = xcalloc(1, sizeof *x);
    x->req = h->id;
    x->kind = kind;
    h->ud = x;
    h->free_ud = rt_free;
    return x;
}

static void
go(http_req_t *h, const char *id)
{
    route_resolve(id, on_route, (void *)(uintptr_t)h->id);
}

void
http_rt_alive(http_req_t *h, const char *id)
{
    rt_new(h, RT_ALIVE);
    go(h, id);
}

void
http_rt_health(http_req_t *h, const char *id)
{
    rt_new(h, RT_HEALTH);
    go(h, id);
}

void
http_rt_ready(http_req_t *h, const char *id)
{
    rt_new(h, RT_READY);
    go(h, id);
}

void
http_rt_server_info(http_req_t *h, const char *id)
{
    rt_new(h, RT_INFO);
    go(h, id);
}

/* The body is checked once the key is: the API read it after its checks too. */
void
http_rt_list_files(http_req_t *h, const char *id)
{
    rt_t *x = rt_new(h, RT_LIST);
    if (h->body_too_big) {
        http_rt_fail(h, ERR_TOO_BIG, "Request body too large");
        return;
    }
    err_t perr = {0};
    json_object *body =
        h->body_len ? json_parse(h->body, h->body_len, &perr) : json_object_new_object();
    x->op = json_object_new_object();
    if (body && json_object_is_type(body, json_type_object)) {
        json_object *path = json_get(body, "path");
        if (path && json_object_is_type(path, json_type_string))
            json_set_str(x->op, "path", json_object_get_string(path));
    } else {
        json_object_put(x->op);
        x->op = NULL; /* answered 422 after the route's checks */
    }
    json_object_put(body);
    go(h, id);
}
