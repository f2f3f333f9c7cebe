/* action_server.c — each session as an OpenHands action-execution server at /runtime/{id}/:
 * alive, server_info (no key), execute_action, list_files, vscode/connection_token (header
 * X-Session-API-Key: a sandpipe token valid for that session). Bodies and status codes are
 * upstream's (FastAPI: {"detail": ...}); see docs/api.md, "/runtime/{session}/". The observation is
 * returned exactly as the executor built it (the "observation" of its observation event).
 * idle_time is kept in sp:session:{ID}:runtime (field last_execute), reset by execute_action only.
 * {id} may also be a runtime id of the OpenHands Runtime API (rt-…): its current session, with
 * that runtime's session API key accepted as X-Session-API-Key (runtime_api_path.c).
 */
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action_decode.h"
#include "api.h"
#include "clock.h"
#include "auth.h"
#include "gateway_client.h"
#include "redis.h"
#include "session_record.h"
#include "action_server.h"
#include "json_util.h"
#include "oh_stats.h"
#include "plugin_texts.h"
#include "xalloc.h"

#define RT_ACTION_TIMEOUT_DEFAULT 120.0
#define RT_WAIT_MARGIN_S          30
#define RT_HEALTH_TIMEOUT_S       5 /* server_info's wait for the sandbox's health */

/* The executor's observation for run_ipython in a session without the jupyter plugin. */
static bool
jupyter_missing(json_object *obs)
{
    return !strcmp(json_get_str(obs, "observation", ""), "error") &&
           !strcmp(json_get_str(obs, "content", ""), PLUGIN_JUPYTER_MISSING);
}

/* The session record for sid, whatever the caller's rights (routing only). A runtime id in sid
 * (a route capture, API_ROUTE_PARAM_MAX bytes) is replaced by its session's id; ref receives
 * what it stands for (a runtime's session API key and owner). Replies and returns NULL for
 * unknown/stopped (404), paused or starting (503), broken or gateway gone (502), Redis down
 * (503). */
static json_object *
rt_session(api_req_t *r, char *sid, char *gw, size_t cap, api_rt_ref_t *ref, bool check_gw)
{
    if (!*sid || strlen(sid) > 100 || strpbrk(sid, "{}\r\n ")) {
        api_failf(r, ERR_NOT_FOUND, "Not Found");
        return NULL;
    }
    if (!api_redis_get(r, false)) {
        api_failf(r, ERR_UNAVAILABLE, "Service Unavailable: Redis is not reachable");
        return NULL;
    }
    int f = api_oh_runtime_session(r, sid, ref);
    if (f < 0)
        api_failf(r, ERR_UNAVAILABLE, "Service Unavailable: Redis is not reachable");
    else if (f == 2)
        api_failf(r, ERR_UNAVAILABLE, "Runtime is starting");
    else if (f != 1)
        api_failf(r, ERR_NOT_FOUND, "Not Found");
    if (f != 1)
        return NULL;
    strcpy(sid, ref->sid); /* no longer than the capture it replaces */
    redisReply *h = api_redis_cmdf(r, "HGETALL sp:session:{%s}", sid);
    if (!h || h->type != REDIS_REPLY_ARRAY) {
        if (h)
            freeReplyObject(h);
        api_failf(r, ERR_UNAVAILABLE, "Service Unavailable: Redis is not reachable");
        return NULL;
    }
    if (h->elements == 0) {
        freeReplyObject(h);
        api_failf(r, ERR_NOT_FOUND, "Not Found");
        return NULL;
    }
    json_object *s = api_session_from_hash(h);
    freeReplyObject(h);
    const char *st = json_get_str(s, "status", "");
    snprintf(gw, cap, "%s", json_get_str(s, "gateway", ""));
    api_err_t e = {0};
    if (!strcmp(st, "STOPPED")) {
        api_err_set(&e, ERR_NOT_FOUND, "Not Found");
    } else if (!strcmp(st, "PAUSED")) {
        api_err_set(&e, ERR_UNAVAILABLE, "Runtime is paused");
    } else if (!strcmp(st, "ERROR") || !strcmp(st, "ERROR_RUNTIME_DISCONNECTED")) {
        api_err_set(&e, ERR_GATEWAY_DOWN, "Runtime disconnected");
    } else if (check_gw) {
        int alive = api_gateway_alive(r, gw);
        if (alive < 0)
            api_err_set(&e, ERR_UNAVAILABLE, "Service Unavailable: Redis is not reachable");
        else if (!alive)
            api_err_set(&e, ERR_GATEWAY_DOWN, "Runtime disconnected: its gateway is not running");
    }
    if (e.code) {
        json_object_put(s);
        api_fail(r, &e);
        return NULL;
    }
    return s;
}

