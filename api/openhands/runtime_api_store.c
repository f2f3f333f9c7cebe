/* runtime_api_store.c — the OpenHands Runtime API's records in Redis (redis/README.md, "OpenHands
 * Runtime API"), the status pair the clients read, and requests to gateways on a runtime's
 * behalf. See runtime_api.h.
 *
 * /start asks the gateway for its session "early" (answered as soon as the session exists), so
 * the record names its session at once; how far the start got is the session's own record
 * (derive). Writes after a read go through one Lua script that applies them only if the record
 * still names the same runtime (a /start may have replaced it). */
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "clock.h"
#include "auth.h"
#include "runtime_api.h"
#include "gateway_client.h"
#include "redis.h"
#include "json_util.h"
#include "work_hosts.h"

#define OH_STOPPED_TTL_S (7 * 24 * 3600) /* a stopped runtime stays visible this long */
#define OH_PENDING_MAX_S 300             /* a runtime starting this long failed */
#define OH_REFRESH_MAX   1000 /* runtimes looked at when the capacity count is refreshed */
#define OH_ACTIVE_KEY    "sp:oh:active"
#define OH_SESSIONS_KEY  "sp:oh:sessions"

/* Applies HDEL ARGV[2] (unless "") and HSET ARGV[3..] if the record still names runtime
 * ARGV[1]; returns its "stopped" field ("" when not stopped), or nil when it does not. */
static const char cas_script[] =
    "if redis.call('HGET', KEYS[1], 'runtime_id') ~= ARGV[1] then return false end "
    "if ARGV[2] ~= '' then redis.call('HDEL', KEYS[1], ARGV[2]) end "
    "if #ARGV > 2 then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) end "
    "return redis.call('HGET', KEYS[1], 'stopped') or ''";

