/* ops.c — the request table both transports dispatch through, its access checks and its
 * handlers. See ops.h. */
#include "ops.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_log.h"
#include "gw.h"
#include "json_util.h"
#include "pool.h"
#include "redis_client.h"
#include "session_network.h"
#include "session_stats.h"
#include "ws_server.h"
#include "xalloc.h"

/* ---- answers ---- */

void
ops_ok(const ops_reply_t *to, json_object *result)
{
    to->via->ok(to, result ? result : json_object_new_object());
}

void
ops_fail(const ops_reply_t *to, const char *code, const char *message)
{
    json_object *e = json_object_new_object();
    json_set_str(e, "code", code);
    json_set_str(e, "message", message);
    to->via->fail(to, e);
}

ops_reply_t *
ops_reply_keep(const ops_reply_t *to)
{
    ops_reply_t *k = xmalloc(sizeof *k);
    *k = *to;
    k->id = to->id ? json_object_get(to->id) : NULL;
    return k;
}

void
ops_reply_free(ops_reply_t *to)
{
    if (!to)
        return;
    json_object_put(to->id);
    free(to);
}

/* ---- access ---- */

ops_access_t
ops_access(const ops_who_t *who, const gw_session_t *s)
{
    const char *role = who->role ? who->role : "";
    if (!strcmp(role, "admin"))
        return OPS_WRITE;
    if (!strcmp(role, "viewer"))
        return who->session && !strcmp(who->session, session_id(s)) ? OPS_READ : OPS_HIDDEN;
    if (!strcmp(role, "user") && who->sub && !strcmp(who->sub, session_owner(s)))
        return OPS_WRITE;
    return OPS_HIDDEN;
}

/* ---- sessions ---- */

typedef struct {
    ops_reply_t *to;
    char id[64];
} created_t;

static void
on_created_stored(void *ud, uint64_t seq)
{
    created_t *c = ud;
    gw_session_t *s = seq ? session_find(c->id) : NULL;
    if (s)
        ops_ok(c->to, session_describe(s));
    else
        ops_fail(c->to, "session_ended", "the session stopped as it started");
    ops_reply_free(c->to);
    free(c);
}

/* The answer goes out once Redis holds everything the session wrote so far (its record, then
 * its READY event, on the one connection): a client that reads Redis after the answer finds the
 * session there. */
static void
on_created(void *ud, gw_session_t *s, int code, const char *msg)
{
    ops_reply_t *to = ud;
    if (!s) {
        ops_fail(to, err_name(code), msg ? msg : "the session could not start");
        ops_reply_free(to);
        return;
    }
    created_t *c = xmalloc(sizeof *c);
    c->to = to;
    snprintf(c->id, sizeof c->id, "%s", session_id(s));
    session_when_stored(s, event_log_next_seq(session_log(s)) - 1, on_created_stored, c);
}

/* A create answered "early": as soon as Redis holds the new session's record (STARTING), for a
 * caller that follows the start in the record and the event stream (the OpenHands Runtime API's
 * /start). Shared by the create's callback and the answer: freed by the last of the two. */
typedef struct {
    ops_reply_t *to;
    int refs;
    bool answered;
    char id[64];
} early_t;

static void
early_release(early_t *e)
{
    if (--e->refs > 0)
        return;
    ops_reply_free(e->to);
    free(e);
}

/* The create's outcome: an answer only when the early one has not gone yet (refused at once,
 * or failed before Redis answered). */
static void
on_early_done(void *ud, gw_session_t *s, int code, const char *msg)
{
    early_t *e = ud;
    if (!e->answered) {
        e->answered = true;
        if (s)
            ops_ok(e->to, session_describe(s));
        else
            ops_fail(e->to, err_name(code), msg ? msg : "the session could not start");
    }
    early_release(e);
}

/* Redis answered a command sent after the record's HSET on the same connection: it holds it. */
static void
on_early_saved(redisReply *x, void *ud)
{
    (void)x; /* Redis gone: the record is written again on reconnection (sessions_redis_ready) */
    early_t *e = ud;
    gw_session_t *s = session_find(e->id);
    if (!e->answered) {
        e->answered = true;
        if (s)
            ops_ok(e->to, session_describe(s));
        else
            ops_fail(e->to, "session_ended", "the session stopped as it started");
    }
    early_release(e);
}

