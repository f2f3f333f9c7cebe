/* runtime_api.c — the OpenHands Runtime API under /openhands, all but /start (which is
 * runtime_api_start.c): look-ups (/sessions/{session_id}, /runtime/{runtime_id}, /list,
 * /sessions/batch), /pause, /resume, /stop, and the image routes (sandpipe profiles stand in
 * for images; it builds none yet). Auth is X-API-Key holding a sandpipe token; a token sees
 * what its role sees on the REST API. Errors carry FastAPI's "detail" and sandpipe's "error". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "auth.h"
#include "runtime_api.h"
#include "gateway_client.h"
#include "redis.h"
#include "json_util.h"
#include "pct_decode.h"

#define OH_LIST_MAX  5000 /* runtimes one /list answers at most */
#define OH_BATCH_MAX 100  /* ids one /sessions/batch takes */
#define OH_REGISTRY  "sandpipe"

void
oh_fail_gateway(api_req_t *r, const api_err_t *e, const char *what)
{
    if (api_gw_refused(e))
        api_failf(r, e->code, "%s: %s", what, e->msg);
    else
        api_failf(r, ERR_UNAVAILABLE, "%s: the runtime's gateway did not answer (%s)", what,
                  e->msg);
}

int
oh_auth(api_req_t *r)
{
    const char *key = api_param(r, "HTTP_X_API_KEY");
    if ((!key || !*key) && jwt_bearer_from_header(api_param(r, "HTTP_AUTHORIZATION"), &key) < 0)
        key = NULL;
    if (!key || !*key) {
        api_failf(r, ERR_AUTH, "an X-API-Key header holding a sandpipe token is required");
        return -1;
    }
    jwt_claims_t c;
    err_t err = {0};
    int rc = jwt_verify(g_api.secret, g_api.secret_len, key, (int64_t)time(NULL), &c, &err);
    if (rc == -ERR_AUTH_EXPIRED) {
        api_failf(r, ERR_AUTH_EXPIRED, "the X-API-Key token has expired");
        return -1;
    }
    if (rc < 0) {
        api_failf(r, ERR_AUTH, "invalid X-API-Key: %s", err.msg);
        return -1;
    }
    r->claims = c;
    r->authed = true;
    return 0;
}

static bool
redis_ok(api_req_t *r)
{
    if (api_redis_get(r, false))
        return true;
    api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
    return false;
}

/* Loads by runtime id for a change; replies (503, 404, 403) and returns -1 when it cannot. */
static int
load_for_write(api_req_t *r, const char *rid, oh_rt_t *rt)
{
    int f = oh_load_rid(r, rid, rt);
    if (f < 0) {
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
    } else if (f == 0 || !oh_visible(r, rt, false)) {
        api_failf(r, ERR_NOT_FOUND, "no runtime %.64s", rid);
    } else if (!oh_visible(r, rt, true)) {
        api_failf(r, ERR_FORBIDDEN, "this token is read-only");
    } else {
        return 0;
    }
    oh_rt_free(rt);
    return -1;
}

/* The body {"runtime_id": …} of /pause, /resume and /stop, loaded for a change. */
static int
body_runtime(api_req_t *r, oh_rt_t *rt)
{
    memset(rt, 0, sizeof *rt);
    if (oh_auth(r) < 0)
        return -1;
    if (!strcmp(r->claims.role, "viewer")) {
        api_failf(r, ERR_FORBIDDEN, "viewer tokens cannot change runtimes");
        return -1;
    }
    if (r->body_len > API_JSON_BODY_MAX) {
        api_failf(r, ERR_TOO_BIG, "request body over %u bytes", (unsigned)API_JSON_BODY_MAX);
        return -1;
    }
    err_t err = {0};
    json_object *b = r->body_len ? json_parse(r->body, r->body_len, &err) : NULL;
    if (!b || !json_object_is_type(b, json_type_object)) {
        json_object_put(b);
        api_failf(r, ERR_BAD_REQ, "the body must be a JSON object {\"runtime_id\": …}%s%s",
                  err.msg[0] ? ": " : "", err.msg);
        return -1;
    }
    json_object *id = json_get(b, "runtime_id");
    char rid[64];
    snprintf(rid, sizeof rid, "%s",
             id && json_object_is_type(id, json_type_string) ? json_object_get_string(id) : "");
    json_object_put(b);
    if (!*rid) {
        api_failf(r, ERR_BAD_REQ, "runtime_id (a string) is required");
        return -1;
    }
    if (!redis_ok(r))
        return -1;
    return load_for_write(r, rid, rt);
}