/* rt_session plus the X-Session-API-Key check: a token valid for the session, or the
 * runtime's own key (which acts as the runtime's owner). */
static json_object *
rt_session_authed(api_req_t *r, char *sid, char *gw, size_t cap, bool write, bool check_gw)
{
    api_rt_ref_t ref;
    json_object *s = rt_session(r, sid, gw, cap, &ref, check_gw);
    if (!s)
        return NULL;
    const char *presented = api_param(r, "HTTP_X_SESSION_API_KEY");
    if (ref.key[0] && presented && strlen(presented) == strlen(ref.key) &&
        CRYPTO_memcmp(presented, ref.key, strlen(ref.key)) == 0) {
        memset(&r->claims, 0, sizeof r->claims);
        snprintf(r->claims.sub, sizeof r->claims.sub, "%s", ref.owner);
        snprintf(r->claims.role, sizeof r->claims.role, "user");
        r->authed = true;
    } else if (api_auth_session_key(r, presented, sid, json_get_str(s, "owner", ""), write) < 0) {
        json_object_put(s);
        api_failf(r, ERR_FORBIDDEN, "Invalid API Key");
        return NULL;
    }
    return s;
}

static void
touch(api_req_t *r, const char *sid)
{
    api_redis_post(r, "HSET sp:session:{%s}:runtime last_execute %f", sid, clock_wall());
}

void
api_rt_alive(api_req_t *r, char **params)
{
    char gw[128];
    api_rt_ref_t ref;
    json_object *s = rt_session(r, params[0], gw, sizeof gw, &ref, true);
    if (!s)
        return;
    json_object *o = json_object_new_object();
    json_set_str(o, "status",
                 strcmp(json_get_str(s, "status", ""), "READY") ? "not initialized" : "ok");
    json_object_put(s);
    api_reply_json(r, 200, o);
}

/* The executor's health result (op "health" through the gateway inbox, docs/protocol.md),
 * asked as the session's owner since /server_info needs no key, like upstream's. NULL when the
 * gateway or the executor did not answer: server_info then serves zeros. */
static json_object *
sandbox_health(api_req_t *r, const char *sid, const char *gw, const char *owner)
{
    jwt_claims_t caller = r->claims;
    memset(&r->claims, 0, sizeof r->claims);
    snprintf(r->claims.sub, sizeof r->claims.sub, "%s", owner);
    snprintf(r->claims.role, sizeof r->claims.role, "user");
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "health");
    json_set_str(req, "session", sid);
    json_object *res = api_gw_ask(r, gw, req, RT_HEALTH_TIMEOUT_S, NULL);
    r->claims = caller;
    json_object_put(req);
    return res;
}

/* cpu_percent over the window since the previous /server_info of the session (fields
 * cpu_seconds, cpu_at of sp:session:{ID}:runtime: prev_cpu, prev_at); oh_stats.h. Upstream
 * samples its own process over 0.1 s; asking the sandbox twice would hold a FastCGI worker that
 * long. */
