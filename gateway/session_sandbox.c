/* session_sandbox.c — where a new session's sandbox comes from: a warm one claimed from the
 * pool (the default limits and image), or one started for it, either only once Redis holds the
 * session's record; bound to the session in the
 * host's record of the sandbox (sandbox/sandbox_host.h) before the session uses it, then its
 * executor link. A start that cannot go on fails the session (session_start_failed). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "pool.h"
#include "redis_client.h"
#include "sandbox_destroy.h"
#include "sandbox/sandbox_host.h"
#include "session_int.h"
#include "xalloc.h"

static void
attach_sandbox(gw_session_t *s, const sandbox_t *sb)
{
    /* the host's record says whose it is now: a restart re-attaches it to this session only */
    err_t err = {0};
    if (sandbox_host_save(sb, s->id, &err) < 0) {
        sandbox_discard(sb);
        session_start_failed(s, err.code, err.msg);
        return;
    }
    s->sb = *sb;
    s->prov = provider_find(sb->provider);
    if (!s->prov)
        s->prov = &provider_local;
    session_save(s);
    if (s->pending_env) { /* cleared once applied (session_actions.c) */
        session_save_field(s, "env_pending", "1");
        s->env_pending_saved = true;
    }
    /* A warm sandbox's link from warming up, still open: the session's now, up already. */
    exec_link_t *warm = pool_take_link(sb->id);
    if (warm) {
        exec_link_free(s->link);
        s->link = warm;
        exec_link_rebind(warm, &session_link_cbs, s);
        if (exec_link_up(warm)) {
            session_link_cbs.on_up(s);
            return;
        }
    }
    exec_link_connect(s->link, s->sb.socket_path, 15000);
}

void
session_start_failed(gw_session_t *s, int code, const char *msg)
{
    /* kept in the record: who asked for the session may have had its answer already (a
     * control request with "early", docs/protocol.md) and reads why from there */
    session_save_field(s, "error", msg);
    session_set_status(s, SESSION_ERROR, msg);
    session_ready_cb cb = s->ready_cb;
    s->ready_cb = NULL;
    if (cb)
        cb(s->ready_ud, NULL, code, msg);
    session_delete(s, msg);
}

static void
on_fresh(void *ud, const sandbox_t *sb, int code, const char *msg)
{
    char *id = ud;
    gw_session_t *s = session_find(id);
    if (!s || s->deleting) {
        session_sandbox_orphaned(id, sb);
        free(id);
        return;
    }
    free(id);
    s->taking = false;
    if (!sb)
        session_start_failed(s, code, msg);
    else
        attach_sandbox(s, sb);
}

static void
on_claimed(void *ud, const sandbox_t *sb)
{
    char *id = ud;
    gw_session_t *s = session_find(id);
    if (!s || s->deleting) {
        /* a claimed one: the record holds it (pool_claim), the session's end is the sandbox's */
        session_sandbox_orphaned(id, sb);
        free(id);
        return;
    }
    free(id);
    s->taking = false;
    if (sb) {
        /* A warm sandbox started with the default env: the session's own comes once its
         * executor answers (bash.env, before READY). */
        json_object *env = json_get(s->params, "env");
        if (env && json_object_is_type(env, json_type_object) && json_object_object_length(env))
            s->pending_env = json_object_get(env);
        attach_sandbox(s, sb);
        return;
    }
    /* No warm sandbox: start one now (the session is looked up again when it is there: it may
     * have been deleted meanwhile). */
    err_t err = {0};
    char *again = xstrdup(s->id);
    s->taking = true;
    if (pool_start_sandbox(s->profile, s->params, on_fresh, again, &err) < 0) {
        free(again);
        s->taking = false;
        session_start_failed(s, err.code, err.msg);
    }
}

/* Custom limits or another image need a sandbox made for them; the pool serves the default
 * ones (env is applied to a warm sandbox once claimed). */
static bool
needs_own_sandbox(json_object *params)
{
    return json_get(params, "memory") || json_get(params, "cpu") || json_get(params, "pids") ||
           json_get(params, "disk") || json_get_int(params, "resource_factor", 1) != 1 ||
           strcmp(pool_image(params), g_gw.cfg.image) != 0;
}

/* The record is in Redis (or Redis is gone: it is written again on reconnection): a sandbox is
 * started for the session now. */
static void
on_recorded(redisReply *r, void *ud)
{
    (void)r;
    on_claimed(ud, NULL);
}

void
session_take_sandbox(gw_session_t *s)
{
    /* The sandbox is taken once Redis holds the record: a gateway dying before that leaves no
     * sandbox behind, and after it a record a peer finds (session_restore.c). A claim is a
     * script on the connection the record went out on, so Redis runs it after the record's
     * HSET: sent at once, no round trip waited for. A sandbox started here waits for a PING's
     * answer instead (Redis gone: answered at once, as the claim is). */
    json_object *env = json_get(s->params, "env");
    bool own_env =
        env && json_object_is_type(env, json_type_object) && json_object_object_length(env);
    s->taking = true;
    if (!needs_own_sandbox(s->params) && pool_serves(s->profile))
        pool_claim(s->profile, s->id, own_env, on_claimed, xstrdup(s->id));
    else
        redis_client_cmd(on_recorded, xstrdup(s->id), "PING");
}
