/* runtime_api_start.c — POST /openhands/start: a runtime for an OpenHands session_id, as a sandpipe
 * session. Idempotent per session_id: starting or running → the same runtime, paused →
 * resumed, stopped or failed (or none) → a new runtime under the same session_id.
 *
 * The session.create request goes to a gateway over HTTP, answered as soon as the session exists
 * ("early"); /start then waits for it to be READY up to --oh-start-wait (default 5 s: a warm
 * runtime is ready in ~12 ms, so the client's first look finds it ready) and otherwise answers
 * "starting": the record names the session, whose own record tells how far it got
 * (runtime_api_store.c), and all clients poll for readiness.
 *
 * Of the request, `environment` becomes the sandbox's env (plus the variables a Runtime API
 * injects: SESSION_API_KEY, RUNTIME_ID, RUNTIME_URL, VSCODE_PORT, ...), `resource_factor`
 * scales the --oh-memory/--oh-cpu/--oh-pids limits, V0's command flags --plugins and
 * --no-enable-browser set the session's plugins; sandpipe's executor serves the action API,
 * so the command itself and everything else is recorded (shown in the runtime), not run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "runtime_api.h"
#include "redis.h"
#include "json_util.h"

#define OH_CMD_ARGS_MAX  256
#define OH_ENV_NAME_MAX  256
#define OH_FACTOR_MAX    16
#define OH_START_RETRIES 4
#define OH_WORKSPACE     "/workspace" /* where sandpipe sessions start */

typedef struct {
    char sid[OH_SID_MAX + 1];
    char image[256];
    char session_image[256]; /* session.create's "image" ("": the gateway's default) */
    long long factor;
    json_object *env;     /* the client's environment, as strings (owned) */
    json_object *plugins; /* the session's plugins (owned) */
    json_object *record;  /* what is recorded: the "start" field of the record (owned) */
} start_req_t;

static void
start_free(start_req_t *q)
{
    json_object_put(q->env);
    json_object_put(q->plugins);
    json_object_put(q->record);
}

/* ---- the request ---- */

static bool
opt_type(json_object *v, json_type t)
{
    return !v || json_object_is_type(v, json_type_null) || json_object_is_type(v, t);
}

/* command: a list of strings (V0, V1) or one string (SDK), as argv. */
static json_object *
command_argv(json_object *cmd)
{
    json_object *argv = json_object_new_array();
    if (!cmd || json_object_is_type(cmd, json_type_null))
        return argv;
    if (json_object_is_type(cmd, json_type_string)) {
        char *s = strdup(json_object_get_string(cmd));
        for (char *save = NULL, *t = strtok_r(s, " \t\n", &save); t;
             t = strtok_r(NULL, " \t\n", &save))
            json_object_array_add(argv, json_object_new_string(t));
        free(s);
    } else if (json_object_is_type(cmd, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(cmd); i++) {
            json_object *a = json_object_array_get_idx(cmd, i);
            if (!json_object_is_type(a, json_type_string)) {
                json_object_put(argv);
                return NULL;
            }
            json_object_array_add(argv, json_object_get(a));
        }
    } else {
        json_object_put(argv);
        return NULL;
    }
    if (json_object_array_length(argv) > OH_CMD_ARGS_MAX) {
        json_object_put(argv);
        return NULL;
    }
    return argv;
}

/* V0's action_execution_server flags that a sandpipe session can follow: --plugins and
 * --no-enable-browser. --working-dir, --username and --user-id stay in the recorded command:
 * sessions run as the sandbox's user in /workspace (what V0 asks for by default). */
static void
command_flags(json_object *argv, json_object *applied, json_object *plugins)
{
    bool browser = true;
    size_t n = json_object_array_length(argv);
    for (size_t i = 0; i < n; i++) {
        const char *a = json_object_get_string(json_object_array_get_idx(argv, i));
        if (!strcmp(a, "--no-enable-browser")) {
            browser = false;
        } else if (!strcmp(a, "--plugins")) {
            for (; i + 1 < n; i++) {
                const char *p = json_object_get_string(json_object_array_get_idx(argv, i + 1));
                if (!strncmp(p, "--", 2))
                    break;
                json_object_array_add(plugins, json_object_new_string(p));
            }
        }
    }
    if (browser)
        json_object_array_add(plugins, json_object_new_string("browser"));
    json_set_bool(applied, "enable_browser", browser);
}