static double
cpu_percent(api_req_t *r, const char *sid, json_object *h, double now, double prev_cpu,
            double prev_at)
{
    bool store;
    double cs = 0;
    double pct = oh_cpu_percent(h, now, prev_cpu, prev_at, &store, &cs);
    if (store) {
        redisReply *x = api_redis_cmdf(r, "HSET sp:session:{%s}:runtime cpu_seconds %f cpu_at %f",
                                       sid, cs, now);
        if (x)
            freeReplyObject(x);
    }
    return pct;
}

void
api_rt_server_info(api_req_t *r, char **params)
{
    char gw[128], owner[128];
    api_rt_ref_t ref;
    json_object *s = rt_session(r, params[0], gw, sizeof gw, &ref, true);
    if (!s)
        return;
    const char *sid = params[0];
    double now = clock_wall(), created = json_get_double(s, "created", now), last = created;
    double prev_cpu = 0, prev_at = 0;
    snprintf(owner, sizeof owner, "%s", json_get_str(s, "owner", ""));
    json_object_put(s);
    redisReply *x =
        api_redis_cmdf(r, "HMGET sp:session:{%s}:runtime last_execute cpu_seconds cpu_at", sid);
    if (x && x->type == REDIS_REPLY_ARRAY && x->elements == 3) {
        if (x->element[0]->type == REDIS_REPLY_STRING)
            last = atof(x->element[0]->str);
        if (x->element[1]->type == REDIS_REPLY_STRING && x->element[2]->type == REDIS_REPLY_STRING)
            prev_cpu = atof(x->element[1]->str), prev_at = atof(x->element[2]->str);
    }
    if (x)
        freeReplyObject(x);
    json_object *h = sandbox_health(r, sid, gw, owner);
    double cpu = h ? cpu_percent(r, sid, h, clock_wall(), prev_cpu, prev_at) : 0.0;
    json_object *o = oh_server_info(h, cpu, now - created, now - last);
    json_object_put(h);
    api_reply_json(r, 200, o);
}

static void
invalid_params(api_req_t *r, const char *type, const char *msg)
{
    rt_invalid(r, type, "body", !strcmp(type, "missing") ? "action" : NULL, msg);
}

