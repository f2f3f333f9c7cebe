/* actions.c — POST /api/v1/sessions/{id}/actions (queue an OpenHands action through the
 * owning gateway; with wait=true, block on the session's event stream until its observation)
 * and POST /api/v1/sessions/{id}/signal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "auth.h"
#include "gateway_client.h"
#include "redis.h"
#include "json_util.h"

#define WAIT_SLICE_MS 2000 /* one XREAD BLOCK at most: re-check the deadline between slices */

int
api_session_live(api_req_t *r, json_object *s, char *gw, size_t cap, api_err_t *e)
{
    const char *status = json_get_str(s, "status", "");
    if (!strcmp(status, "STOPPED"))
        return api_err_set(e, ERR_SESSION_ENDED, "the session has stopped");
    snprintf(gw, cap, "%s", json_get_str(s, "gateway", ""));
    int alive = api_gateway_alive(r, gw);
    if (alive < 0)
        return api_err_redis(e);
    if (alive == 0)
        return api_err_set(e, ERR_GATEWAY_DOWN, "the session's gateway %.100s is not running", gw);
    return 0;
}

int
api_session_gateway_for_write(api_req_t *r, const char *sid, char *gw, size_t cap, api_err_t *e)
{
    json_object *s = api_session_for_write(r, sid, e);
    int live = s ? api_session_live(r, s, gw, cap, e) : -1;
    json_object_put(s);
    return live;
}

/* Scans one XREAD reply for the observation of seq; updates last. */
static json_object *
scan(redisReply *x, uint64_t seq, char *last, size_t cap, bool *ended)
{
    if (!x || x->type != REDIS_REPLY_ARRAY || x->elements != 1)
        return NULL;
    redisReply *entries = x->element[0]->element[1];
    for (size_t i = 0; i < entries->elements; i++) {
        redisReply *e = entries->element[i];
        snprintf(last, cap, "%s", e->element[0]->str);
        redisReply *f = e->element[1];
        for (size_t k = 0; k + 1 < f->elements; k += 2) {
            const char *t = f->element[k + 1]->str;
            size_t len = f->element[k + 1]->len;
            /* Output floods are most of a stream: parse only what may be our answer. */
            bool obs = strstr(t, "\"observation\"") != NULL;
            bool stop = !obs && strstr(t, "\"STOPPED\"") != NULL;
            if (!obs && !stop)
                continue;
            err_t err = {0};
            json_object *ev = json_parse_lossy(t, len, &err);
            const char *type = json_get_str(ev, "type", "");
            if (!strcmp(type, "observation") && (uint64_t)json_get_int(ev, "action", 0) == seq)
                return ev;
            if (!strcmp(type, "status") && !strcmp(json_get_str(ev, "status", ""), "STOPPED"))
                *ended = true;
            json_object_put(ev);
        }
    }
    return NULL;
}

/* Waits (XREAD BLOCK on the session's stream, from 0-seq) for the observation event of the
 * action with sequence number seq, up to timeout_ms. Returns the event (new ref), or NULL with
 * e: ERR_TIMEOUT, ERR_UNAVAILABLE (Redis) or ERR_SESSION_ENDED (the session stopped first). */
static json_object *
wait_observation(api_req_t *r, const char *sid, uint64_t seq, int timeout_ms, api_err_t *e)
{
    char key[160], last[48];
    snprintf(key, sizeof key, "sp:session:{%s}:events", sid);
    snprintf(last, sizeof last, "0-%llu", (unsigned long long)seq);
    int64_t deadline = clock_mono_ms() + timeout_ms;
    bool ended = false;
    for (;;) {
        int64_t left = deadline - clock_mono_ms();
        if (left <= 0) {
            api_err_set(e, ERR_TIMEOUT, "no observation in time");
            return NULL;
        }
        char block[24];
        snprintf(block, sizeof block, "%lld",
                 (long long)(left < WAIT_SLICE_MS ? left : WAIT_SLICE_MS));
        const char *argv[] = {"XREAD", "COUNT", "256", "BLOCK", block, "STREAMS", key, last};
        redisReply *x = api_redis_cmd(r, WAIT_SLICE_MS + 5000, 8, argv);
        if (!x) {
            api_err_redis(e);
            return NULL;
        }
        json_object *ev = scan(x, seq, last, sizeof last, &ended);
        freeReplyObject(x);
        if (ev)
            return ev;
        if (ended) {
            api_err_set(e, ERR_SESSION_ENDED, "the session stopped first");
            return NULL;
        }
    }
}

/* The gateway request queuing action (borrowed) on session sid. "via" names the route it came
 * by (the OpenHands action server, /runtime/{id}/ and /rt-…/, or the REST API): the event
 * records it. */
static json_object *
action_request(const api_req_t *r, const char *sid, json_object *action)
{
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "action");
    json_set_str(req, "session", sid);
    json_set_str(req, "via", r->flavour == API_OH_ACTION_SERVER ? "runtime" : "rest");
    json_set(req, "action", json_object_get(action));
    return req;
}