void
oh_reply_reloaded(api_req_t *r, oh_rt_t *rt)
{
    char sid[sizeof rt->sid];
    snprintf(sid, sizeof sid, "%s", rt->sid);
    oh_rt_free(rt);
    if (oh_load(r, sid, rt) != 1) {
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        return;
    }
    api_reply_json(r, 200, oh_rt_json(r, rt));
}

int
oh_resume(api_req_t *r, oh_rt_t *rt)
{
    int cap = oh_capacity_reserve(r, rt->sid);
    if (cap <= 0) {
        if (cap < 0)
            api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        else
            api_failf(r, ERR_AT_CAPACITY, "%d runtimes are running: pause or stop one first",
                      g_api.oh.max_runtimes);
        return -1;
    }
    api_err_t e;
    if (oh_session_op(r, rt, "session.resume", &e) < 0) {
        if (cap == 2)
            oh_capacity_release(r, rt->sid);
        oh_fail_gateway(r, &e, "resume failed");
        return -1;
    }
    return 0;
}

void
api_oh_pause(api_req_t *r, char **params)
{
    (void)params;
    oh_rt_t rt;
    if (body_runtime(r, &rt) < 0)
        return;
    if (!strcmp(rt.status, "running")) {
        api_err_t e;
        if (oh_session_op(r, &rt, "session.pause", &e) < 0) {
            oh_fail_gateway(r, &e, "pause failed");
            oh_rt_free(&rt);
            return;
        }
        oh_capacity_release(r, rt.sid);
    } else if (!strcmp(rt.status, "starting")) {
        api_failf(r, ERR_BUSY, "runtime %s is still starting", rt.rid);
    } else if (!strcmp(rt.status, "error")) {
        api_failf(r, ERR_FAILED, "runtime %s failed: %s", rt.rid, rt.error);
    } else if (strcmp(rt.status, "paused") != 0) {
        api_failf(r, ERR_NOT_FOUND, "runtime %s is stopped", rt.rid);
    }
    if (!r->status)
        oh_reply_reloaded(r, &rt);
    oh_rt_free(&rt);
}

void
api_oh_resume(api_req_t *r, char **params)
{
    (void)params;
    oh_rt_t rt;
    if (body_runtime(r, &rt) < 0)
        return;
    if (!strcmp(rt.status, "paused")) {
        if (oh_resume(r, &rt) < 0) {
            oh_rt_free(&rt);
            return;
        }
    } else if (!strcmp(rt.status, "error")) {
        api_failf(r, ERR_FAILED, "runtime %s failed: %s", rt.rid, rt.error);
    } else if (!strcmp(rt.status, "stopped")) {
        api_failf(r, ERR_NOT_FOUND, "runtime %s is stopped", rt.rid);
    }
    if (!r->status)
        oh_reply_reloaded(r, &rt); /* running or starting: already on its way */
    oh_rt_free(&rt);
}

void
api_oh_stop(api_req_t *r, char **params)
{
    (void)params;
    oh_rt_t rt;
    if (body_runtime(r, &rt) < 0)
        return;
    if (rt.stopped > 0) {
        api_reply_json(r, 200, oh_rt_json(r, &rt)); /* idempotent */
        oh_rt_free(&rt);
        return;
    }
    /* A session still starting is deleted as any other (the gateway stops its start); one
     * whose id is not known yet (its /start is still asking) is deleted by that /start, which
     * finds the runtime stopped (oh_apply_create_reply). */
    if (rt.session[0] && strcmp(rt.session_status, "STOPPED") && rt.session_status[0]) {
        api_err_t e;
        if (oh_session_op(r, &rt, "session.delete", &e) < 0 &&
            !(api_gw_refused(&e) && e.code == ERR_NOT_FOUND)) {
            oh_fail_gateway(r, &e, "stop failed");
            oh_rt_free(&rt);
            return;
        }
    }
    if (oh_mark_stopped(r, &rt) < 0) {
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        oh_rt_free(&rt);
        return;
    }
    api_reply_json(r, 200, oh_rt_json(r, &rt));
    oh_rt_free(&rt);
}