void
api_rt_execute_action(api_req_t *r, char **params)
{
    char *sid = params[0];
    char gw[128];
    json_object *s = rt_session_authed(r, sid, gw, sizeof gw, true, false); /* checked below */
    if (!s)
        return;
    json_object_put(s);
    err_t perr = {0};
    json_object *body = r->body_len ? json_parse(r->body, r->body_len, &perr) : NULL;
    if (!body || !json_object_is_type(body, json_type_object)) {
        json_object_put(body);
        invalid_params(r, "json_invalid", "JSON decode error");
        return;
    }
    json_object *action = json_get(body, "action");
    if (!action) {
        json_object_put(body);
        invalid_params(r, "missing", "Field required");
        return;
    }
    if (!json_object_is_type(action, json_type_object)) {
        json_object_put(body);
        invalid_params(r, "dict_type", "Input should be a valid dictionary");
        return;
    }
    double t = json_get_double(action, "timeout", RT_ACTION_TIMEOUT_DEFAULT);
    int wait_s = (t > 0 && t < API_WAIT_MAX_S ? (int)t : API_WAIT_MAX_S - RT_WAIT_MARGIN_S) +
                 RT_WAIT_MARGIN_S;
    if (wait_s > API_WAIT_MAX_S)
        wait_s = API_WAIT_MAX_S;
    touch(r, sid);
    /* Upstream decodes the action before running it: what it cannot decode never runs. */
    char *why = oh_action_decode_error(action);
    if (why) {
        json_object_put(body);
        size_t n = strlen(why) + sizeof "Internal server error: ";
        char *detail = xmalloc(n);
        snprintf(detail, n, "Internal server error: %s", why);
        api_fail_text(r, ERR_INTERNAL, detail);
        free(detail);
        free(why);
        return;
    }
    api_err_t e;
    api_action_run_t run = {.gw = gw, .sid = sid, .action = action, .timeout_ms = wait_s * 1000};
    json_object *ev = api_action_run(r, &run, &e);
    json_object_put(body);
    if (!ev && !run.queued) {
        if (e.code == ERR_GATEWAY_DOWN)
            api_failf(r, ERR_GATEWAY_DOWN, "Runtime disconnected: its gateway is not running");
        else if (e.code == ERR_SESSION_ENDED)
            api_failf(r, ERR_NOT_FOUND, "Not Found");
        else if (api_gw_refused(&e) && api_err_status(API_REST, e.code) == 409)
            api_failf(r, ERR_UNAVAILABLE, "%s", e.msg); /* busy: upstream's 503 */
        else if (api_gw_refused(&e))
            api_failf(r, ERR_INTERNAL, "Internal server error: %.376s", e.msg);
        else
            api_failf(r, e.code == ERR_TIMEOUT ? ERR_TIMEOUT : ERR_UNAVAILABLE,
                      "Runtime did not answer");
        return;
    }
    touch(r, sid);
    json_object *obs = json_get(ev, "observation");
    if (obs && jupyter_missing(obs))
        /* upstream raises RuntimeError there, which its route turns into a 500 whose detail is
         * the traceback (its frames are upstream's own files: left out) */
        api_fail_text(r, ERR_INTERNAL, PLUGIN_JUPYTER_MISSING_DETAIL);
    else if (obs)
        api_reply_json(r, 200, json_object_get(obs));
    else if (!ev && e.code == ERR_SESSION_ENDED)
        api_failf(r, ERR_NOT_FOUND, "Not Found");
    else if (!ev && e.code == ERR_UNAVAILABLE)
        api_failf(r, ERR_UNAVAILABLE, "Runtime did not answer in time");
    else
        api_failf(r, ERR_TIMEOUT, "Runtime did not answer in time");
    json_object_put(ev);
}

void
api_rt_list_files(api_req_t *r, char **params)
{
    char gw[128];
    json_object *s = rt_session_authed(r, params[0], gw, sizeof gw, false, true);
    if (!s)
        return;
    json_object_put(s);
    err_t perr = {0};
    json_object *body =
        r->body_len ? json_parse(r->body, r->body_len, &perr) : json_object_new_object();
    if (!body || !json_object_is_type(body, json_type_object)) {
        json_object_put(body);
        invalid_params(r, "json_invalid", "JSON decode error");
        return;
    }
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "oh.list_files");
    json_set_str(req, "session", params[0]);
    json_object *path = json_get(body, "path");
    if (path && json_object_is_type(path, json_type_string))
        json_set_str(req, "path", json_object_get_string(path));
    json_object_put(body);
    api_err_t e;
    json_object *res = api_gw_ask(r, gw, req, g_api.gw_timeout, &e);
    json_object_put(req);
    if (res) {
        json_object *files = json_get(res, "files");
        api_reply_json(r, 200, files ? json_object_get(files) : json_object_new_array());
        json_object_put(res);
    } else {
        api_failf(r, ERR_INTERNAL, "Error listing files: %.378s",
                  api_gw_refused(&e) ? e.msg : "the runtime did not answer");
    }
}

void
api_rt_vscode_token(api_req_t *r, char **params)
{
    char gw[128];
    json_object *s = rt_session_authed(r, params[0], gw, sizeof gw, false, true);
    if (!s)
        return;
    json_object_put(s);
    json_object *o = json_object_new_object();
    json_set(o, "token", NULL);
    api_reply_json(r, 200, o);
}

/* For the file routes (action_server_upload.c): rt_session_authed. */
json_object *
api_rt_session_authed(api_req_t *r, char *sid, char *gw, size_t cap, bool write)
{
    return rt_session_authed(r, sid, gw, cap, write, true);
}