static void
op_session_create(const ops_call_t *c)
{
    const char *key = json_get_str(c->args, "create_key", "");
    if (key[0] && c->reply->via->via != OPS_API) {
        /* the API's own (it follows the key to the record): a client choosing one could point
         * another's create at its own session */
        ops_fail(c->reply, "bad_request", "\"create_key\" is the API's, not a client's");
        return;
    }
    if (key[0] && !session_create_key_ok(key)) {
        ops_fail(c->reply, "bad_request", "\"create_key\" must be 16 to 64 of [0-9a-f]");
        return;
    }
    /* the network the caller may have, normalised into the params the record keeps */
    json_object *params = c->params ? json_object_get(c->params) : json_object_new_object();
    err_t err = {0};
    if (session_network_policy(params, c->who.role, &err) < 0) {
        json_object_put(params);
        ops_fail(c->reply, err_name(err.code), err.msg);
        return;
    }
    if (!json_get_bool(c->args, "early", false)) {
        session_create(params, c->who.sub, key, on_created, ops_reply_keep(c->reply), NULL, 0);
        json_object_put(params);
        return;
    }
    early_t *e = xcalloc(1, sizeof *e);
    e->to = ops_reply_keep(c->reply);
    e->refs = 2;
    session_create(params, c->who.sub, key, on_early_done, e, e->id, sizeof e->id);
    json_object_put(params);
    if (e->answered || !e->id[0] || !session_find(e->id))
        early_release(e); /* answered by the callback already */
    else
        redis_client_cmd(on_early_saved, e, "PING");
}

static void
op_session_list(const ops_call_t *c)
{
    json_object *arr = json_object_new_array();
    for (gw_session_t *s = g_gw.sessions; s; s = session_next(s))
        if (ops_access(&c->who, s) != OPS_HIDDEN)
            json_object_array_add(arr, session_describe(s));
    json_object *r = json_object_new_object();
    json_set(r, "sessions", arr);
    ops_ok(c->reply, r);
}

static void
op_session_get(const ops_call_t *c)
{
    ops_ok(c->reply, session_describe(c->s));
}

/* A delete is answered once the sandbox is gone: after the answer none of its processes runs. */
typedef struct {
    ops_reply_t *to;
    json_object *described;
} deleting_t;

static void
on_deleted(void *ud, int code, const char *msg)
{
    deleting_t *d = ud;
    if (!code) {
        ops_ok(d->to, d->described);
    } else {
        char why[400];
        snprintf(why, sizeof why, "the session is STOPPED but its sandbox was not destroyed: %s",
                 msg ? msg : "?");
        ops_fail(d->to, err_name(code == ERR_BUSY ? ERR_BUSY : ERR_FAILED), why);
        json_object_put(d->described);
    }
    ops_reply_free(d->to);
    free(d);
}

static void
op_session_delete(const ops_call_t *c)
{
    deleting_t *d = xcalloc(1, sizeof *d);
    d->described = session_describe(c->s);
    json_set_str(d->described, "status", session_status_text(SESSION_STOPPED));
    d->to = ops_reply_keep(c->reply);
    char why[64];
    snprintf(why, sizeof why, "deleted %s", c->reply->via->actor);
    session_delete_then(c->s, why, on_deleted, d);
}

static void
op_session_pause(const ops_call_t *c)
{
    err_t err = {0};
    char why[64];
    snprintf(why, sizeof why, "paused %s", c->reply->via->actor);
    if (session_pause(c->s, why, &err) < 0)
        ops_fail(c->reply, err_name(err.code), err.msg);
    else
        ops_ok(c->reply, session_describe(c->s));
}

static void
op_session_resume(const ops_call_t *c)
{
    err_t err = {0};
    ops_reply_t *to = ops_reply_keep(c->reply);
    int rc = session_resume(c->s, on_created, to, &err);
    if (rc == 1)
        return; /* a session taken over while paused: on_created answers once it is READY */
    if (rc < 0)
        ops_fail(to, err_name(err.code), err.msg);
    else
        ops_ok(to, session_describe(c->s));
    ops_reply_free(to);
}

/* Sets the session's max_lifetime (seconds from its creation; 0: none) and, when given, its
 * lifetime_action (what that end does), and keeps them in its record, so a gateway taking the
 * session over enforces the same end: the E2B API's timeout, which setTimeout moves. */
static void
op_session_set_lifetime(const ops_call_t *c)
{
    json_object *v = json_get(c->args, "max_lifetime"), *a = json_get(c->args, "lifetime_action");
    if (!v || !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
        json_object_get_int64(v) > INT32_MAX) {
        ops_fail(c->reply, "bad_request", "max_lifetime must be an integer of seconds, 0 or more");
        return;
    }
    err_t err = {0};
    if (a && session_set_lifetime_action(
                 c->s, json_object_is_type(a, json_type_string) ? json_object_get_string(a) : "",
                 &err) < 0) {
        ops_fail(c->reply, err_name(err.code), err.msg);
        return;
    }
    session_set_max_lifetime(c->s, (int)json_object_get_int64(v));
    ops_ok(c->reply, session_describe(c->s));
}

