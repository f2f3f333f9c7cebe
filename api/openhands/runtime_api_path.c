/* runtime_api_path.c — a runtime's own URL, {scheme}://{host}/{runtime_id}: the same OpenHands
 * action-execution server as /runtime/{session}/ (nginx sends /rt-… here; the path is turned
 * into /runtime/rt-… before routing, and action_server.c maps the runtime id to its session and
 * accepts its session API key), plus the unauthenticated GET /health and /ready the SDK and
 * the agent-server's clients probe. Runtime ids carry the fixed prefix "rt-" + 16 hex digits,
 * so /rt-… cannot collide with any other path of the origin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "runtime_api.h"
#include "gateway_client.h"
#include "redis.h"
#include "json_util.h"
#include "xalloc.h"

void
api_oh_path_form(api_req_t *r)
{
    const char *p = r->path;
    if (p[0] != '/' || strncmp(p + 1, OH_RID_PREFIX, strlen(OH_RID_PREFIX)) != 0)
        return;
    size_t n = strcspn(p + 1, "/");
    char rid[64];
    if (n >= sizeof rid)
        return;
    memcpy(rid, p + 1, n);
    rid[n] = '\0';
    if (!oh_rid_ok(rid))
        return;
    char *path = xasprintf("/runtime%s", p);
    free(r->path);
    r->path = path;
}

int
api_oh_runtime_session(api_req_t *r, const char *id, api_rt_ref_t *ref)
{
    ref->sid[0] = ref->key[0] = ref->owner[0] = '\0';
    if (strncmp(id, OH_RID_PREFIX, strlen(OH_RID_PREFIX)) != 0) {
        snprintf(ref->sid, sizeof ref->sid, "%s", id);
        return 1;
    }
    oh_rt_t rt;
    int f = oh_load_rid(r, id, &rt);
    if (f == 1) {
        if (rt.stopped > 0 || (!rt.session[0] && rt.error[0]))
            f = 0;
        else if (!rt.session[0])
            f = 2;
        snprintf(ref->sid, sizeof ref->sid, "%s", rt.session);
        snprintf(ref->key, sizeof ref->key, "%s", rt.key);
        snprintf(ref->owner, sizeof ref->owner, "%s", rt.owner);
    }
    oh_rt_free(&rt);
    return f;
}

static void
status_body(api_req_t *r, int status, const char *st, const char *msg)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "status", st);
    if (msg)
        json_set_str(o, "message", msg);
    api_reply_json(r, status, o);
}

/* The agent-server's answers: /health {"status":"ok"} while it runs, /ready {"status":
 * "ready"} once initialised, else 503 {"status":"initializing"}. Unknown → 404, paused → 503,
 * as every route of a runtime. */
static void
probe(api_req_t *r, const char *id, bool ready)
{
    if (!api_redis_get(r, false)) {
        api_failf(r, ERR_UNAVAILABLE, "Service Unavailable: Redis is not reachable");
        return;
    }
    api_rt_ref_t ref;
    int f = api_oh_runtime_session(r, id, &ref);
    const char *sid = ref.sid;
    if (f < 0) {
        api_failf(r, ERR_UNAVAILABLE, "Service Unavailable: Redis is not reachable");
        return;
    }
    if (f == 0 || !*sid || strlen(sid) > 100 || strpbrk(sid, "{}\r\n ")) {
        api_failf(r, ERR_NOT_FOUND, "Not Found");
        return;
    }
    char st[40] = "", gw[128] = "";
    if (f == 1) {
        redisReply *x = api_redis_cmdf(r, "HMGET sp:session:{%s} status gateway", sid);
        if (x && x->type == REDIS_REPLY_ARRAY && x->elements == 2) {
            if (x->element[0]->type == REDIS_REPLY_STRING)
                snprintf(st, sizeof st, "%s", x->element[0]->str);
            if (x->element[1]->type == REDIS_REPLY_STRING)
                snprintf(gw, sizeof gw, "%s", x->element[1]->str);
        }
        if (x)
            freeReplyObject(x);
    }
    if (f == 1 && (!*st || !strcmp(st, "STOPPED")))
        api_failf(r, ERR_NOT_FOUND, "Not Found");
    else if (!strcmp(st, "PAUSED"))
        api_failf(r, ERR_UNAVAILABLE, "Runtime is paused");
    else if (!strcmp(st, "READY") && api_gateway_alive(r, gw) == 1)
        status_body(r, 200, ready ? "ready" : "ok", NULL);
    else
        status_body(r, 503, "initializing", "Server is still initializing");
}

void
api_oh_health(api_req_t *r, char **params)
{
    probe(r, params[0], false);
}

void
api_oh_ready(api_req_t *r, char **params)
{
    probe(r, params[0], true);
}