/* environment: an object; values strings (numbers and booleans as their text, null dropped). */
static json_object *
environment(json_object *v, json_object *names)
{
    json_object *env = json_object_new_object();
    if (!v || !json_object_is_type(v, json_type_object))
        return env; /* none (start_parse checked the type) */
    json_object_object_foreach(v, k, val)
    {
        size_t kl = strlen(k);
        if (!kl || kl > OH_ENV_NAME_MAX || strchr(k, '=') ||
            json_object_is_type(val, json_type_object) ||
            json_object_is_type(val, json_type_array)) {
            json_object_put(env);
            return NULL;
        }
        if (json_object_is_type(val, json_type_null))
            continue;
        json_set_str(env, k, json_object_get_string(val));
        json_object_array_add(names, json_object_new_string(k));
    }
    return env;
}

#define BAD(...)                                                                                   \
    do {                                                                                           \
        api_failf(r, ERR_BAD_REQ, __VA_ARGS__);                                                    \
        return -1;                                                                                 \
    } while (0)

/* The --oh-memory/--oh-cpu/--oh-pids limits that are configured, scaled by factor, into o. */
static void
set_limits(json_object *o, long long factor)
{
    if (g_api.oh.memory > 0)
        json_set_int(o, "memory", g_api.oh.memory * factor);
    if (g_api.oh.cpu > 0)
        json_set_int(o, "cpu", g_api.oh.cpu * factor);
    if (g_api.oh.pids > 0)
        json_set_int(o, "pids", g_api.oh.pids * factor);
}

static int
start_parse(api_req_t *r, json_object *b, start_req_t *q)
{
    json_object *sid = json_get(b, "session_id"), *image = json_get(b, "image"),
                *cmd = json_get(b, "command"), *wd = json_get(b, "working_dir"),
                *env = json_get(b, "environment"), *rf = json_get(b, "resource_factor");
    /* "batch" would be shadowed by GET /sessions/batch */
    bool sid_str = sid && json_object_is_type(sid, json_type_string);
    if (!opt_type(sid, json_type_string) ||
        (sid_str && (!oh_sid_ok(json_object_get_string(sid)) ||
                     !strcmp(json_object_get_string(sid), "batch"))))
        BAD("session_id must be 1 to %d of [A-Za-z0-9._:@+-], not \"batch\"", OH_SID_MAX);
    if (sid_str)
        snprintf(q->sid, sizeof q->sid, "%s", json_object_get_string(sid));
    else
        oh_random_hex(q->sid, sizeof q->sid, "oh-", 8);
    if (!opt_type(image, json_type_string) ||
        (image && json_object_get_string_len(image) >= (int)sizeof q->image))
        BAD("image must be a string of at most %zu bytes", sizeof q->image - 1);
    snprintf(q->image, sizeof q->image, "%s",
             image && json_object_is_type(image, json_type_string) ? json_object_get_string(image)
                                                                   : OH_PROFILE);
    err_t ierr = {0};
    int ie = oh_image_map(q->image, q->session_image, sizeof q->session_image, &ierr);
    if (ie == -ERR_NOT_FOUND) {
        api_failf(r, ERR_NOT_FOUND, "%s", ierr.msg);
        return -1;
    }
    if (ie < 0)
        BAD("%s", ierr.msg);
    if (!opt_type(wd, json_type_string))
        BAD("working_dir must be a string");
    if (!opt_type(env, json_type_object))
        BAD("environment must be an object of strings");
    q->factor = 1;
    if (rf && !json_object_is_type(rf, json_type_null)) {
        double f = json_object_get_double(rf);
        if ((!json_object_is_type(rf, json_type_int) &&
             !json_object_is_type(rf, json_type_double)) ||
            f < 1 || f > OH_FACTOR_MAX || f != (double)(long long)f)
            BAD("resource_factor must be an integer from 1 to %d", OH_FACTOR_MAX);
        q->factor = (long long)f;
    }
    static const char *const ints[] = {"run_as_user", "run_as_group", "fs_group"};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!opt_type(json_get(b, ints[i]), json_type_int))
            BAD("%s must be an integer", ints[i]);
    if (!opt_type(json_get(b, "runtime_class"), json_type_string) ||
        !opt_type(json_get(b, "image_pull_policy"), json_type_string))
        BAD("runtime_class and image_pull_policy must be strings");

    json_object *argv = command_argv(cmd);
    if (!argv)
        BAD("command must be a string or a list of at most %d strings", OH_CMD_ARGS_MAX);
    json_object *names = json_object_new_array();
    q->env = environment(env, names);
    if (!q->env) {
        json_object_put(argv);
        json_object_put(names);
        BAD("environment: names must be 1 to %d bytes without '=', values strings",
            OH_ENV_NAME_MAX);
    }
    /* Recorded as asked (environment by name only: values may be secrets). */
    q->record = json_object_new_object();
    json_set(q->record, "command", cmd ? json_object_get(cmd) : NULL);
    static const char *const kept[] = {"working_dir",  "runtime_class", "run_as_user",
                                       "run_as_group", "fs_group",      "image_pull_policy"};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        json_object *v = json_get(b, kept[i]);
        json_set(q->record, kept[i], v ? json_object_get(v) : NULL);
    }
    json_set_int(q->record, "resource_factor", q->factor);
    json_set(q->record, "environment_keys", names);
    /* What the session is made with. */
    json_object *applied = json_object_new_object();
    q->plugins = json_object_new_array();
    command_flags(argv, applied, q->plugins);
    json_object_put(argv);
    json_set_str(applied, "profile", OH_PROFILE);
    json_set_str(applied, "working_dir", OH_WORKSPACE);
    json_set(applied, "plugins", json_object_get(q->plugins));
    json_set_int(applied, "idle_timeout", g_api.oh.idle_timeout);
    json_set_str(applied, "idle_action", "pause");
    /* limits not configured here are the gateway's defaults, scaled there by the factor */
    json_set_int(applied, "resource_factor", q->factor);
    set_limits(applied, q->factor);
    json_set(q->record, "sandpipe", applied);
    return 0;
}