/* Replaces a running session's network policy (session_network.h): E2B's updateNetwork. */
static void
op_session_set_network(const ops_call_t *c)
{
    err_t err = {0};
    if (session_network_set(c->s, json_get(c->args, "network"), c->who.role, c->who.sub, &err) < 0)
        ops_fail(c->reply, err_name(err.code), err.msg);
    else
        ops_ok(c->reply, session_describe(c->s));
}

static void
on_stats(void *ud, json_object *stats)
{
    ops_reply_t *to = ud;
    ops_ok(to, json_object_get(stats));
    ops_reply_free(to);
}

/* What the session's sandbox uses now (session_stats.h): E2B's getMetrics. A read: its idle
 * clock keeps running. */
static void
op_session_stats(const ops_call_t *c)
{
    session_stats(c->s, on_stats, ops_reply_keep(c->reply));
}

/* ---- the gateway ---- */

static void
op_pool(const ops_call_t *c)
{
    ops_ok(c->reply, pool_describe());
}

static void
op_gateway_health(const ops_call_t *c)
{
    json_object *r = json_object_new_object();
    json_set_bool(r, "redis", redis_client_connected());
    json_set_str(r, "gateway", g_gw.cfg.id);
    json_set_str(r, "version", GW_VERSION);
    json_set_int(r, "sessions", sessions_count());
    json_set_int(r, "connections", (int64_t)ws_connections());
    json_set(r, "pool", pool_describe());
    ops_ok(c->reply, r);
}

/* ---- actions and signals ---- */

typedef struct {
    ops_reply_t *to;
    uint64_t seq;
    bool wait; /* a second answer with the observation */
    gw_session_t *s;
} action_t;

static void
action_free(action_t *a)
{
    ops_reply_free(a->to);
    free(a);
}

/* The observation event of a waited-for action: the answer embeds its stored text as is. */
static void
on_observed(void *ud, const char *event, size_t len)
{
    action_t *a = ud;
    if (event)
        a->to->via->observed(a->to, a->seq, event, len);
    else if (!g_gw.stopping)
        /* (a gateway shutting down says nothing: the session and its action go on in the
         * sandbox, and the waiting API finds the observation in the stream later) */
        ops_fail(a->to, "session_ended", "the session stopped before the action finished");
    action_free(a);
}

/* The action event is stored: its number is the answer; with wait, the observation follows. */
static void
on_action_stored(void *ud, uint64_t seq)
{
    action_t *a = ud;
    if (!seq) {
        if (!g_gw.stopping)
            ops_fail(a->to, err_name(ERR_NOT_FOUND),
                     "the session stopped before the action was queued");
        action_free(a);
        return;
    }
    json_object *res = json_object_new_object();
    json_set_int(res, "seq", (int64_t)seq);
    ops_ok(a->to, res);
    if (a->wait)
        session_watch_action(a->s, seq, on_observed, a);
    else
        action_free(a);
}

static void
op_action(const ops_call_t *c)
{
    err_t err = {0};
    /* the API says which of its routes the action came by (its own field, not the client's) */
    const char *via = json_get_str(c->args, "via", "rest");
    if (strcmp(via, "runtime") != 0)
        via = "rest";
    uint64_t seq = session_submit(c->s, json_get(c->args, "action"), c->who.sub, via, &err);
    if (!seq) {
        ops_fail(c->reply, err_name(err.code), err.msg);
        return;
    }
    /* answered once the action event is stored (its number is then never reused); with
     * wait, a second answer follows: the observation event */
    action_t *a = xcalloc(1, sizeof *a);
    a->to = ops_reply_keep(c->reply);
    a->seq = seq;
    a->wait = json_get_bool(c->args, "wait", false) && c->reply->via->observed;
    a->s = c->s;
    session_when_stored(c->s, seq, on_action_stored, a);
}

static void
op_signal(const ops_call_t *c)
{
    err_t err = {0};
    if (session_signal(c->s, json_get_str(c->args, "signal", "INT"), &err) < 0)
        ops_fail(c->reply, err_name(err.code), err.msg);
    else
        ops_ok(c->reply, NULL);
}

/* ---- executor ops ---- */

static void
on_exec_done(void *ud, json_object *result)
{
    ops_reply_t *to = ud;
    json_object *err = json_get(result, "error");
    if (err)
        to->via->fail(to, json_object_get(err));
    else
        ops_ok(to, json_object_get(result));
    ops_reply_free(to);
}

