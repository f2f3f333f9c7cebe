/* http_actions.c — an action and its observation over HTTP (http_actions.h). The request waits
 * in the gateway's memory, not in Redis: ops.c's "action" with an HTTP transport answers twice
 * (queued: its number; then the observation event as stored), a timer bounds the wait. Who may
 * do what: the token checked here (as sandpipe-api did, with its texts), then ops_dispatch's own
 * check. A request whose client went away is forgotten: late answers find no request (http_find)
 * and are dropped; the action itself runs on, as it would have for any client. */
#include "http_actions.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#include "action_decode.h"
#include "err_http.h"
#include "gw.h"
#include "http_rest.h"
#include "http_rt.h"
#include "json_util.h"
#include "jwt_cache.h"
#include "ops.h"
#include "plugin_texts.h"
#include "redis_client.h"
#include "route.h"
#include "session.h"
#include "xalloc.h"

#define RT_ACTION_TIMEOUT_DEFAULT 120.0 /* upstream's default action timeout */
#define RT_WAIT_MARGIN_S          30
#define WAIT_MAX_S                600 /* API_WAIT_MAX_S */

/* One request's action, from its route to its answer. Freed with the request (free_ud): its
 * timer closes first. */
typedef struct {
    uv_timer_t timer;
    bool timer_on;
    uint64_t req;
    bool rest; /* REST's answers, else the action server's */
    bool wait;
    bool queued;
    uint64_t seq;
    int timeout_s;
    json_object *action; /* the action as sent (owned) */
    jwt_claims_t claims;
    char id[128];  /* the session (or runtime) the path names */
    char sid[128]; /* the session */
} pending_t;

static void
on_closed(uv_handle_t *t)
{
    free(t->data);
}

static void
pending_free(void *ud)
{
    pending_t *p = ud;
    json_object_put(p->action);
    p->action = NULL;
    if (!p->timer_on) {
        free(p);
        return;
    }
    uv_timer_stop(&p->timer);
    uv_close((uv_handle_t *)&p->timer, on_closed);
}

/* ---- the HTTP transport of ops.c ---- */

static void
answer_ok(const ops_reply_t *to, json_object *result)
{
    http_req_t *h = http_find(to->conn);
    pending_t *p = h ? h->ud : NULL;
    if (p) {
        p->queued = true;
        p->seq = (uint64_t)json_get_int(result, "seq", 0);
        if (!p->wait) {
            http_answer_json(h, 202, result);
            return;
        }
    }
    json_object_put(result);
}

static void
answer_fail(const ops_reply_t *to, json_object *error)
{
    http_req_t *h = http_find(to->conn);
    pending_t *p = h ? h->ud : NULL;
    if (!p) {
        json_object_put(error);
        return;
    }
    int code = err_from_gateway_name(json_get_str(error, "code", "internal"));
    const char *msg = json_get_str(error, "message", "the gateway failed");
    if (p->rest) {
        if (code == ERR_SESSION_ENDED && p->queued)
            http_rest_fail(h, code, "the session stopped before action %llu finished",
                           (unsigned long long)p->seq);
        else if (code == ERR_SESSION_ENDED)
            http_rest_fail(h, code, "the session stopped before the action finished");
        else
            http_rest_fail(h, code, "%s", msg);
    } else if (code == ERR_SESSION_ENDED) {
        http_rt_fail(h, ERR_NOT_FOUND, "Not Found");
    } else if (err_http_status(code, false) == 409) {
        http_rt_fail(h, ERR_UNAVAILABLE, msg); /* busy: upstream's 503 */
    } else {
        char d[400];
        snprintf(d, sizeof d, "Internal server error: %.376s", msg);
        http_rt_fail(h, ERR_INTERNAL, d);
    }
    json_object_put(error);
}

/* OpenHands' last_execution_time, at an action's start and end (session_mark_executed). */
static void
touch(const char *sid)
{
    gw_session_t *s = session_find(sid);
    if (s)
        session_mark_executed(s);
}

