/* pool.c — warm sandboxes. See pool.h. */
#include "pool.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "exec_link.h"
#include "gw.h"
#include "json_util.h"
#include "redis_client.h"
#include "sandbox_destroy.h"
#include "sandbox_start.h"
#include "sandbox/sandbox_disk.h"
#include "sandbox/sandbox_host.h"
#include "xalloc.h"

#define POOL_PROFILE "default"

typedef struct warming {
    struct warming *next;
    sandbox_t sb;
    exec_link_t *link; /* NULL while the provider is still starting it */
} warming_t;

static warming_t *warming;
static int nwarming;

/* Warm sandboxes of the ready list whose link from warming up stays open: handed to the session
 * that claims one (pool_take_link), which then waits for no connection and no HELLO. One link
 * (its read buffer) per warm sandbox, as a session of it would hold. */
typedef struct kept_link {
    struct kept_link *next;
    sandbox_t sb; /* as this gateway made it: a claim of it reads no host record */
    exec_link_t *link;
    bool unlisted; /* its RPUSH failed: discarded at the next tick (on_pushed) */
} kept_link_t;

static kept_link_t *kept_links;
static long long ready_count = -1; /* last known length of our list */
static unsigned long long claims, misses;
static uv_timer_t refill_timer;
static bool refill_timer_init;

#define REFILL_DELAY_MS 100 /* after a claim: let the claimed session come up before a spawn */

static void
pool_key(char *out, size_t cap, const char *profile)
{
    snprintf(out, cap, "sp:pool:{%s}:%s", profile, g_gw.cfg.id);
}

/* The sandbox's disk: params' "disk" (bytes; a session cannot opt out with 0) or the
 * gateway's --disk scaled by resource_factor, at most --disk-max. */
static int
disk_param(json_object *params, int64_t factor, int64_t *out, err_t *err)
{
    json_object *v = json_get(params, "disk");
    if (v && !json_object_is_type(v, json_type_int))
        return err_set(err, ERR_BAD_REQ, "disk must be an integer (bytes)");
    *out = v ? json_object_get_int64(v) : g_gw.cfg.default_disk * factor;
    if (v && g_gw.cfg.max_disk < SANDBOX_DISK_MIN)
        return err_set(err, ERR_BAD_REQ, "disk: this gateway gives sandboxes no disk of their own");
    if ((v || *out) && (*out < SANDBOX_DISK_MIN || *out > g_gw.cfg.max_disk))
        return err_set(err, ERR_BAD_REQ, "disk must be from %lld to %lld bytes%s", SANDBOX_DISK_MIN,
                       (long long)g_gw.cfg.max_disk,
                       v ? "" : " (resource_factor x the gateway's --disk is more)");
    return 0;
}

const char *
pool_image(json_object *params)
{
    json_object *v = json_get(params, "image");
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                         : g_gw.cfg.image;
}

typedef struct {
    pool_made_cb cb;
    void *ud;
} made_t;

/* Degraded isolation (no cgroup, no disk) is the host's state, the same for every sandbox:
 * logged when it first shows or changes, and kept in the sandbox's JSON (session info). */
static void
log_warning(const sandbox_t *sb)
{
    static char last_warning[sizeof sb->warning];
    if (sb->warning[0] && strcmp(sb->warning, last_warning) != 0) {
        GW_LOG("sandbox %s: %s", sb->id, sb->warning);
        snprintf(last_warning, sizeof last_warning, "%s", sb->warning);
    }
}

/* A sandbox just made: its host record first (sandbox_host.h), nobody's yet; without one no
 * restart could find it again, so it is not used. code: the provider's when it failed. */
static void
made(pool_made_cb cb, void *ud, const sandbox_t *sb, int code, const char *error)
{
    err_t err = {0};
    if (sb && sandbox_host_save(sb, "", &err) < 0) {
        sandbox_discard(sb);
        sb = NULL;
        code = err.code;
        error = err.msg;
    }
    if (sb)
        log_warning(sb);
    cb(ud, sb, sb ? 0 : code ? code : EIO, error ? error : "the sandbox did not start");
}

static void
on_made(void *ud, const sandbox_t *sb, const char *error)
{
    made_t *m = ud;
    made(m->cb, m->ud, sb, EIO, error);
    free(m);
}

static void
on_started(void *ud, const sandbox_t *sb, int code, const char *msg)
{
    made_t *m = ud;
    made(m->cb, m->ud, sb, code, msg);
    free(m);
}