/* A one-shot executor op: the request's own fields, less the routing ones, are its fields. */
static void
op_exec(const ops_call_t *c)
{
    static const char *const routing[] = {"reply",   "owner", "role",
                                          "session", "id",    "viewer_session"};
    json_object *req = json_object_new_object();
    json_object_object_foreach(c->args, k, v)
    {
        size_t i = 0;
        while (i < sizeof routing / sizeof routing[0] && strcmp(k, routing[i]) != 0)
            i++;
        if (i == sizeof routing / sizeof routing[0])
            json_set(req, k, json_object_get(v));
    }
    err_t err = {0};
    ops_reply_t *to = ops_reply_keep(c->reply);
    const ops_t *d = ops_find(c->op, c->reply->via->via);
    int rc = d && !d->writes ? session_probe_op(c->s, req, on_exec_done, to, &err)
                             : session_exec_op(c->s, req, on_exec_done, to, &err);
    if (rc < 0) {
        ops_reply_free(to);
        ops_fail(c->reply, err_name(err.code), err.msg);
    }
    json_object_put(req);
}

/* ---- the table ---- */

#define W true  /* writes */
#define R false /* reads */
#define S true  /* names a session */
#define G false /* about the gateway */

static const ops_t ops[] = {
    /* name            writes session transports refusal handler */
    {"session.create", W, G, OPS_WS_API, "viewers cannot create sessions", op_session_create},
    {"session.list", R, G, OPS_WS, NULL, op_session_list},
    {"session.get", R, S, OPS_WS_API, NULL, op_session_get},
    {"session.delete", W, S, OPS_WS_API, "viewers cannot delete sessions", op_session_delete},
    {"session.pause", W, S, OPS_WS_API, "viewers cannot pause or resume sessions",
     op_session_pause},
    {"session.resume", W, S, OPS_WS_API, "viewers cannot pause or resume sessions",
     op_session_resume},
    {"session.set_lifetime", W, S, OPS_WS_API, "viewers cannot change a session's lifetime",
     op_session_set_lifetime},
    {"session.set_network", W, S, OPS_WS_API, "viewers cannot change a session's network",
     op_session_set_network},
    {"session.stats", R, S, OPS_WS_API, NULL, op_session_stats},
    {"pool", R, G, OPS_WS, NULL, op_pool},
    {"health", R, G, OPS_WS, NULL, op_gateway_health},
    /* the REST API's work on a session's sandbox */
    {"action", W, S, OPS_API | OPS_HTTP, NULL, op_action},
    {"signal", W, S, OPS_API | OPS_HTTP, NULL, op_signal},
    {"file.read", R, S, OPS_HTTP, NULL, op_exec},
    {"file.list", R, S, OPS_HTTP, NULL, op_exec},
    {"file.stat", R, S, OPS_HTTP, NULL, op_exec},
    {"file.write", W, S, OPS_HTTP, NULL, op_exec},
    {"file.mkdir", W, S, OPS_HTTP, NULL, op_exec},
    {"file.move", W, S, OPS_HTTP, NULL, op_exec},
    {"file.remove", W, S, OPS_HTTP, NULL, op_exec},
};

#undef W
#undef R
#undef S
#undef G

const ops_t *
ops_table(size_t *n)
{
    *n = sizeof ops / sizeof ops[0];
    return ops;
}

const ops_t *
ops_find(const char *name, ops_via_t via)
{
    for (size_t i = 0; name && i < sizeof ops / sizeof ops[0]; i++)
        if ((ops[i].via & via) && strcmp(ops[i].name, name) == 0)
            return &ops[i];
    return NULL;
}

void
ops_dispatch(ops_call_t *c)
{
    const ops_transport_t *t = c->reply->via;
    const ops_t *op = ops_find(c->op, t->via);
    if (!op)
        op = t->unknown;
    const char *refusal = op->refusal ? op->refusal : "this token may only watch the session";
    c->s = NULL;
    if (op->session) {
        c->s = session_find(json_get_str(c->args, "session", ""));
        ops_access_t a = c->s ? ops_access(&c->who, c->s) : OPS_HIDDEN;
        bool refused = op->writes && a == OPS_READ;
        if (a == OPS_HIDDEN || (refused && t->hides_refusals)) {
            ops_fail(c->reply, "not_found", "no such session on this gateway");
            return;
        }
        if (refused) {
            ops_fail(c->reply, t->forbidden, refusal);
            return;
        }
    } else if (op->writes && c->who.role && !strcmp(c->who.role, "viewer")) {
        ops_fail(c->reply, t->forbidden, refusal);
        return;
    }
    op->fn(c);
}
