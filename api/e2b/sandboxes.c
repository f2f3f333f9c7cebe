/* sandboxes.c — E2B's sandbox lifecycle on sandpipe sessions: create (POST /sandboxes and
 * /v2/sandboxes), getInfo, kill, setTimeout, pause and connect (v1 and v2; it resumes). See
 * e2b.h. */
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "clock.h"
#include "e2b.h"
#include "envd_token.h"
#include "preview_token.h"
#include "json_util.h"
#include "redis.h"

/* r's body as an object ({} when empty); NULL after a 400 reply. */
static json_object *
body_object(api_req_t *r)
{
    return r->body_len ? api_body_object(r) : json_object_new_object();
}

/* Field f of body as an object of strings (NULL: absent); -1 after a 400 reply. */
static int
string_map(api_req_t *r, json_object *body, const char *f, json_object **out)
{
    json_object *m = json_get(body, f);
    *out = NULL;
    if (!m || json_object_is_type(m, json_type_null))
        return 0;
    if (!json_object_is_type(m, json_type_object)) {
        api_failf(r, ERR_BAD_REQ, "%s must be an object of strings", f);
        return -1;
    }
    json_object_object_foreach(m, k, v)
    {
        (void)k;
        if (!json_object_is_type(v, json_type_string)) {
            api_failf(r, ERR_BAD_REQ, "%s must be an object of strings", f);
            return -1;
        }
    }
    *out = m;
    return 0;
}

/* Field "timeout" of body in seconds, def when absent; -1 after a 400 reply. */
static long long
timeout_field(api_req_t *r, json_object *body, long long def)
{
    json_object *t = json_get(body, "timeout");
    if (!t)
        return def;
    if (!json_object_is_type(t, json_type_int) || json_object_get_int64(t) < 0 ||
        json_object_get_int64(t) > E2B_TIMEOUT_MAX) {
        api_failf(r, ERR_BAD_REQ, "timeout must be whole seconds from 0 to %d", E2B_TIMEOUT_MAX);
        return -1;
    }
    return json_object_get_int64(t);
}

/* Why a create asking for something sandpipe does not do is refused (NULL: nothing such): a
 * caller counting on it would be fooled by a sandbox made without it. */
static const char *
unserved_field(json_object *body)
{
    json_object *v;
    if ((v = json_get(body, "volumeMounts")) && json_object_is_type(v, json_type_array) &&
        json_object_array_length(v) > 0)
        return "volumeMounts are not supported by sandpipe: a sandbox has its own disk only";
    if ((v = json_get(body, "mcp")) && !json_object_is_type(v, json_type_null))
        return "mcp is not supported by sandpipe: its template has no mcp-gateway";
    if ((v = json_get(body, "iam")) && !json_object_is_type(v, json_type_null))
        return "iam (workload identity tokens) is not supported by sandpipe";
    return NULL;
}

/* E2B's lifecycle (autoPause: onTimeout 'pause'; autoResume {enabled}) as the session's
 * lifetime_action and auto_resume (session_lifecycle.c) in p: 0, or -1 after a 400 reply. An
 * auto-resumed sandbox lives max(5 minutes, its timeout) from the resume, as E2B's. Memory is
 * always kept (a frozen cgroup), so autoPauseMemory false asks for less than it gets. */
static int
lifecycle_params(api_req_t *r, json_object *body, long long timeout, json_object *p)
{
    bool pause = json_get_bool(body, "autoPause", false);
    bool resume = json_get_bool(json_get(body, "autoResume"), "enabled", false);
    if (resume && !pause) {
        api_failf(r, ERR_BAD_REQ, "autoResume can only be enabled when onTimeout is 'pause'");
        return -1;
    }
    if (resume && !json_get_bool(body, "autoPauseMemory", true)) {
        api_failf(r, ERR_BAD_REQ,
                  "autoResume needs a pause that keeps memory "
                  "(autoPauseMemory false: resume with connect())");
        return -1;
    }
    if (pause)
        json_set_str(p, "lifetime_action", "pause");
    if (resume)
        json_set_int(p, "auto_resume",
                     timeout > E2B_AUTO_RESUME_MIN ? timeout : E2B_AUTO_RESUME_MIN);
    return 0;
}