bool
oh_sid_ok(const char *sid)
{
    size_t n = strlen(sid);
    if (n == 0 || n > OH_SID_MAX)
        return false;
    return strspn(sid, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:@+-") == n;
}

bool
oh_rid_ok(const char *rid)
{
    size_t p = strlen(OH_RID_PREFIX);
    return !strncmp(rid, OH_RID_PREFIX, p) && strlen(rid) == p + OH_RID_HEX &&
           strspn(rid + p, "0123456789abcdef") == OH_RID_HEX;
}

void
oh_random_hex(char *out, size_t cap, const char *prefix, size_t nbytes)
{
    unsigned char rnd[32];
    if (nbytes > sizeof rnd)
        nbytes = sizeof rnd;
    if (RAND_bytes(rnd, (int)nbytes) != 1)
        abort(); /* no randomness: keys and ids would be guessable */
    size_t o = (size_t)snprintf(out, cap, "%s", prefix);
    for (size_t i = 0; i < nbytes && o + 2 < cap; i++, o += 2)
        snprintf(out + o, cap - o, "%02x", rnd[i]);
}

void
oh_rt_free(oh_rt_t *rt)
{
    json_object_put(rt->start);
    rt->start = NULL;
}

bool
oh_active(const oh_rt_t *rt)
{
    return !strcmp(rt->status, "starting") || !strcmp(rt->status, "running");
}

bool
oh_live(const oh_rt_t *rt)
{
    return oh_active(rt) || !strcmp(rt->status, "paused");
}

bool
oh_visible(const api_req_t *r, const oh_rt_t *rt, bool write)
{
    if (api_is_admin(r))
        return true;
    if (!strcmp(r->claims.role, "viewer"))
        return !write && rt->session[0] && !strcmp(r->claims.session, rt->session);
    return !strcmp(r->claims.role, "user") && !strcmp(rt->owner, r->claims.sub);
}

/* ---- derived status ---- */

static void
set_state(oh_rt_t *rt, const char *status, const char *pod_status)
{
    rt->status = status;
    rt->pod_status = pod_status;
}

/* A start that failed: "error", with why (kept as the record's error when it has none). */
static int failed(oh_rt_t *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
failed(oh_rt_t *rt, const char *fmt, ...)
{
    if (!rt->error[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rt->error, sizeof rt->error, fmt, ap);
        va_end(ap);
    }
    set_state(rt, "error", "failed");
    return 0;
}

/* The pair the clients read (as OpenHands' RemoteRuntime client reads them, docs/api.md):
 * pod_status "ready" only when /alive answers "ok" (session READY, gateway alive); "paused" and
 * "not found" are values no client maps, so V1 falls back to status and V0/SDK keep polling.
 * Returns 0, or -1 when the session could not be read (Redis). */
static int
derive(api_req_t *r, oh_rt_t *rt)
{
    rt->session_status[0] = '\0';
    if (rt->stopped > 0) {
        set_state(rt, "stopped", "not found");
        return 0;
    }
    if (rt->error[0]) {
        set_state(rt, "error", "failed");
        return 0;
    }
    bool late = clock_wall() - rt->created > OH_PENDING_MAX_S;
    if (!rt->session[0]) {
        if (late) /* (a record of a start that never got its session) */
            return failed(rt, "the sandbox did not start within %d s", OH_PENDING_MAX_S);
        set_state(rt, "starting", "pending");
        return 0;
    }
    char gw[128] = "", why[256] = "";
    redisReply *x = api_redis_cmdf(r, "HMGET sp:session:{%s} status gateway error", rt->session);
    if (!x || x->type != REDIS_REPLY_ARRAY || x->elements != 3) {
        if (x)
            freeReplyObject(x);
        set_state(rt, "running", "running"); /* unknown: nothing to conclude from */
        return -1;
    }
    if (x->element[0]->type == REDIS_REPLY_STRING)
        snprintf(rt->session_status, sizeof rt->session_status, "%s", x->element[0]->str);
    if (x->element[1]->type == REDIS_REPLY_STRING)
        snprintf(gw, sizeof gw, "%s", x->element[1]->str);
    if (x->element[2]->type == REDIS_REPLY_STRING)
        snprintf(why, sizeof why, "%s", x->element[2]->str);
    freeReplyObject(x);
    const char *st = rt->session_status;
    if (*why && (!strcmp(st, "STOPPED") || !strcmp(st, "ERROR")))
        return failed(rt, "%s", why); /* it never started: the gateway's reason */
    if (!*st || !strcmp(st, "STOPPED"))
        set_state(rt, "stopped", "not found");
    else if (!strcmp(st, "PAUSED"))
        set_state(rt, "paused", "paused");
    else if (!strcmp(st, "ERROR"))
        set_state(rt, "error", "failed");
    else if (!strcmp(st, "READY"))
        /* Gateway gone: not ready, but not failed either (another may take the session over). */
        set_state(rt, "running", api_gateway_alive(r, gw) == 1 ? "ready" : "running");
    else if (!strcmp(st, "ERROR_RUNTIME_DISCONNECTED") || !strcmp(st, "RUNTIME_STARTED"))
        set_state(rt, !strcmp(st, "RUNTIME_STARTED") ? "starting" : "running", "running");
    else if (late && !strcmp(st, "STARTING"))
        return failed(rt, "the sandbox did not start within %d s", OH_PENDING_MAX_S);
    else
        set_state(rt, "starting", "pending");
    return 0;
}

/* ---- loading ---- */

static void
field(char *dst, size_t cap, const redisReply *h, const char *name)
{
    for (size_t i = 0; i + 1 < h->elements; i += 2)
        if (!strcmp(h->element[i]->str, name)) {
            snprintf(dst, cap, "%s", h->element[i + 1]->str ? h->element[i + 1]->str : "");
            return;
        }
    dst[0] = '\0';
}

/* HDEL hdel (unless NULL) and HSET the n strings fv (field, value, ...) on rt's record if it
 * still names rt's runtime. Returns 1 (applied; *stopped set), 0 (replaced), -1 (Redis). */
static int
cas_update(api_req_t *r, const oh_rt_t *rt, const char *hdel, int n, const char **fv,
           double *stopped)
{
    char key[160];
    snprintf(key, sizeof key, "sp:oh:session:{%s}", rt->sid);
    const char *argv[16] = {"EVAL", cas_script, "1", key, rt->rid, hdel ? hdel : ""};
    int argc = 6;
    for (int i = 0; i < n && argc < 16; i++)
        argv[argc++] = fv[i];
    redisReply *x = api_redis_cmd(r, 0, argc, argv);
    if (!x)
        return -1;
    int rc = x->type == REDIS_REPLY_STRING ? 1 : x->type == REDIS_REPLY_NIL ? 0 : -1;
    if (rc == 1 && stopped)
        *stopped = atof(x->str);
    freeReplyObject(x);
    return rc;
}

int
oh_load(api_req_t *r, const char *sid, oh_rt_t *rt)
{
    memset(rt, 0, sizeof *rt);
    set_state(rt, "stopped", "not found");
    if (!oh_sid_ok(sid))
        return 0;
    snprintf(rt->sid, sizeof rt->sid, "%s", sid);
    redisReply *h = api_redis_cmdf(r, "HGETALL sp:oh:session:{%s}", sid);
    if (!h || h->type != REDIS_REPLY_ARRAY) {
        if (h)
            freeReplyObject(h);
        return -1;
    }
    char num[64];
    field(rt->rid, sizeof rt->rid, h, "runtime_id");
    field(rt->owner, sizeof rt->owner, h, "owner");
    field(rt->key, sizeof rt->key, h, "key");
    field(rt->session, sizeof rt->session, h, "session");
    field(rt->gateway, sizeof rt->gateway, h, "gateway");
    field(rt->image, sizeof rt->image, h, "image");
    field(rt->error, sizeof rt->error, h, "error");
    field(num, sizeof num, h, "created");
    rt->created = atof(num);
    field(num, sizeof num, h, "stopped");
    rt->stopped = atof(num);
    for (size_t i = 0; i + 1 < h->elements; i += 2)
        if (!strcmp(h->element[i]->str, "start")) {
            err_t err = {0};
            rt->start = json_parse_lossy(h->element[i + 1]->str, h->element[i + 1]->len, &err);
        }
    freeReplyObject(h);
    if (!oh_rid_ok(rt->rid)) {
        oh_rt_free(rt);
        return 0;
    }
    if (derive(r, rt) < 0) {
        oh_rt_free(rt);
        return -1;
    }
    /* Ended outside /stop (deleted through REST, lifetime): record it the same way, so it
     * expires, leaves /list and frees its capacity slot. */
    if (rt->stopped <= 0 && !strcmp(rt->status, "stopped") && rt->session[0])
        oh_mark_stopped(r, rt);
    else if (!strcmp(rt->status, "error"))
        oh_capacity_release(r, rt->sid); /* failed as it started: it holds no slot */
    return 1;
}

int
oh_load_rid(api_req_t *r, const char *rid, oh_rt_t *rt)
{
    memset(rt, 0, sizeof *rt);
    set_state(rt, "stopped", "not found");
    if (!oh_rid_ok(rid))
        return 0;
    redisReply *x = api_redis_cmdf(r, "GET sp:oh:runtime:{%s}", rid);
    if (!x)
        return -1;
    char sid[OH_SID_MAX + 1] = "";
    if (x->type == REDIS_REPLY_STRING)
        snprintf(sid, sizeof sid, "%s", x->str);
    freeReplyObject(x);
    if (!*sid)
        return 0;
    int f = oh_load(r, sid, rt);
    if (f == 1 && strcmp(rt->rid, rid) != 0) {
        oh_rt_free(rt);
        return 0; /* an earlier runtime of that session */
    }
    return f;
}

/* ---- the runtime object ---- */

void
oh_url(const api_req_t *r, const char *rid, char *out, size_t cap)
{
    const char *xfp = api_param(r, "HTTP_X_FORWARDED_PROTO"), *https = api_param(r, "HTTPS");
    const char *scheme = https && *https && strcasecmp(https, "off") ? "https" : "http";
    if (xfp && (!strcasecmp(xfp, "https") || !strcasecmp(xfp, "http")))
        scheme = !strcasecmp(xfp, "https") ? "https" : "http";
    const char *host = api_param(r, "HTTP_HOST");
    const char *ok = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]";
    if (!host || !*host || strlen(host) > 255 || strspn(host, ok) != strlen(host)) {
        const char *name = api_param(r, "SERVER_NAME"), *port = api_param(r, "SERVER_PORT");
        if (!name || !*name || !strcmp(name, "_") || strspn(name, ok) != strlen(name))
            name = "localhost";
        snprintf(out, cap, "%s://%s%s%s/%s", scheme, name, port && *port ? ":" : "",
                 port && strspn(port, "0123456789") == strlen(port) ? port : "", rid);
        return;
    }
    snprintf(out, cap, "%s://%s/%s", scheme, host, rid);
}

json_object *
oh_rt_json(api_req_t *r, const oh_rt_t *rt)
{
    char url[512];
    oh_url(r, rt->rid, url, sizeof url);
    json_object *o = json_object_new_object();
    json_set_str(o, "runtime_id", rt->rid);
    json_set_str(o, "session_id", rt->sid);
    json_set_str(o, "url", url);
    json_set_str(o, "session_api_key", rt->key);
    json_set_str(o, "status", rt->status);
    json_set_str(o, "pod_status", rt->pod_status);
    json_set(o, "work_hosts",
             oh_work_hosts(r, rt->status && strcmp(rt->status, "stopped") ? rt->session : ""));
    json_set_int(o, "restart_count", 0);
    json_set(o, "restart_reasons", json_object_new_array());
    json_set_str(o, "image", rt->image);
    json_set(o, "created", json_object_new_double(rt->created));
    if (rt->error[0]) {
        json_set_str(o, "error", rt->error);
        json_set_str(o, "pod_logs", rt->error); /* the SDK shows pod_logs on failure */
    }
    /* What /start asked for (recorded) and what sandpipe applied ("sandpipe"). */
    json_object *sp = NULL, *start = rt->start ? rt->start : json_object_new_object();
    json_object_object_foreach(start, k, v)
    {
        if (!strcmp(k, "sandpipe") && json_object_is_type(v, json_type_object)) {
            sp = json_object_new_object();
            json_object_object_foreach(v, k2, v2) json_set(sp, k2, json_object_get(v2));
        } else if (!json_get(o, k)) {
            json_set(o, k, json_object_get(v));
        }
    }
    if (start != rt->start)
        json_object_put(start);
    if (!sp)
        sp = json_object_new_object();
    json_set(sp, "session", rt->session[0] ? json_object_new_string(rt->session) : NULL);
    json_set_str(sp, "session_status", rt->session_status);
    json_set(o, "sandpipe", sp);
    return o;
}

/* ---- requests to a gateway ---- */

int
oh_session_op(api_req_t *r, const oh_rt_t *rt, const char *op, api_err_t *e)
{
    char gw[128];
    snprintf(gw, sizeof gw, "%s", rt->gateway);
    redisReply *x = api_redis_cmdf(r, "HGET sp:session:{%s} gateway", rt->session);
    if (x && x->type == REDIS_REPLY_STRING && *x->str)
        snprintf(gw, sizeof gw, "%s", x->str); /* the owner now, after a takeover */
    if (x)
        freeReplyObject(x);
    if (!rt->session[0])
        return api_err_set(e, ERR_UNAVAILABLE, "the runtime has no session");
    json_object *req = json_object_new_object();
    json_set_str(req, "op", op);
    json_set_str(req, "session", rt->session);
    /* As the runtime's owner: the caller's rights were checked here, the gateway checks again
     * that the session is the owner's. */
    api_gw_call_t c = {
        .gw = gw, .req = req, .timeout_s = g_api.gw_timeout, .owner = rt->owner, .role = "user"};
    json_object *res = api_gw_call(r, &c, e);
    json_object_put(req);
    json_object_put(res);
    return res ? 0 : -1;
}

void
oh_apply_create_reply(api_req_t *r, oh_rt_t *rt, json_object *res, const api_err_t *e)
{
    if (res && *json_get_str(res, "id", "")) {
        oh_rt_t made = *rt;
        made.start = NULL;
        snprintf(made.session, sizeof made.session, "%s", json_get_str(res, "id", ""));
        snprintf(made.gateway, sizeof made.gateway, "%s", json_get_str(res, "gateway", ""));
        const char *fv[] = {"session", made.session, "gateway", made.gateway};
        double stopped = 0;
        int rc = cas_update(r, rt, NULL, 4, fv, &stopped);
        if (rc == 1) {
            snprintf(rt->session, sizeof rt->session, "%s", made.session);
            snprintf(rt->gateway, sizeof rt->gateway, "%s", made.gateway);
            rt->stopped = stopped;
        }
        /* Stopped while it started, or replaced by a newer runtime: nobody will use it. */
        api_err_t ignored;
        if (rc == 0 || (rc == 1 && stopped > 0))
            oh_session_op(r, &made, "session.delete", &ignored);
        return;
    }
    char msg[256];
    snprintf(msg, sizeof msg, "%.255s", e && e->msg[0] ? e->msg : "the sandbox did not start");
    const char *fv[] = {"error", msg};
    if (cas_update(r, rt, NULL, 2, fv, NULL) == 1)
        snprintf(rt->error, sizeof rt->error, "%s", msg);
    oh_capacity_release(r, rt->sid);
}

int
oh_mark_stopped(api_req_t *r, oh_rt_t *rt)
{
    char now[32];
    snprintf(now, sizeof now, "%.6f", clock_wall());
    const char *fv[] = {"stopped", now};
    int rc = cas_update(r, rt, NULL, 2, fv, NULL);
    if (rc <= 0)
        return rc; /* 0: replaced by a newer runtime, which is not ours to touch */
    redisReply *x;
    if ((x = api_redis_cmdf(r, "EXPIRE sp:oh:session:{%s} %d", rt->sid, OH_STOPPED_TTL_S)))
        freeReplyObject(x);
    if ((x = api_redis_cmdf(r, "EXPIRE sp:oh:runtime:{%s} %d", rt->rid, OH_STOPPED_TTL_S)))
        freeReplyObject(x);
    if ((x = api_redis_cmdf(r, "ZREM " OH_SESSIONS_KEY " %s", rt->sid)))
        freeReplyObject(x);
    oh_capacity_release(r, rt->sid);
    rt->stopped = atof(now);
    derive(r, rt);
    return 0;
}

/* ---- capacity ---- */

static long long
active_count(api_req_t *r)
{
    redisReply *x = api_redis_cmdf(r, "SCARD " OH_ACTIVE_KEY);
    long long n = x && x->type == REDIS_REPLY_INTEGER ? x->integer : -1;
    if (x)
        freeReplyObject(x);
    return n;
}

/* Drops members that are no longer starting or running (paused or stopped by the gateway,
 * failed, expired): the set is only as exact as the last look at each runtime. */
static void
active_refresh(api_req_t *r, const char *keep)
{
    redisReply *m = api_redis_cmdf(r, "SRANDMEMBER " OH_ACTIVE_KEY " %d", OH_REFRESH_MAX);
    for (size_t i = 0; m && m->type == REDIS_REPLY_ARRAY && i < m->elements; i++) {
        const char *sid = m->element[i]->str;
        if (!sid || !strcmp(sid, keep))
            continue;
        oh_rt_t rt;
        int f = oh_load(r, sid, &rt);
        if (f == 0 || (f == 1 && !oh_active(&rt)))
            oh_capacity_release(r, sid);
        oh_rt_free(&rt);
    }
    if (m)
        freeReplyObject(m);
}

int
oh_capacity_reserve(api_req_t *r, const char *sid)
{
    int cap = g_api.oh.max_runtimes;
    if (cap <= 0)
        return 1;
    redisReply *x = api_redis_cmdf(r, "SADD " OH_ACTIVE_KEY " %s", sid);
    if (!x)
        return -1;
    bool added = x->type == REDIS_REPLY_INTEGER && x->integer == 1;
    freeReplyObject(x);
    if (!added)
        return 1;
    long long n = active_count(r);
    if (n >= 0 && n <= cap)
        return 2;
    active_refresh(r, sid);
    n = active_count(r);
    if (n >= 0 && n <= cap)
        return 2;
    oh_capacity_release(r, sid);
    return n < 0 ? -1 : 0;
}

void
oh_capacity_release(api_req_t *r, const char *sid)
{
    redisReply *x = api_redis_cmdf(r, "SREM " OH_ACTIVE_KEY " %s", sid);
    if (x)
        freeReplyObject(x);
}