static void
answer_observed(const ops_reply_t *to, uint64_t seq, const char *event, size_t len)
{
    (void)seq;
    http_req_t *h = http_find(to->conn);
    pending_t *p = h ? h->ud : NULL;
    if (!p)
        return;
    if (p->rest) {
        http_answer(h, 200, NULL, event, len);
        return;
    }
    err_t err = {0};
    json_object *ev = json_parse(event, len, &err), *obs = json_get(ev, "observation");
    touch(p->sid);
    if (obs && !strcmp(json_get_str(obs, "observation", ""), "error") &&
        !strcmp(json_get_str(obs, "content", ""), PLUGIN_JUPYTER_MISSING))
        /* upstream raises RuntimeError there: its route's 500 (plugin_texts.h) */
        http_rt_fail(h, ERR_INTERNAL, PLUGIN_JUPYTER_MISSING_DETAIL);
    else if (obs)
        http_answer_json(h, 200, json_object_get(obs));
    else
        http_rt_fail(h, ERR_TIMEOUT, "Runtime did not answer in time");
    json_object_put(ev);
}

static const ops_transport_t http_transport = {
    .via = OPS_HTTP,
    .ok = answer_ok,
    .fail = answer_fail,
    .observed = answer_observed,
    .forbidden = "forbidden",
    .hides_refusals = false,
    .actor = "over HTTP",
    .unknown = &http_unknown_op, /* only "action" is dispatched here */
};

static void
on_timeout(uv_timer_t *t)
{
    pending_t *p = t->data;
    http_req_t *h = http_find(p->req);
    if (!h)
        return;
    if (!p->rest)
        http_rt_fail(h, ERR_TIMEOUT, "Runtime did not answer in time");
    else if (p->queued)
        http_rest_fail(h, ERR_TIMEOUT,
                       "action %llu is queued or running; no observation within %ds",
                       (unsigned long long)p->seq, p->timeout_s);
    else
        http_rest_fail(h, ERR_TIMEOUT, "the gateway did not answer in time");
}

/* Submits p's action on s as who, answered through the HTTP transport. */
static void
submit(http_req_t *h, pending_t *p, gw_session_t *s, const char *sub, const char *role,
       const char *viewer_session)
{
    if (p->wait) {
        uv_timer_init(g_gw.loop, &p->timer);
        p->timer.data = p;
        p->timer_on = true;
        uv_timer_start(&p->timer, on_timeout, (uint64_t)p->timeout_s * 1000, 0);
    }
    json_object *args = json_object_new_object();
    json_set_str(args, "session", session_id(s));
    json_set(args, "action", json_object_get(p->action));
    json_set_bool(args, "wait", p->wait);
    json_set_str(args, "via", p->rest ? "rest" : "runtime"); /* the action event records it */
    ops_reply_t to = {.via = &http_transport, .conn = h->id};
    ops_call_t c = {.op = "action",
                    .args = args,
                    .who = {.sub = sub, .role = role, .session = viewer_session},
                    .reply = &to};
    ops_dispatch(&c);
    json_object_put(args);
}

/* ---- POST /runtime/{id}/execute_action ---- */

static void
on_rt_route(void *ud, const route_t *r)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    pending_t *p = h->ud;
    jwt_claims_t *c = &p->claims;
    if (!http_rt_live(h, r) || !http_rt_authed(h, r, true, c))
        return;
    gw_session_t *s = http_rt_here(h, r);
    if (!s)
        return;
    err_t perr = {0};
    json_object *body = h->body_len ? json_parse(h->body, h->body_len, &perr) : NULL;
    if (!body && perr.code == EILSEQ) {
        /* FastAPI's answer: its json.loads fails decoding, not as a JSONDecodeError */
        http_rt_fail(h, ERR_BAD_REQ, "There was an error parsing the body");
        return;
    }
    if (!body || !json_object_is_type(body, json_type_object)) {
        json_object_put(body);
        http_rt_invalid(h, "json_invalid", "body", NULL, "JSON decode error");
        return;
    }
    json_object *action = json_get(body, "action");
    if (!action || !json_object_is_type(action, json_type_object)) {
        http_rt_invalid(h, action ? "dict_type" : "missing", "body", action ? NULL : "action",
                        action ? "Input should be a valid dictionary" : "Field required");
        json_object_put(body);
        return;
    }
    double t = json_get_double(action, "timeout", RT_ACTION_TIMEOUT_DEFAULT);
    int wait_s =
        (t > 0 && t < WAIT_MAX_S ? (int)t : WAIT_MAX_S - RT_WAIT_MARGIN_S) + RT_WAIT_MARGIN_S;
    p->timeout_s = wait_s > WAIT_MAX_S ? WAIT_MAX_S : wait_s;
    p->wait = true;
    touch(r->sid);
    /* Upstream decodes the action before running it: what it cannot decode never runs. */
    char *why = oh_action_decode_error(action);
    if (why) {
        size_t n = strlen(why) + sizeof "Internal server error: ";
        char *detail = xmalloc(n);
        snprintf(detail, n, "Internal server error: %s", why);
        http_rt_fail(h, ERR_INTERNAL, detail);
        free(detail);
        free(why);
        json_object_put(body);
        return;
    }
    p->action = json_object_get(action);
    snprintf(p->sid, sizeof p->sid, "%s", r->sid);
    json_object_put(body);
    submit(h, p, s, c->sub, c->role, c->session);
}