/* The domain of a sandbox's host names as the SDK builds them (getHost(port) is
 * "<port>-<id>.<domain>"): the preview origin's "{port}-{session}.DOMAIN[:N]" when nginx serves
 * one (render.sh --preview-domain), so a host the SDK names is the port's preview; else null
 * (the SDK's own default). */
static json_object *
sandbox_domain(api_req_t *r)
{
    const char *origin = api_param(r, "SP_PREVIEW_ORIGIN");
    const char *at = origin ? strstr(origin, "{port}-{session}.") : NULL;
    if (!at || !at[17])
        return NULL;
    return json_object_new_string(at + 17);
}

/* E2B's Sandbox (what create and connect answer) of a loaded sandbox (new ref): with the
 * sandbox's envdAccessToken (envd_token.h), which its envd routes require. */
static json_object *
sandbox_answer(api_req_t *r, json_object *s)
{
    json_object *d = e2b_detail(s), *o = json_object_new_object();
    static const char *const keep[] = {"sandboxID", "templateID", "alias", "clientID",
                                       "envdVersion"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        json_set(o, keep[i], json_object_get(json_get(d, keep[i])));
    char tok[ENVD_TOKEN_LEN + 1];
    if (envd_token_make(g_api.secret, g_api.secret_len, json_get_str(d, "sandboxID", ""), tok) == 0)
        json_set_str(o, "envdAccessToken", tok);
    /* E2B's trafficAccessToken, the credential a client sends in e2b-traffic-access-token to
     * reach a port through getHost(port): here the owner's preview token (every port of the
     * sandbox), valid as long as the longest sandbox; connect answers a fresh one. */
    uint8_t key[32];
    char ptok[PREVIEW_TOKEN_MAX];
    if (preview_key_derive(g_api.secret, g_api.secret_len, key) == 0 &&
        preview_token_mint(key, json_get_str(d, "sandboxID", ""), PREVIEW_KIND_OWNER, 0,
                           (int64_t)time(NULL) + E2B_TIMEOUT_MAX, ptok, sizeof ptok) == 0)
        json_set_str(o, "trafficAccessToken", ptok);
    json_set(o, "domain", sandbox_domain(r));
    json_object_put(d);
    return o;
}

void
api_e2b_create(api_req_t *r, char **params)
{
    (void)params;
    if (e2b_auth(r, true) < 0)
        return;
    json_object *body = body_object(r), *metadata, *env_vars;
    if (!body)
        return;
    json_object *tmpl_j = json_get(body, "templateID");
    const char *tmpl = tmpl_j && json_object_is_type(tmpl_j, json_type_string)
                           ? json_object_get_string(tmpl_j)
                           : E2B_DEFAULT_TEMPLATE;
    long long timeout = timeout_field(r, body, E2B_TIMEOUT_DEFAULT);
    if ((tmpl_j && !json_object_is_type(tmpl_j, json_type_string) &&
         (api_failf(r, ERR_BAD_REQ, "templateID must be a string"), 1)) ||
        timeout < 0 || string_map(r, body, "metadata", &metadata) < 0 ||
        string_map(r, body, "envVars", &env_vars) < 0) {
        json_object_put(body);
        return;
    }
    const char *unserved = unserved_field(body);
    if (unserved) {
        json_object_put(body);
        api_failf(r, ERR_NOT_IMPLEMENTED, "%s", unserved);
        return;
    }
    /* its network: E2B's rules as a sandpipe policy (NULL: the operator's default), which the
     * gateway checks against the key's role and its network service */
    json_object *network;
    api_err_t e;
    /* The v1 path's clients (E2B's Python SDK, JS before 2.46) send allow_internet_access: true
     * on every create, asked or not: there true is no request, the operator's default applies.
     * v2's send it only when their caller set it. */
    json_object *internet = json_get(body, "allow_internet_access");
    bool v1 = !strstr(r->path, "/v2/");
    if (v1 && internet && json_object_is_type(internet, json_type_boolean) &&
        json_object_get_boolean(internet))
        internet = NULL;
    if (e2b_network_policy(json_get(body, "network"), internet, false, &network, &e) < 0) {
        json_object_put(body);
        api_fail(r, &e);
        return;
    }
    if (!api_redis_get(r, true)) {
        json_object_put(network);
        json_object_put(body);
        return;
    }
    /* The session: "base" is the default image, another template a runtime image of that name
     * (the gateway refuses one it does not have); E2B's timeout is its only deadline. */
    json_object *p = json_object_new_object();
    if (strcmp(tmpl, E2B_DEFAULT_TEMPLATE) != 0)
        json_set_str(p, "image", tmpl);
    if (env_vars)
        json_set(p, "env", json_object_get(env_vars));
    json_set_int(p, "max_lifetime", timeout > 0 ? timeout : 1);
    json_set_int(p, "idle_timeout", 0);
    if (lifecycle_params(r, body, timeout, p) < 0) {
        json_object_put(p);
        json_object_put(network);
        json_object_put(body);
        return;
    }
    if (network)
        json_set(p, "network", network);
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "session.create");
    json_set(req, "params", p);
    api_gw_call_t c = {.req = req, .timeout_s = g_api.gw_timeout};
    json_object *res = api_gateway_create(r, &c, &e);
    json_object_put(req);
    if (!res) {
        json_object_put(body);
        api_fail(r, &e);
        return;
    }
    const char *sid = json_get_str(res, "id", "");
    json_object *empty = json_object_new_object();
    if (e2b_sandbox_save(r, sid, json_get_double(res, "created", clock_wall()), tmpl,
                         metadata ? metadata : empty, env_vars ? env_vars : empty, &e) < 0) {
        api_fail(r, &e);
    } else {
        api_metric_incr(r, "sessions_created", 1);
        json_set_str(res, "e2b_template", tmpl);
        api_reply_json(r, 201, sandbox_answer(r, res));
    }
    json_object_put(empty);
    json_object_put(res);
    json_object_put(body);
}