/* ---- a new runtime ---- */

/* session.create's params: the client's env plus what a Runtime API injects. */
static json_object *
create_params(const start_req_t *q, const char *rid, const char *key, const char *url)
{
    json_object *env = json_object_new_object();
    json_object_object_foreach(q->env, k, v) json_set(env, k, json_object_get(v));
    char idle[32];
    snprintf(idle, sizeof idle, "%d", g_api.oh.idle_timeout);
    json_set_str(env, "SESSION_API_KEY", key);
    json_set_str(env, "OH_SESSION_API_KEYS_0", key);
    json_set_str(env, "RUNTIME_ID", rid);
    json_set_str(env, "RUNTIME_URL", url);
    json_set_str(env, "VSCODE_PORT", OH_VSCODE_PORT);
    json_set_str(env, "OH_RUNTIME_IDLE_TIMEOUT_SECONDS", idle);
    json_object *p = json_object_new_object();
    json_set_str(p, "profile", OH_PROFILE);
    if (q->session_image[0])
        json_set_str(p, "image", q->session_image);
    json_set(p, "env", env);
    /* 0: the gateway's own default limits, scaled by the gateway; a runtime with those and
     * resource_factor 1 comes from the warm pool */
    set_limits(p, q->factor);
    if (q->factor != 1)
        json_set_int(p, "resource_factor", q->factor);
    json_set_int(p, "idle_timeout", g_api.oh.idle_timeout);
    json_set_str(p, "idle_action", "pause");
    json_set(p, "plugins", json_object_get(q->plugins));
    return p;
}

/* Replaces the record of q->sid (none, or one naming runtime oldrid) by a new one, in a
 * WATCH/MULTI transaction. Returns 1 written, 0 lost a race (someone else changed it), -1. */
static int
record_write(api_req_t *r, const start_req_t *q, const char *oldrid, const char **fv, int nfv)
{
    char key[160];
    snprintf(key, sizeof key, "sp:oh:session:{%s}", q->sid);
    redisReply *x = api_redis_cmdf(r, "WATCH %s", key);
    if (!x)
        return -1;
    freeReplyObject(x);
    x = api_redis_cmdf(r, "HGET %s runtime_id", key);
    if (!x)
        return -1;
    bool same = x->type == REDIS_REPLY_STRING ? !strcmp(x->str, oldrid) : !*oldrid;
    freeReplyObject(x);
    if (!same) {
        if ((x = api_redis_cmdf(r, "UNWATCH")))
            freeReplyObject(x);
        return 0;
    }
    const char *argv[32] = {"HSET", key};
    int argc = 2;
    for (int i = 0; i < nfv && argc < 32; i++)
        argv[argc++] = fv[i];
    redisReply *m = api_redis_cmdf(r, "MULTI");
    redisReply *d = m ? api_redis_cmdf(r, "DEL %s", key) : NULL;
    redisReply *h = d ? api_redis_cmd(r, 0, argc, argv) : NULL;
    redisReply *e = h ? api_redis_cmdf(r, "EXEC") : NULL;
    int rc = !e ? -1 : e->type == REDIS_REPLY_ARRAY ? 1 : 0;
    redisReply *all[] = {m, d, h, e};
    for (size_t i = 0; i < 4; i++)
        if (all[i])
            freeReplyObject(all[i]);
    return rc;
}