void
api_oh_sessions_get(api_req_t *r, char **params)
{
    if (oh_auth(r) < 0 || !redis_ok(r))
        return;
    oh_rt_t rt;
    int f = oh_load(r, params[0], &rt);
    if (f < 0)
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
    else if (f == 0 || !oh_visible(r, &rt, false))
        api_failf(r, ERR_NOT_FOUND, "no runtime for session %.100s", params[0]);
    else
        api_reply_json(r, 200, oh_rt_json(r, &rt));
    oh_rt_free(&rt);
}

void
api_oh_runtime_get(api_req_t *r, char **params)
{
    if (oh_auth(r) < 0 || !redis_ok(r))
        return;
    oh_rt_t rt;
    int f = oh_load_rid(r, params[0], &rt);
    if (f < 0)
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
    else if (f == 0 || !oh_visible(r, &rt, false))
        api_failf(r, ERR_NOT_FOUND, "no runtime %.64s", params[0]);
    else
        api_reply_json(r, 200, oh_rt_json(r, &rt));
    oh_rt_free(&rt);
}

void
api_oh_list(api_req_t *r, char **params)
{
    (void)params;
    if (oh_auth(r) < 0 || !redis_ok(r))
        return;
    redisReply *z = api_redis_cmdf(r, "ZREVRANGE sp:oh:sessions 0 %d", OH_LIST_MAX - 1);
    if (!z || z->type != REDIS_REPLY_ARRAY) {
        if (z)
            freeReplyObject(z);
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        return;
    }
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < z->elements; i++) {
        oh_rt_t rt;
        int f = oh_load(r, z->element[i]->str, &rt);
        if (f == 0) {
            /* expired */
            redisReply *x = api_redis_cmdf(r, "ZREM sp:oh:sessions %s", z->element[i]->str);
            if (x)
                freeReplyObject(x);
        } else if (f == 1 && strcmp(rt.status, "stopped") != 0 && oh_visible(r, &rt, false)) {
            json_object_array_add(arr, oh_rt_json(r, &rt));
        }
        oh_rt_free(&rt);
    }
    freeReplyObject(z);
    json_object *o = json_object_new_object();
    json_set_int(o, "total", (int64_t)json_object_array_length(arr));
    json_set(o, "runtimes", arr);
    api_reply_json(r, 200, o);
}

/* Each "ids" value of the query (repeated, or comma-separated), decoded, into out[]. */
static int
query_ids(const api_req_t *r, char out[][OH_SID_MAX + 1], int max)
{
    int n = 0;
    for (const char *p = r->query; p && *p;) {
        const char *amp = strchrnul(p, '&');
        size_t len = (size_t)(amp - p);
        char v[1024];
        if (len > 4 && !strncmp(p, "ids=", 4) && pct_decode(p + 4, len - 4, v, sizeof v) >= 0) {
            for (char *save = NULL, *t = strtok_r(v, ",", &save); t && n < max;
                 t = strtok_r(NULL, ",", &save))
                if (strlen(t) <= OH_SID_MAX)
                    snprintf(out[n++], OH_SID_MAX + 1, "%s", t);
        }
        p = *amp ? amp + 1 : NULL;
    }
    return n;
}

void
api_oh_batch(api_req_t *r, char **params)
{
    (void)params;
    if (oh_auth(r) < 0 || !redis_ok(r))
        return;
    char ids[OH_BATCH_MAX][OH_SID_MAX + 1];
    int n = query_ids(r, ids, OH_BATCH_MAX);
    json_object *arr = json_object_new_array();
    for (int i = 0; i < n; i++) {
        oh_rt_t rt;
        int f = oh_load(r, ids[i], &rt);
        if (f < 0) {
            oh_rt_free(&rt);
            json_object_put(arr);
            api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
            return;
        }
        if (f == 1 && oh_visible(r, &rt, false))
            json_object_array_add(arr, oh_rt_json(r, &rt));
        oh_rt_free(&rt);
    }
    api_reply_json(r, 200, arr);
}

/* ---- images: registry_prefix here, the rest in runtime_images.c ---- */

void
api_oh_registry_prefix(api_req_t *r, char **params)
{
    (void)params;
    if (oh_auth(r) < 0)
        return;
    json_object *o = json_object_new_object();
    json_set_str(o, "registry_prefix", OH_REGISTRY);
    api_reply_json(r, 200, o);
}