/* The sandbox sid as r may see it (new ref), or NULL once r was answered with why not. */
static json_object *
load_or_fail(api_req_t *r, const char *sid)
{
    api_err_t e;
    json_object *s = e2b_sandbox_load(r, sid, &e);
    if (!s)
        api_fail(r, &e);
    return s;
}

void
api_e2b_get(api_req_t *r, char **params)
{
    if (e2b_auth(r, false) < 0)
        return;
    json_object *s = load_or_fail(r, params[0]);
    if (!s)
        return;
    api_reply_json(r, 200, e2b_detail(s));
    json_object_put(s);
}

json_object *
e2b_gateway_op(api_req_t *r, const char *sid, const char *op, json_object *extra, json_object **s)
{
    api_err_t e;
    char gw[128];
    json_object *sb = e2b_sandbox_load(r, sid, &e);
    if (!sb || api_session_gateway_for_write(r, sid, gw, sizeof gw, &e) < 0) {
        json_object_put(sb);
        json_object_put(extra);
        api_fail(r, &e);
        return NULL;
    }
    json_object *req = extra ? extra : json_object_new_object();
    json_set_str(req, "op", op);
    json_set_str(req, "session", sid);
    json_object *res = api_gw_ask(r, gw, req, g_api.gw_timeout, &e);
    json_object_put(req);
    if (!res)
        api_fail(r, &e);
    if (s && res)
        *s = sb;
    else
        json_object_put(sb);
    return res;
}