static void
record_drop(api_req_t *r, const char *sid, const char *rid)
{
    redisReply *x;
    if ((x = api_redis_cmdf(r, "DEL sp:oh:session:{%s}", sid)))
        freeReplyObject(x);
    if ((x = api_redis_cmdf(r, "DEL sp:oh:runtime:{%s}", rid)))
        freeReplyObject(x);
    if ((x = api_redis_cmdf(r, "ZREM sp:oh:sessions %s", sid)))
        freeReplyObject(x);
}

/* Waits up to timeout_ms for session sid to leave STARTING (READY, ERROR, STOPPED, PAUSED), on
 * its event stream (XREAD BLOCK from the start; status events only are parsed). Gives up
 * silently: the caller reads the record as it is. */
static void
wait_started(api_req_t *r, const char *sid, int timeout_ms)
{
    char key[160], last[48] = "0-0";
    snprintf(key, sizeof key, "sp:session:{%s}:events", sid);
    int64_t deadline = clock_mono_ms() + timeout_ms;
    for (int64_t left; *sid && (left = deadline - clock_mono_ms()) > 0;) {
        char block[24];
        snprintf(block, sizeof block, "%lld", (long long)left);
        const char *argv[] = {"XREAD", "COUNT", "64", "BLOCK", block, "STREAMS", key, last};
        redisReply *x = api_redis_cmd(r, (int)left + 5000, 8, argv);
        if (!x)
            return;
        bool done = x->type != REDIS_REPLY_ARRAY; /* nil: the time is up */
        for (size_t i = 0; !done && x->elements == 1 && i < x->element[0]->element[1]->elements;
             i++) {
            redisReply *ent = x->element[0]->element[1]->element[i];
            snprintf(last, sizeof last, "%s", ent->element[0]->str);
            for (size_t k = 0; k + 1 < ent->element[1]->elements; k += 2) {
                const char *t = ent->element[1]->element[k + 1]->str;
                if (!strstr(t, "\"status\""))
                    continue;
                err_t err = {0};
                json_object *ev = json_parse_lossy(t, ent->element[1]->element[k + 1]->len, &err);
                const char *st = json_get_str(ev, "status", "");
                done = !strcmp(json_get_str(ev, "type", ""), "status") &&
                       (!strcmp(st, "READY") || !strcmp(st, "ERROR") || !strcmp(st, "STOPPED") ||
                        !strcmp(st, "PAUSED"));
                json_object_put(ev);
            }
        }
        freeReplyObject(x);
        if (done)
            return;
    }
}

