/* api_runtime.c — each session as an OpenHands action-execution server at /runtime/{id}/:
 * alive, server_info (no key), execute_action, list_files, vscode/connection_token (header
 * X-Session-API-Key: a sandpipe token valid for that session). Bodies and status codes are
 * upstream's (FastAPI: {"detail": ...}); see shared/OPENHANDS-COMPAT.md. The observation is
 * returned exactly as the executor built it (the "observation" of its observation event).
 * idle_time is kept in sp:session:{ID}:runtime (field last_execute), reset by execute_action only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "api.h"
#include "api_auth.h"
#include "api_redis.h"
#include "json_util.h"

#define RT_ACTION_TIMEOUT_DEFAULT 120.0
#define RT_WAIT_MARGIN_S          30

static double
wall(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* A float as Python prints small ones: at least one decimal ("0.0", "12.5"). */
static json_object *
py_float(double v)
{
    char s[64];
    snprintf(s, sizeof s, "%.6f", v);
    char *end = s + strlen(s) - 1;
    while (end > s && *end == '0' && end[-1] != '.')
        *end-- = '\0';
    return json_object_new_double_s(v, s);
}

/* The session record for sid, whatever the caller's rights (routing only). Replies and returns
 * NULL for unknown/stopped (404), paused (503), broken or gateway gone (502), Redis down (503). */
static json_object *
rt_session(api_req_t *r, const char *sid, char *gw, size_t cap)
{
    if (!*sid || strlen(sid) > 100 || strpbrk(sid, "{}\r\n ")) {
        api_detail(r, 404, "Not Found");
        return NULL;
    }
    if (!api_redis_get(r, false)) {
        api_detail(r, 503, "Service Unavailable: Redis is not reachable");
        return NULL;
    }
    redisReply *h = api_redis_cmdf(r, "HGETALL sp:session:{%s}", sid);
    if (!h || h->type != REDIS_REPLY_ARRAY) {
        if (h)
            freeReplyObject(h);
        api_detail(r, 503, "Service Unavailable: Redis is not reachable");
        return NULL;
    }
    if (h->elements == 0) {
        freeReplyObject(h);
        api_detail(r, 404, "Not Found");
        return NULL;
    }
    json_object *s = api_session_from_hash(h);
    freeReplyObject(h);
    const char *st = json_get_str(s, "status", "");
    snprintf(gw, cap, "%s", json_get_str(s, "gateway", ""));
    int code = 0;
    const char *detail = NULL;
    if (!strcmp(st, "STOPPED")) {
        code = 404, detail = "Not Found";
    } else if (!strcmp(st, "PAUSED")) {
        code = 503, detail = "Runtime is paused";
    } else if (!strcmp(st, "ERROR") || !strcmp(st, "ERROR_RUNTIME_DISCONNECTED")) {
        code = 502, detail = "Runtime disconnected";
    } else {
        int alive = api_gateway_alive(r, gw);
        if (alive < 0)
            code = 503, detail = "Service Unavailable: Redis is not reachable";
        else if (!alive)
            code = 502, detail = "Runtime disconnected: its gateway is not running";
    }
    if (code) {
        json_object_put(s);
        api_detail(r, code, detail);
        return NULL;
    }
    return s;
}

/* rt_session plus the X-Session-API-Key check. */
static json_object *
rt_session_authed(api_req_t *r, const char *sid, char *gw, size_t cap, bool write)
{
    json_object *s = rt_session(r, sid, gw, cap);
    if (!s)
        return NULL;
    if (api_auth_session_key(r, api_param(r, "HTTP_X_SESSION_API_KEY"), sid,
                             json_get_str(s, "owner", ""), write) < 0) {
        json_object_put(s);
        api_detail(r, 403, "Invalid API Key");
        return NULL;
    }
    return s;
}

static void
touch(api_req_t *r, const char *sid)
{
    redisReply *x = api_redis_cmdf(r, "HSET sp:session:{%s}:runtime last_execute %f", sid, wall());
    if (x)
        freeReplyObject(x);
}

void
api_rt_alive(api_req_t *r, char **params)
{
    char gw[128];
    json_object *s = rt_session(r, params[0], gw, sizeof gw);
    if (!s)
        return;
    json_object *o = json_object_new_object();
    json_set_str(o, "status",
                 strcmp(json_get_str(s, "status", ""), "READY") ? "not initialized" : "ok");
    json_object_put(s);
    api_reply_json(r, 200, o);
}