/* The session's max_lifetime set to seconds (0: none) by its gateway, and its lifetime_action
 * to action unless NULL: true, or false once it answered r with why not. */
static bool
set_lifetime_action(api_req_t *r, const char *sid, long long seconds, const char *action)
{
    json_object *extra = json_object_new_object();
    json_set_int(extra, "max_lifetime", seconds);
    if (action)
        json_set_str(extra, "lifetime_action", action);
    json_object *res = e2b_gateway_op(r, sid, "session.set_lifetime", extra, NULL);
    if (!res)
        return false;
    json_object_put(res);
    return true;
}

static bool
set_lifetime(api_req_t *r, const char *sid, long long seconds)
{
    return set_lifetime_action(r, sid, seconds, NULL);
}

void
api_e2b_kill(api_req_t *r, char **params)
{
    if (e2b_auth(r, true) < 0)
        return;
    json_object *res = e2b_gateway_op(r, params[0], "session.delete", NULL, NULL);
    if (!res)
        return;
    json_object_put(res);
    e2b_sandbox_forget(r, params[0]);
    api_reply_raw(r, 204, "application/json", "", 0);
}

/* max_lifetime (seconds from the sandbox's creation) for an end timeout seconds from now. */
static long long
lifetime_until(json_object *s, long long timeout)
{
    double since = clock_wall() - json_get_double(s, "created", clock_wall());
    double end = since + (double)timeout;
    long long life = (long long)end;
    if ((double)life < end) /* rounded up: the end is never before what was asked */
        life++;
    return life > 0 ? life : 1; /* 0 would mean no end */
}

void
api_e2b_set_timeout(api_req_t *r, char **params)
{
    if (e2b_auth(r, true) < 0)
        return;
    json_object *body = body_object(r);
    if (!body)
        return;
    long long timeout = json_get(body, "timeout") ? timeout_field(r, body, 0) : -2;
    json_object_put(body);
    if (timeout == -2)
        api_failf(r, ERR_BAD_REQ, "timeout is required");
    if (timeout < 0)
        return;
    json_object *s = load_or_fail(r, params[0]);
    if (!s)
        return;
    long long life = lifetime_until(s, timeout);
    json_object_put(s);
    if (set_lifetime(r, params[0], life))
        api_reply_raw(r, 204, "application/json", "", 0);
}

void
api_e2b_pause(api_req_t *r, char **params)
{
    if (e2b_auth(r, true) < 0)
        return;
    json_object *s = load_or_fail(r, params[0]);
    if (!s)
        return;
    bool paused = !strcmp(e2b_state(s), "paused");
    json_object_put(s);
    if (paused) { /* 409: the SDK's pause() answers false */
        api_failf(r, ERR_CONFLICT, "Sandbox %.100s is already paused", params[0]);
        return;
    }
    /* session.pause freezes it; a paused E2B sandbox has no end until connect resumes it */
    json_object *res = e2b_gateway_op(r, params[0], "session.pause", NULL, NULL);
    if (!res)
        return;
    json_object_put(res);
    if (set_lifetime(r, params[0], 0))
        api_reply_raw(r, 204, "application/json", "", 0);
}

/* Resumes sid (loaded as s, paused) and gives it an end timeout seconds from now, which pauses
 * it again when action is "pause" (NULL: the action it has): true, or false once r was
 * answered with why not. */
static bool
resume(api_req_t *r, const char *sid, json_object *s, long long timeout, const char *action)
{
    json_object *res = e2b_gateway_op(r, sid, "session.resume", NULL, NULL);
    if (!res)
        return false;
    json_object_put(res);
    return set_lifetime_action(r, sid, lifetime_until(s, timeout), action);
}

/* Moves a running sandbox's end to timeout seconds from now unless it is later already (E2B's
 * "TTL is only extended"; a sandbox with no end gets one): true, or false once r was answered. */