/* Queues action (borrowed) on session sid through gateway gw: {"seq":S} (new ref; the
 * "actions" metric counted), or NULL with e (as api_gw_call). */
static json_object *
action_submit(api_req_t *r, const char *gw, const char *sid, json_object *action, api_err_t *e)
{
    json_object *req = action_request(r, sid, action);
    json_object *res = api_gw_ask(r, gw, req, g_api.gw_timeout, e);
    json_object_put(req);
    if (res)
        api_metric_incr(r, "actions", 1);
    return res;
}

json_object *
api_action_run(api_req_t *r, api_action_run_t *a, api_err_t *e)
{
    a->seq = 0;
    a->queued = false;
    /* Queued by the gateway (its number is the answer), then followed on the session's event
     * stream: nginx sends these routes to the gateway itself, which waits in memory; this is
     * the way of a request nginx could not route (docs/api.md, "nginx"). */
    int64_t t0 = clock_mono_ms();
    json_object *req = action_request(r, a->sid, a->action);
    json_object *res = api_gw_ask(r, a->gw, req, g_api.gw_timeout, e);
    json_object_put(req);
    if (!res)
        return NULL;
    api_metric_incr(r, "actions", 1);
    a->seq = (uint64_t)json_get_int(res, "seq", 0);
    a->queued = true;
    json_object_put(res);
    int left = a->timeout_ms - (int)(clock_mono_ms() - t0);
    return wait_observation(r, a->sid, a->seq, left > 0 ? left : 1, e);
}

void
api_actions_submit(api_req_t *r, char **params)
{
    const char *sid = params[0];
    json_object *body = api_body_object(r);
    if (!body)
        return;
    /* Either the action itself ({"action":"run","args":{...}}) or a wrapper
     * ({"action":{...},"wait":true,"timeout":30}). */
    json_object *action = body, *a = json_get(body, "action");
    bool wait = api_query_bool(r, "wait", false);
    if (a && json_object_is_type(a, json_type_object)) {
        action = a;
        json_object *w = json_get(body, "wait");
        if (w && !json_object_is_type(w, json_type_boolean)) {
            json_object_put(body);
            api_failf(r, ERR_BAD_REQ, "wait must be a boolean");
            return;
        }
        wait = json_get_bool(body, "wait", wait);
    } else if (!a || !json_object_is_type(a, json_type_string) || !*json_object_get_string(a)) {
        json_object_put(body);
        api_failf(r, ERR_BAD_REQ,
                  "the body must be an OpenHands action: {\"action\": \"run\", \"args\": {...}}");
        return;
    }
    json_object *args = json_get(action, "args");
    if (args && !json_object_is_type(args, json_type_object)) {
        json_object_put(body);
        api_failf(r, ERR_BAD_REQ, "args must be an object");
        return;
    }
    bool ok;
    long long timeout = api_query_int(r, "timeout", 120, 1, API_WAIT_MAX_S, &ok);
    if (!ok) {
        json_object_put(body);
        return;
    }
    api_err_t e;
    char gw[128];
    if (api_session_gateway_for_write(r, sid, gw, sizeof gw, &e) < 0) {
        json_object_put(body);
        api_fail(r, &e);
        return;
    }
    if (!wait) {
        json_object *res = action_submit(r, gw, sid, action, &e);
        json_object_put(body);
        if (res)
            api_reply_json(r, 202, res);
        else
            api_fail(r, &e);
        return;
    }
    api_action_run_t run = {
        .gw = gw, .sid = sid, .action = action, .timeout_ms = (int)timeout * 1000};
    json_object *ev = api_action_run(r, &run, &e);
    json_object_put(body);
    if (ev) {
        api_reply_json(r, 200, ev);
        return;
    }
    unsigned long long seq = (unsigned long long)run.seq;
    if (e.code == ERR_SESSION_ENDED && !run.queued)
        api_failf(r, ERR_SESSION_ENDED, "the session stopped before the action finished");
    else if (e.code == ERR_SESSION_ENDED)
        api_failf(r, ERR_SESSION_ENDED, "the session stopped before action %llu finished", seq);
    else if (e.code == ERR_TIMEOUT && run.queued)
        api_failf(r, ERR_TIMEOUT, "action %llu is queued or running; no observation within %llds",
                  seq, timeout);
    else if (run.queued)
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
    else
        api_fail(r, &e);
}

void
api_signal_send(api_req_t *r, char **params)
{
    json_object *body = api_body_object(r);
    if (!body)
        return;
    json_object *sig = json_get(body, "signal");
    if (!sig || !json_object_is_type(sig, json_type_string)) {
        json_object_put(body);
        api_failf(r, ERR_BAD_REQ, "signal must be a string such as \"INT\"");
        return;
    }
    api_err_t e;
    char gw[128];
    if (api_session_gateway_for_write(r, params[0], gw, sizeof gw, &e) < 0) {
        json_object_put(body);
        api_fail(r, &e);
        return;
    }
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "signal");
    json_set_str(req, "session", params[0]);
    json_set(req, "signal", json_object_get(sig));
    json_object_put(body);
    api_gw_relay(r, gw, req);
    json_object_put(req);
}