void
api_rt_server_info(api_req_t *r, char **params)
{
    char gw[128];
    json_object *s = rt_session(r, params[0], gw, sizeof gw);
    if (!s)
        return;
    double now = wall(), created = json_get_double(s, "created", now), last = created;
    json_object_put(s);
    redisReply *x = api_redis_cmdf(r, "HGET sp:session:{%s}:runtime last_execute", params[0]);
    if (x && x->type == REDIS_REPLY_STRING)
        last = atof(x->str);
    if (x)
        freeReplyObject(x);
    json_object *o = json_object_new_object();
    json_set(o, "uptime", py_float(now > created ? now - created : 0.0));
    json_set(o, "idle_time", py_float(now > last ? now - last : 0.0));
    /* Upstream's get_system_stats() shape. The gateway inbox has no health op yet, so the
     * sandbox's numbers are not available here: zeros, with upstream's types. */
    json_object *res = json_object_new_object(), *mem = json_object_new_object(),
                *disk = json_object_new_object(), *io = json_object_new_object();
    json_set(res, "cpu_percent", py_float(0.0));
    json_set_int(mem, "rss", 0);
    json_set_int(mem, "vms", 0);
    json_set(mem, "percent", py_float(0.0));
    json_set_int(disk, "total", 0);
    json_set_int(disk, "used", 0);
    json_set_int(disk, "free", 0);
    json_set(disk, "percent", py_float(0.0));
    json_set_int(io, "read_bytes", 0);
    json_set_int(io, "write_bytes", 0);
    json_set(res, "memory", mem);
    json_set(res, "disk", disk);
    json_set(res, "io", io);
    json_set(o, "resources", res);
    api_reply_json(r, 200, o);
}

static void
invalid_params(api_req_t *r, const char *type, const char *msg)
{
    json_object *o = json_object_new_object(), *errs = json_object_new_array(),
                *e = json_object_new_object(), *loc = json_object_new_array();
    json_object_array_add(loc, json_object_new_string("body"));
    if (!strcmp(type, "missing"))
        json_object_array_add(loc, json_object_new_string("action"));
    json_set_str(e, "type", type);
    json_set(e, "loc", loc);
    json_set_str(e, "msg", msg);
    json_object_array_add(errs, e);
    json_set_str(o, "detail", "Invalid request parameters");
    json_set(o, "errors", errs);
    api_reply_json(r, 422, o);
}

void
api_rt_execute_action(api_req_t *r, char **params)
{
    const char *sid = params[0];
    char gw[128];
    json_object *s = rt_session_authed(r, sid, gw, sizeof gw, true);
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
    json_object *res, *err;
    int rc = api_action_submit(r, gw, sid, action, &res, &err);
    json_object_put(body);
    if (rc != API_GW_OK) {
        char d[400];
        if (rc == API_GW_ERROR && api_gw_status(json_get_str(err, "code", "")) == 409)
            api_detail(r, 503, json_get_str(err, "message", "busy"));
        else if (rc == API_GW_ERROR) {
            snprintf(d, sizeof d, "Internal server error: %s", json_get_str(err, "message", "?"));
            api_detail(r, 500, d);
        } else
            api_detail(r, rc == API_GW_TIMEOUT ? 504 : 503, "Runtime did not answer");
        json_object_put(err);
        return;
    }
    uint64_t seq = (uint64_t)json_get_int(res, "seq", 0);
    json_object_put(res);
    const char *why = "";
    json_object *ev = api_wait_observation(r, sid, seq, wait_s * 1000, &why);
    touch(r, sid);
    json_object *obs = json_get(ev, "observation");
    if (obs) {
        api_reply_json(r, 200, json_object_get(obs));
    } else if (!strcmp(why, "ended")) {
        api_detail(r, 404, "Not Found");
    } else {
        api_detail(r, !strcmp(why, "redis") ? 503 : 504, "Runtime did not answer in time");
    }
    json_object_put(ev);
}

void
api_rt_list_files(api_req_t *r, char **params)
{
    char gw[128];
    json_object *s = rt_session_authed(r, params[0], gw, sizeof gw, false);
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
    json_object *res, *err;
    int rc = api_gw_call(r, gw, req, g_api.gw_timeout, &res, &err);
    json_object_put(req);
    if (rc == API_GW_OK) {
        json_object *files = json_get(res, "files");
        api_reply_json(r, 200, files ? json_object_get(files) : json_object_new_array());
        json_object_put(res);
    } else {
        char d[400];
        snprintf(d, sizeof d, "Error listing files: %s",
                 rc == API_GW_ERROR ? json_get_str(err, "message", "?")
                                    : "the runtime did not answer");
        api_detail(r, 500, d);
        json_object_put(err);
    }
}

void
api_rt_vscode_token(api_req_t *r, char **params)
{
    char gw[128];
    json_object *s = rt_session_authed(r, params[0], gw, sizeof gw, false);
    if (!s)
        return;
    json_object_put(s);
    json_object *o = json_object_new_object();
    json_set(o, "token", NULL);
    api_reply_json(r, 200, o);
}

void
api_rt_unsupported(api_req_t *r, char **params)
{
    char gw[128];
    json_object *s = rt_session_authed(r, params[0], gw, sizeof gw, true);
    if (!s)
        return;
    json_object_put(s);
    api_detail(r, 501,
               "Not implemented in sandpipe yet: use the REST files API "
               "(/api/v1/sessions/{id}/files)");
}