/* Makes a new runtime for q. Returns 1 after replying, 0 to try again (lost a race). */
static int
create(api_req_t *r, const start_req_t *q, const char *oldrid)
{
    int cap = oh_capacity_reserve(r, q->sid);
    if (cap <= 0) {
        if (cap < 0)
            api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        else
            api_failf(r, ERR_AT_CAPACITY, "%d runtimes are running: try again later",
                      g_api.oh.max_runtimes);
        return 1;
    }
    char gw[128];
    int found = api_gateway_pick(r, gw, sizeof gw, NULL, 0); /* none: fail before any record */
    if (found <= 0) {
        if (cap == 2)
            oh_capacity_release(r, q->sid);
        if (found < 0)
            api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        else
            api_failf(r, ERR_NO_GATEWAY, "no gateway is running");
        return 1;
    }
    char rid[32], key[OH_KEY_HEX + 1], url[512], created[32];
    oh_random_hex(rid, sizeof rid, OH_RID_PREFIX, OH_RID_HEX / 2);
    oh_random_hex(key, sizeof key, "", OH_KEY_HEX / 2);
    oh_url(r, rid, url, sizeof url);
    snprintf(created, sizeof created, "%.6f", clock_wall());
    const char *fv[] = {
        "runtime_id", rid,
        "owner",      r->claims.sub,
        "key",        key,
        "session",    "",
        "gateway",    gw,
        "image",      q->image,
        "created",    created,
        "start",      json_object_to_json_string_ext(q->record, JSON_C_TO_STRING_PLAIN)};
    int w = record_write(r, q, oldrid, fv, (int)(sizeof fv / sizeof fv[0]));
    if (w <= 0) {
        if (cap == 2)
            oh_capacity_release(r, q->sid);
        if (w < 0)
            api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        return w < 0;
    }
    redisReply *x;
    if ((x = api_redis_cmdf(r, "SET sp:oh:runtime:{%s} %s", rid, q->sid)))
        freeReplyObject(x);
    if (*oldrid && (x = api_redis_cmdf(r, "DEL sp:oh:runtime:{%s}", oldrid)))
        freeReplyObject(x);
    if ((x = api_redis_cmdf(r, "ZADD sp:oh:sessions %s %s", created, q->sid)))
        freeReplyObject(x);

    /* "early": answered as soon as the session exists; its start is followed in its record */
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "session.create");
    json_set_bool(req, "early", true);
    json_set(req, "params", create_params(q, rid, key, url));
    api_gw_call_t c = {
        .req = req, .timeout_s = g_api.gw_timeout, .owner = r->claims.sub, .role = "user"};
    api_err_t e;
    json_object *res = api_gateway_create(r, &c, &e);
    json_object_put(req);
    if (!res && c.unsent) {
        record_drop(r, q->sid, rid); /* nothing was created: leave nothing behind */
        if (cap == 2)
            oh_capacity_release(r, q->sid);
        api_fail(r, &e);
        return 1;
    }
    oh_rt_t rt;
    if (oh_load(r, q->sid, &rt) == 1) {
        /* a failure on the way (timeout, the gateway gone) leaves the start unknown: it is
         * recorded as failed, which a later /start replaces */
        oh_apply_create_reply(r, &rt, res, &e);
        if (res && g_api.oh.start_wait_ms > 0)
            wait_started(r, json_get_str(res, "id", ""), g_api.oh.start_wait_ms);
    }
    oh_rt_free(&rt);
    json_object_put(res);
    if (oh_load(r, q->sid, &rt) == 1)
        api_reply_json(r, 200, oh_rt_json(r, &rt));
    else
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
    oh_rt_free(&rt);
    return 1;
}

/* ---- the route ---- */

void
api_oh_start(api_req_t *r, char **params)
{
    (void)params;
    if (oh_auth(r) < 0)
        return;
    if (!strcmp(r->claims.role, "viewer")) {
        api_failf(r, ERR_FORBIDDEN, "viewer tokens cannot start runtimes");
        return;
    }
    if (r->body_len > API_JSON_BODY_MAX) {
        api_failf(r, ERR_TOO_BIG, "request body over %u bytes", (unsigned)API_JSON_BODY_MAX);
        return;
    }
    err_t err = {0};
    json_object *b = r->body_len ? json_parse(r->body, r->body_len, &err) : NULL;
    if (!b || !json_object_is_type(b, json_type_object)) {
        json_object_put(b);
        api_failf(r, ERR_BAD_REQ, "the body must be a JSON object%s%s", err.msg[0] ? ": " : "",
                  err.msg);
        return;
    }
    start_req_t q = {0};
    int parsed = start_parse(r, b, &q);
    json_object_put(b);
    if (parsed < 0 || !api_redis_get(r, false)) {
        if (parsed == 0)
            api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        start_free(&q);
        return;
    }
    for (int attempt = 0; attempt < OH_START_RETRIES && !r->status; attempt++) {
        oh_rt_t rt;
        int f = oh_load(r, q.sid, &rt);
        if (f < 0) {
            api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        } else if (f == 1 && oh_live(&rt)) {
            if (!oh_visible(r, &rt, true))
                api_failf(r, ERR_CONFLICT, "session_id %s is in use", q.sid);
            else if (strcmp(rt.status, "paused") != 0 || oh_resume(r, &rt) == 0)
                oh_reply_reloaded(r, &rt);
        } else {
            char oldrid[32];
            snprintf(oldrid, sizeof oldrid, "%s", f == 1 ? rt.rid : "");
            create(r, &q, oldrid);
        }
        oh_rt_free(&rt);
    }
    if (!r->status)
        api_failf(r, ERR_BUSY, "session_id %s is being started concurrently: try again", q.sid);
    start_free(&q);
}