void
http_rt_execute_action(http_req_t *h, const char *id)
{
    pending_t *p = xcalloc(1, sizeof *p);
    p->req = h->id;
    snprintf(p->id, sizeof p->id, "%s", id);
    h->ud = p;
    h->free_ud = pending_free;
    if (h->body_too_big) {
        http_rt_fail(h, ERR_TOO_BIG, "Request body too large");
        return;
    }
    route_resolve(id, on_rt_route, (void *)(uintptr_t)h->id);
}

/* ---- POST /api/v1/sessions/{id}/actions ---- */

static void
on_rest_route(void *ud, const route_t *r)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    pending_t *p = h->ud;
    gw_session_t *s = http_rest_session(h, r, &p->claims, p->id, true);
    if (!s)
        return;
    submit(h, p, s, p->claims.sub, p->claims.role, p->claims.session);
}

void
http_rest_actions(http_req_t *h, const char *id)
{
    pending_t *p = xcalloc(1, sizeof *p);
    p->req = h->id;
    snprintf(p->id, sizeof p->id, "%s", id);
    p->rest = true;
    h->ud = p;
    h->free_ud = pending_free;
    if (h->body_too_big) {
        http_rest_fail(h, ERR_TOO_BIG, "request body over %u bytes", HTTP_BODY_MAX);
        return;
    }
    if (!http_rest_auth(h, &p->claims))
        return;
    json_object *body = http_rest_body(h);
    if (!body)
        return;
    /* Either the action itself ({"action":"run","args":{...}}) or a wrapper
     * ({"action":{...},"wait":true,"timeout":30}). */
    json_object *action = body, *a = json_get(body, "action");
    bool wait = http_arg_bool(h, "wait", false);
    if (a && json_object_is_type(a, json_type_object)) {
        action = a;
        json_object *w = json_get(body, "wait");
        if (w && !json_object_is_type(w, json_type_boolean)) {
            json_object_put(body);
            http_rest_fail(h, ERR_BAD_REQ, "wait must be a boolean");
            return;
        }
        wait = json_get_bool(body, "wait", wait);
    } else if (!a || !json_object_is_type(a, json_type_string) || !*json_object_get_string(a)) {
        json_object_put(body);
        http_rest_fail(
            h, ERR_BAD_REQ,
            "the body must be an OpenHands action: {\"action\": \"run\", \"args\": {...}}");
        return;
    }
    json_object *args = json_get(action, "args");
    if (args && !json_object_is_type(args, json_type_object)) {
        json_object_put(body);
        http_rest_fail(h, ERR_BAD_REQ, "args must be an object");
        return;
    }
    long long timeout = 120;
    const char *tv = http_arg(h, "timeout");
    if (tv) {
        char *end = NULL;
        errno = 0;
        timeout = *tv ? strtoll(tv, &end, 10) : 0;
        if (!*tv || errno || *end || timeout < 1 || timeout > WAIT_MAX_S) {
            json_object_put(body);
            http_rest_fail(h, ERR_BAD_REQ, "query parameter timeout must be an integer in [1, %d]",
                           WAIT_MAX_S);
            return;
        }
    }
    p->wait = wait;
    p->timeout_s = (int)timeout;
    p->action = json_object_get(action);
    json_object_put(body);
    route_resolve(id, on_rest_route, (void *)(uintptr_t)h->id);
}