int
pool_start_sandbox(const char *profile, json_object *params, pool_made_cb cb, void *ud, err_t *err)
{
    uint8_t r[6];
    if (getrandom(r, sizeof r, 0) != sizeof r)
        memset(r, 0, sizeof r);
    char id[64];
    snprintf(id, sizeof id, "sb-%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4], r[5]);
    /* resource_factor (OpenHands' 1, 2, 4, 8) scales the default limits */
    int64_t f = json_get_int(params, "resource_factor", 1);
    if (f < 1 || f > 16)
        return err_set(err, ERR_BAD_REQ, "resource_factor must be an integer from 1 to 16");
    int64_t disk = 0;
    if (disk_param(params, f, &disk, err) < 0)
        return -ERR_BAD_REQ;
    const char *image = pool_image(params);
    char rootfs[PATH_MAX];
    int e = image_resolve(g_gw.cfg.image_store, image, rootfs, sizeof rootfs, err);
    if (e < 0)
        return e;
    sandbox_spec_t spec = {
        .id = id,
        .profile = profile,
        .image = image,
        .rootfs = rootfs,
        .env = json_get(params, "env"),
        .memory_bytes = json_get_int(params, "memory", g_gw.cfg.default_memory * f),
        .cpu_millicores = json_get_int(params, "cpu", g_gw.cfg.default_cpu * f),
        .pids_max = json_get_int(params, "pids", g_gw.cfg.default_pids * f),
        .disk_bytes = disk,
        .state_dir = g_gw.cfg.state_dir,
        .executor_path = g_gw.cfg.executor_path,
        .uid_base = g_gw.cfg.sandbox_uid_base,
        .uid_count = g_gw.cfg.sandbox_uid_count,
        .shared_uid = g_gw.cfg.sandbox_shared_uid,
        .root_inside = g_gw.cfg.root_inside,
    };
    const char *pname = json_get_str(params, "provider", g_gw.cfg.provider);
    const provider_t *p = provider_find(pname);
    if (!p)
        return err_set(err, ERR_BAD_REQ, "unknown provider \"%s\"", pname);
    made_t *m = xmalloc(sizeof *m);
    m->cb = cb;
    m->ud = ud;
    /* a provider that waits on a daemon starts on the loop; the others' blocking create runs
     * on a worker (sandbox_start.h): either way cb comes later, on the loop */
    e = p->create_async ? p->create_async(&spec, on_made, m, err)
                        : sandbox_start(p, &spec, on_started, m, err);
    if (e < 0)
        free(m);
    return e;
}

static void
warming_remove(warming_t *w)
{
    for (warming_t **pp = &warming; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            nwarming--;
            break;
        }
    if (w->link)
        exec_link_free(w->link);
    free(w);
}

static void
kept_remove(kept_link_t *k, bool free_link)
{
    for (kept_link_t **pp = &kept_links; *pp; pp = &(*pp)->next)
        if (*pp == k) {
            *pp = k->next;
            break;
        }
    if (free_link)
        exec_link_free(k->link);
    free(k);
}

/* Its executor went away while it waited in the ready list: a claim finds it dead (alive). */
static void
on_kept_down(void *ud, const char *why)
{
    kept_link_t *k = ud;
    GW_LOG("pool: warm sandbox %s: its executor's link went down (%s): not claimed warm", k->sb.id,
           why);
    kept_remove(k, true);
}

static const exec_link_cbs_t kept_cbs = {.on_down = on_kept_down};

static kept_link_t *
kept_find(const char *sandbox_id)
{
    for (kept_link_t *k = kept_links; k; k = k->next)
        if (strcmp(k->sb.id, sandbox_id) == 0)
            return k;
    return NULL;
}

exec_link_t *
pool_take_link(const char *sandbox_id)
{
    kept_link_t *k = kept_find(sandbox_id);
    if (!k)
        return NULL;
    exec_link_t *l = k->link;
    kept_remove(k, false);
    return l;
}

/* The RPUSH listing a warm sandbox failed (Redis gone or refusing): nobody can claim it, so it
 * would wait here for ever with its sandbox running. Marked, and discarded at the next tick
 * (this may run inside the link's own HELLO callback, when the push fails at once); the pool
 * warms another once Redis is back. A push Redis took whose answer was lost: a claim before
 * the tick takes it (and clears the mark, on_pop), one after finds it dead and takes another. */
static void
on_pushed(redisReply *r, void *ud)
{
    char *id = ud;
    kept_link_t *k = r && r->type != REDIS_REPLY_ERROR ? NULL : kept_find(id);
    if (k) {
        GW_LOG("pool: warm sandbox %s was not listed in Redis (%s): discarded", id,
               r ? r->str : "no connection");
        k->unlisted = true;
    }
    free(id);
}

static void
discard_unlisted(void)
{
    for (kept_link_t *k = kept_links, *next; k; k = next) {
        next = k->next;
        if (!k->unlisted)
            continue;
        sandbox_t sb = k->sb;
        kept_remove(k, true);
        sandbox_discard(&sb);
        if (ready_count > 0)
            ready_count--;
    }
}

static void
on_warm_up(void *ud)
{
    warming_t *w = ud;
    kept_link_t *k = xcalloc(1, sizeof *k);
    k->sb = w->sb;
    k->link = w->link;
    w->link = NULL;
    exec_link_rebind(k->link, &kept_cbs, k);
    k->next = kept_links;
    kept_links = k;
    char key[160];
    pool_key(key, sizeof key, POOL_PROFILE);
    json_object *o = sandbox_to_json(&w->sb);
    if (ready_count >= 0)
        ready_count++;
    redis_client_cmd(on_pushed, xstrdup(w->sb.id), "RPUSH %s %s", key,
                     json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    warming_remove(w);
}

static void
on_warm_down(void *ud, const char *why)
{
    warming_t *w = ud;
    GW_LOG("pool: sandbox %s did not come up: %s", w->sb.id, why);
    sandbox_discard(&w->sb);
    warming_remove(w);
}

static const exec_link_cbs_t warm_cbs = {.on_up = on_warm_up, .on_down = on_warm_down};

static void
on_warm_made(void *ud, const sandbox_t *sb, int code, const char *msg)
{
    (void)code;
    warming_t *w = ud;
    if (!sb) {
        GW_LOG("pool: cannot start a sandbox: %s", msg);
        warming_remove(w);
        return;
    }
    w->sb = *sb;
    w->link = exec_link_new(&warm_cbs, w);
    exec_link_connect(w->link, w->sb.socket_path, 15000);
}

static void
warm_one(void)
{
    warming_t *w = xcalloc(1, sizeof *w);
    err_t err = {0};
    w->next = warming;
    warming = w;
    nwarming++;
    if (pool_start_sandbox(POOL_PROFILE, NULL, on_warm_made, w, &err) < 0) {
        GW_LOG("pool: cannot start a sandbox: %s", err.msg);
        warming_remove(w);
    }
}

static void
on_len(redisReply *r, void *ud)
{
    (void)ud;
    if (!r || r->type != REDIS_REPLY_INTEGER)
        return;
    ready_count = r->integer;
    for (long long have = ready_count + nwarming; have < g_gw.cfg.pool_size; have++)
        warm_one();
}

void
pool_tick(void)
{
    discard_unlisted();
    if (g_gw.cfg.pool_size <= 0 || g_gw.stopping)
        return;
    char key[160];
    pool_key(key, sizeof key, POOL_PROFILE);
    redis_client_cmd(on_len, NULL, "LLEN %s", key);
}

typedef struct {
    pool_claim_cb cb;
    void *ud;
} claim_t;

static void
on_refill_timer(uv_timer_t *t)
{
    (void)t;
    pool_tick();
}

static void
on_pop(redisReply *r, void *ud)
{
    claim_t *c = ud;
    sandbox_t sb;
    err_t err = {0};
    bool got = false;
    if (r && r->type == REDIS_REPLY_STRING) {
        json_object *o = json_tokener_parse(r->str);
        /* One this gateway warmed, its link still up: the sandbox is as made and its executor
         * alive (the link goes when it does), so neither its host record is read back nor its
         * socket tried. Redis' word is only the id looked up. Others (left by an earlier run of
         * this gateway) are checked as before. */
        kept_link_t *k = kept_find(json_get_str(o, "id", ""));
        const provider_t *p;
        if (k) {
            sb = k->sb;
            got = true;
            k->unlisted = false; /* its push was taken after all, only the answer was lost */
        } else {
            got = o && sandbox_from_record(o, g_gw.cfg.state_dir, NULL, &sb, &err) == 0 &&
                  (p = provider_find(sb.provider)) && p->alive(&sb);
        }
        json_object_put(o);
    }
    claims++;
    if (!got)
        misses++;
    if (ready_count > 0)
        ready_count--;
    c->cb(c->ud, got ? &sb : NULL);
    free(c);
    /* Starting a sandbox forks and waits for bwrap to exec: do it a moment later, not while
     * the session that just claimed one is connecting. */
    if (!refill_timer_init) {
        uv_timer_init(g_gw.loop, &refill_timer);
        refill_timer_init = true;
    }
    uv_timer_start(&refill_timer, on_refill_timer, REFILL_DELAY_MS, 0);
}

/* KEYS none; ARGV: the pool list, the session. The warm sandbox leaves the pool and enters the
 * session's record in one step: a gateway dying in between leaves it nowhere. */
/* The sandbox leaves the pool and enters the record in one step; env_pending with it when the
 * session has an env of its own (a warm sandbox has the default one until bash.env: a peer
 * restoring the record must know it is not the session's yet). */
static const char CLAIM_LUA[] =
    "local v = redis.call('LPOP', ARGV[1])\n"
    "if v then\n"
    "  local k = 'sp:session:{' .. ARGV[2] .. '}'\n"
    "  redis.call('HSET', k, 'sandbox', v)\n"
    "  if ARGV[3] == '1' then redis.call('HSET', k, 'env_pending', '1') end\n"
    "end\n"
    "return v\n";

bool
pool_serves(const char *profile)
{
    return strcmp(profile, POOL_PROFILE) == 0 && g_gw.cfg.pool_size > 0;
}

void
pool_claim(const char *profile, const char *session_id, bool env_pending, pool_claim_cb cb,
           void *ud)
{
    if (!pool_serves(profile)) {
        cb(ud, NULL);
        return;
    }
    claim_t *c = xmalloc(sizeof *c);
    c->cb = cb;
    c->ud = ud;
    char key[160];
    pool_key(key, sizeof key, profile);
    const char *argv[] = {"EVAL", CLAIM_LUA, "0", key, session_id, env_pending ? "1" : "0"};
    redis_client_cmdv(on_pop, c, 6, argv, NULL); /* Redis gone: on_pop at once, empty */
}

/* The ready list as pool_restore read it: ids only, at most RESTORED_MAX (a list longer
 * than any --pool is not this gateway's doing; the rest count as not owned). */
#define RESTORED_MAX 256
static char (*restored)[sizeof(((sandbox_t *)0)->id)];
static size_t nrestored;

void
pool_restore(void)
{
    redisContext *rc = redis_client_sync_connect(g_gw.cfg.redis);
    if (!rc)
        return;
    char key[160];
    pool_key(key, sizeof key, POOL_PROFILE);
    redisReply *r = redisCommand(rc, "LRANGE %s 0 %d", key, RESTORED_MAX - 1);
    free(restored);
    restored = xcalloc(RESTORED_MAX, sizeof *restored);
    nrestored = 0;
    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        json_object *o = json_tokener_parse(r->element[i]->str ? r->element[i]->str : "");
        sandbox_t sb;
        err_t err = {0};
        if (o && sandbox_from_record(o, g_gw.cfg.state_dir, NULL, &sb, &err) == 0)
            snprintf(restored[nrestored++], sizeof restored[0], "%s", sb.id);
        json_object_put(o);
    }
    freeReplyObject(r);
    redisFree(rc);
}

bool
pool_owns(const char *sandbox_id)
{
    for (warming_t *w = warming; w; w = w->next)
        if (!strcmp(w->sb.id, sandbox_id))
            return true;
    for (size_t i = 0; i < nrestored; i++)
        if (!strcmp(restored[i], sandbox_id))
            return true;
    return false;
}

void
pool_start(void)
{
    pool_tick();
}

void
pool_adopt(const char *record)
{
    json_object *o = json_tokener_parse(record);
    sandbox_t sb;
    err_t err = {0};
    const provider_t *p = NULL;
    if (!o || sandbox_from_record(o, g_gw.cfg.state_dir, NULL, &sb, &err) < 0 ||
        !(p = provider_find(sb.provider))) {
        GW_LOG("pool: a peer's warm sandbox record is unusable: %s", err.msg);
    } else if (strcmp(sb.image, g_gw.cfg.image) == 0 && p->alive(&sb)) {
        char key[160];
        pool_key(key, sizeof key, POOL_PROFILE);
        redis_client_cmd(NULL, NULL, "RPUSH %s %s", key, record);
        if (ready_count >= 0)
            ready_count++;
    } else {
        sandbox_destroy(p, &sb, NULL, NULL, false);
    }
    json_object_put(o);
}

json_object *
pool_describe(void)
{
    json_object *o = json_object_new_object(), *p = json_object_new_object();
    json_set_int(p, "target", g_gw.cfg.pool_size);
    json_set_int(p, "ready", ready_count < 0 ? 0 : ready_count);
    json_set_int(p, "warming", nwarming);
    json_set_int(p, "claims", (int64_t)claims);
    json_set_int(p, "misses", (int64_t)misses);
    json_set(o, POOL_PROFILE, p);
    return o;
}

void
pool_stop(void)
{
    if (refill_timer_init) {
        uv_timer_stop(&refill_timer);
        uv_close((uv_handle_t *)&refill_timer, NULL);
        refill_timer_init = false;
    }
    free(restored);
    restored = NULL;
    nrestored = 0;
    while (kept_links)
        kept_remove(kept_links, true);
    /* Those a provider is still starting stay: its answer comes to them (the loop is ending). */
    for (warming_t *w = warming, *next; w; w = next) {
        next = w->next;
        if (w->link)
            warming_remove(w);
    }
}