static bool
extend(api_req_t *r, const char *sid, json_object *s, long long timeout)
{
    long long life = lifetime_until(s, timeout), had = json_get_int(s, "max_lifetime", 0);
    return (had != 0 && life <= had) || set_lifetime(r, sid, life);
}

void
api_e2b_connect(api_req_t *r, char **params)
{
    if (e2b_auth(r, true) < 0)
        return;
    json_object *body = body_object(r);
    if (!body)
        return;
    long long timeout = timeout_field(r, body, E2B_TIMEOUT_DEFAULT);
    json_object_put(body);
    if (timeout < 0)
        return;
    json_object *s = load_or_fail(r, params[0]);
    if (!s)
        return;
    /* connect resumes a paused sandbox (201, its end now + timeout), extends a running one */
    bool paused = !strcmp(e2b_state(s), "paused");
    if (paused ? resume(r, params[0], s, timeout, NULL) : extend(r, params[0], s, timeout))
        api_reply_json(r, paused ? 201 : 200, sandbox_answer(r, s));
    json_object_put(s);
}

/* POST /sandboxes/{id}/resume {timeout?, autoPause?}: the deprecated resume, connect's resuming
 * half: 201 with the sandbox, its end timeout seconds on (E2B's default here: 15), where it is
 * paused again with autoPause true, ends with false (absent: as before); 409 when it runs. */
void
api_e2b_resume(api_req_t *r, char **params)
{
    if (e2b_auth(r, true) < 0)
        return;
    json_object *body = body_object(r);
    if (!body)
        return;
    long long timeout = timeout_field(r, body, E2B_RESUME_TIMEOUT_DEFAULT);
    /* autoPause given: what this run's timeout does (absent: what the sandbox had) */
    json_object *ap = json_get(body, "autoPause");
    const char *action = !ap || json_object_is_type(ap, json_type_null) ? NULL
                         : json_get_bool(body, "autoPause", false)      ? "pause"
                                                                        : "stop";
    json_object_put(body);
    if (timeout < 0)
        return;
    json_object *s = load_or_fail(r, params[0]);
    if (!s)
        return;
    if (strcmp(e2b_state(s), "paused") != 0)
        api_failf(r, ERR_CONFLICT, "Sandbox %.100s is already running", params[0]);
    else if (resume(r, params[0], s, timeout, action))
        api_reply_json(r, 201, sandbox_answer(r, s));
    json_object_put(s);
}

/* POST /sandboxes/{id}/refreshes {duration?}: keeps a running sandbox alive duration seconds
 * (at least E2B's 15, the default) from now; its end only ever moves later. 204. */
void
api_e2b_refresh(api_req_t *r, char **params)
{
    if (e2b_auth(r, true) < 0)
        return;
    json_object *body = body_object(r);
    if (!body)
        return;
    json_object *d = json_get(body, "duration");
    long long duration = E2B_RESUME_TIMEOUT_DEFAULT;
    bool bad = d && !json_object_is_type(d, json_type_null) &&
               (!json_object_is_type(d, json_type_int) || json_object_get_int64(d) < 0 ||
                json_object_get_int64(d) > E2B_TIMEOUT_MAX);
    if (d && !bad && json_object_is_type(d, json_type_int) && json_object_get_int64(d) > duration)
        duration = json_object_get_int64(d);
    json_object_put(body);
    if (bad) {
        api_failf(r, ERR_BAD_REQ, "duration must be whole seconds from 0 to %d", E2B_TIMEOUT_MAX);
        return;
    }
    json_object *s = load_or_fail(r, params[0]);
    if (!s)
        return;
    if (!strcmp(e2b_state(s), "paused")) /* it has no end while paused: connect() resumes it */
        api_failf(r, ERR_CONFLICT, "Sandbox %.100s is paused: connect() resumes it", params[0]);
    else if (extend(r, params[0], s, duration))
        api_reply_raw(r, 204, "application/json", "", 0);
    json_object_put(s);
}
