/* takeover.c — peers on one host take over a dead gateway's sessions. See takeover.h.
 * Runs on the gateway's loop: a timer for the scan, async Redis for the scan and the claim, the
 * blocking connection of session_restore.c for re-attaching what was claimed (as at a restart:
 * a few commands per session). */
#include "takeover.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw.h"
#include "pool.h"
#include "redis_client.h"
#include "sandbox/provider.h"
#include "session.h"
#include "xalloc.h"

/* What this gateway is, as peers compare it (filled once). */
static struct {
    char boot[64];  /* /proc/sys/kernel/random/boot_id: pids mean nothing across a reboot */
    char pidns[64]; /* /proc/self/ns/pid: nor across pid namespaces (containers) */
    char pid[16], pid_start[32], started[32];
} self;

static uv_timer_t scan_timer;
static bool scanning, scan_in_flight;
static double connected_at; /* since when Redis answers (monotonic s; 0: not connected) */

/* Peers whose heartbeat is missing while their pid lives: since when (monotonic s). */
#define HUNG_TRACK 64
static struct {
    char id[64];
    double since;
} missing[HUNG_TRACK];

/* ---- the scripts (EVAL: Redis caches them by their SHA) ---- */

/* ARGV: id, now, ttl_ms, host, pid, pid_start, boot, pidns, started. Returns {the id of the
 * gateway that took this one's sessions, the id of one that marked them ERROR} (each nil if
 * none), clearing both marks. */
static const char HEARTBEAT_LUA[] =
    "local k = 'sp:gateway:' .. ARGV[1]\n"
    "redis.call('SET', k, ARGV[2], 'PX', ARGV[3])\n"
    "redis.call('SADD', 'sp:gateways', ARGV[1])\n"
    "redis.call('HSET', k .. ':info', 'host', ARGV[4], 'pid', ARGV[5], 'pid_start', ARGV[6],\n"
    "           'boot', ARGV[7], 'pidns', ARGV[8], 'started', ARGV[9])\n"
    "local by = redis.call('GET', k .. ':taken')\n"
    "local orphaned = redis.call('GET', k .. ':orphaned')\n"
    "redis.call('DEL', k .. ':taken', k .. ':orphaned')\n"
    "return {by, orphaned}\n";

/* ARGV: me, pool key prefix. For every other gateway: {id, owned (sessions + warm sandboxes),
 * heartbeat (0/1), host, pid, pid_start, boot, pidns}. */
static const char SCAN_LUA[] =
    "local out = {}\n"
    "for _, g in ipairs(redis.call('SMEMBERS', 'sp:gateways')) do\n"
    "  if g ~= ARGV[1] then\n"
    "    local k = 'sp:gateway:' .. g\n"
    "    local n = redis.call('SCARD', k .. ':sessions') + redis.call('LLEN', ARGV[2] .. g)\n"
    "    local i = redis.call('HMGET', k .. ':info', 'host', 'pid', 'pid_start', 'boot', 'pidns')\n"
    "    out[#out + 1] = {g, tostring(n), tostring(redis.call('EXISTS', k)), i[1] or '',\n"
    "                     i[2] or '', i[3] or '', i[4] or '', i[5] or ''}\n"
    "  end\n"
    "end\n"
    "return out\n";

/* ARGV: dead, me, pid_dead (1: its pid is gone, its heartbeat may still be there), seen pid,
 * seen pid_start, pool key prefix. Atomic: moves the sessions (those still naming the dead one
 * as their gateway) to me, pops its warm pool, marks it taken. Returns {sessions, pool entries},
 * or false when it is not ours to take (alive, restarted, or claimed by another peer first:
 * then its set is empty and this returns two empty lists). */
static const char CLAIM_LUA[] =
    "local d, me = ARGV[1], ARGV[2]\n"
    "local k = 'sp:gateway:' .. d\n"
    "if redis.call('EXISTS', k) == 1 then\n"
    "  if ARGV[3] ~= '1' then return false end\n"
    "  local i = redis.call('HMGET', k .. ':info', 'pid', 'pid_start')\n"
    "  if i[1] ~= ARGV[4] or i[2] ~= ARGV[5] then return false end\n"
    "  redis.call('DEL', k)\n"
    "end\n"
    "local moved = {}\n"
    "for _, s in ipairs(redis.call('SMEMBERS', k .. ':sessions')) do\n"
    "  local h = 'sp:session:{' .. s .. '}'\n"
    "  if redis.call('HGET', h, 'gateway') == d then\n"
    "    redis.call('HSET', h, 'gateway', me)\n"
    "    redis.call('SADD', 'sp:gateway:' .. me .. ':sessions', s)\n"
    "    moved[#moved + 1] = s\n"
    "  end\n"
    "end\n"
    "redis.call('DEL', k .. ':sessions')\n"
    "local pool = {}\n"
    "while true do\n"
    "  local v = redis.call('LPOP', ARGV[6] .. d)\n"
    "  if not v then break end\n"
    "  pool[#pool + 1] = v\n"
    "end\n"
    "if #moved > 0 or #pool > 0 then redis.call('SET', k .. ':taken', me, 'EX', 86400) end\n"
    "return {moved, pool}\n";

/* The dead gateway's host has no live gateway left: its sessions are to be marked
 * ERROR_RUNTIME_DISCONNECTED (their sandboxes are out of reach, not known to have failed: that
 * host's gateway, back, re-attaches those still running), in two steps around the fence (closing
 * its Redis connections, as for a claim), so that a gateway that was only cut off writes nothing
 * the status events could collide with: everything it wrote is in the stream before them, and
 * once it is back it registers, which the second step checks.
 * Step 1, ARGV: dead, me. Returns 1 when this gateway is to mark it (once: the orphaned mark). */
static const char ORPHAN_MARK_LUA[] =
    "local k = 'sp:gateway:' .. ARGV[1]\n"
    "if redis.call('EXISTS', k) == 1 then return 0 end\n"
    "if redis.call('SCARD', k .. ':sessions') == 0 then return 0 end\n"
    "if not redis.call('SET', k .. ':orphaned', ARGV[2], 'NX') then return 0 end\n"
    "return 1\n";

/* Step 2, ARGV: dead, me, now, message. While it is still dead and the mark still ours: each of
 * its sessions neither ended nor in error already becomes ERROR_RUNTIME_DISCONNECTED (field, one
 * status event with the next seq, sp:status). Returns how many. */
static const char ORPHAN_WRITE_LUA[] =
    "local d = ARGV[1]\n"
    "local k = 'sp:gateway:' .. d\n"
    "if redis.call('EXISTS', k) == 1 then return 0 end\n"
    "if redis.call('GET', k .. ':orphaned') ~= ARGV[2] then return 0 end\n"
    "local n = 0\n"
    "for _, s in ipairs(redis.call('SMEMBERS', k .. ':sessions')) do\n"
    "  local h = 'sp:session:{' .. s .. '}'\n"
    "  local st = redis.call('HGET', h, 'status')\n"
    "  if redis.call('HGET', h, 'gateway') == d and st and st ~= 'STOPPED' and\n"
    "     string.sub(st, 1, 5) ~= 'ERROR' then\n"
    "    redis.call('HSET', h, 'status', 'ERROR_RUNTIME_DISCONNECTED')\n"
    "    local last = redis.call('XREVRANGE', h .. ':events', '+', '-', 'COUNT', 1)\n"
    "    local seq = 1\n"
    "    if #last == 1 then seq = tonumber(string.match(last[1][1], '%d+$')) + 1 end\n"
    "    local ev = '{\"seq\":' .. seq .. ',\"ts\":' .. ARGV[3] ..\n"
    "      ',\"type\":\"status\",\"status\":\"ERROR_RUNTIME_DISCONNECTED\",\"message\":' ..\n"
    "      cjson.encode(ARGV[4]) ..\n"
    "      ',\"gateway\":' .. cjson.encode(d) .. '}'\n"
    "    redis.call('XADD', h .. ':events', '0-' .. seq, 'e', ev)\n"
    "    redis.call('PUBLISH', 'sp:status',\n"
    "               '{\"session\":\"' .. s .. '\",\"status\":\"ERROR_RUNTIME_DISCONNECTED\"}')\n"
    "    n = n + 1\n"
    "  end\n"
    "end\n"
    "return n\n";

/* Step 1 undone, ARGV: dead, me: step 2 could not run (no connection for it), so that a
 * later scan, here or elsewhere, marks them (the mark alone would stop every peer for good). */
static const char ORPHAN_RELEASE_LUA[] =
    "local k = 'sp:gateway:' .. ARGV[1] .. ':orphaned'\n"
    "if redis.call('GET', k) == ARGV[2] then redis.call('DEL', k) end\n"
    "return 0\n";

#define POOL_PREFIX "sp:pool:{default}:"

/* ---- who we are ---- */

static void
read_line(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    if (fgets(out, (int)cap, f))
        out[strcspn(out, "\r\n")] = '\0';
    fclose(f);
}

void
takeover_default_host_id(char *out, size_t cap)
{
    read_line("/etc/machine-id", out, cap);
    if (out[0])
        return;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(out, cap, "%s", host[0] ? host : "localhost");
}

static void
self_init(void)
{
    if (self.pid[0])
        return;
    read_line("/proc/sys/kernel/random/boot_id", self.boot, sizeof self.boot);
    ssize_t n = readlink("/proc/self/ns/pid", self.pidns, sizeof self.pidns - 1);
    self.pidns[n > 0 ? n : 0] = '\0';
    uint64_t start = 0;
    provider_proc_stat(getpid(), NULL, &start, NULL);
    snprintf(self.pid, sizeof self.pid, "%d", (int)getpid());
    snprintf(self.pid_start, sizeof self.pid_start, "%" PRIu64, start);
    snprintf(self.started, sizeof self.started, "%.3f", gw_wall());
}

static void
heartbeat_argv(const char **argv, char *now, size_t cap, char *ttl, size_t tcap)
{
    snprintf(now, cap, "%.3f", gw_wall());
    snprintf(ttl, tcap, "%d", TAKEOVER_TTL_MS);
    const char *v[] = {"EVAL",     HEARTBEAT_LUA,    "0",      g_gw.cfg.id,    now,
                       ttl,        g_gw.cfg.host_id, self.pid, self.pid_start, self.boot,
                       self.pidns, self.started};
    memcpy(argv, v, sizeof v);
}

#define HB_ARGC 12

/* The heartbeat script's answer: what peers did to this gateway's sessions meanwhile. */
typedef enum { MARK_NONE, MARK_TAKEN, MARK_ORPHANED } mark_t;

static mark_t
read_marks(const redisReply *r)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        if (r && r->type == REDIS_REPLY_ERROR)
            GW_LOG("heartbeat: %s", r->str);
        return MARK_NONE;
    }
    if (r->element[0]->type == REDIS_REPLY_STRING) {
        GW_LOG("%s: %s took this gateway's sessions over while it was down, stalled or cut off",
               g_gw.cfg.id, r->element[0]->str);
        return MARK_TAKEN;
    }
    if (r->element[1]->type == REDIS_REPLY_STRING) {
        GW_LOG("%s: %s marked this gateway's sessions ERROR_RUNTIME_DISCONNECTED while "
               "it was cut off",
               g_gw.cfg.id, r->element[1]->str);
        return MARK_ORPHANED;
    }
    return MARK_NONE;
}

/* Taken: the peer owns them now; let go without a word to Redis (their sandboxes live on).
 * Orphaned: a peer elsewhere wrote an ERROR event into their streams with seqs this gateway
 * would use again: read them back from Redis as after a restart (executors re-attached from
 * what is stored; a status change to READY follows once each link is up). */
static void
apply_marks(mark_t m)
{
    if (m == MARK_NONE || sessions_count() == 0 || g_gw.stopping)
        return;
    sessions_drop();
    if (m == MARK_ORPHANED)
        sessions_restore();
}

static mark_t
register_on(redisContext *rc)
{
    self_init();
    const char *argv[HB_ARGC];
    char now[32], ttl[16];
    heartbeat_argv(argv, now, sizeof now, ttl, sizeof ttl);
    redisReply *r = redisCommandArgv(rc, HB_ARGC, argv, NULL);
    if (!r)
        GW_LOG("register: redis unreachable");
    mark_t m = read_marks(r);
    freeReplyObject(r);
    return m;
}

bool
takeover_register(redisContext *rc)
{
    return register_on(rc) != MARK_NONE;
}

void
takeover_recheck(void)
{
    redisContext *rc = redis_client_sync_connect(g_gw.cfg.redis);
    if (!rc)
        return;
    mark_t m = register_on(rc);
    redisFree(rc);
    apply_marks(m);
}

static void
on_heartbeat(redisReply *r, void *ud)
{
    (void)ud;
    if (r && !g_gw.stopping)
        apply_marks(read_marks(r));
}

void
takeover_heartbeat(void)
{
    self_init();
    const char *argv[HB_ARGC];
    char now[32], ttl[16];
    heartbeat_argv(argv, now, sizeof now, ttl, sizeof ttl);
    redis_client_cmdv(on_heartbeat, NULL, HB_ARGC, argv, NULL);
}

/* ---- judging peers ---- */

typedef struct {
    const char *id, *host, *pid, *pid_start, *boot, *pidns;
    long long owned;
    bool beating;
} peer_t;

static double *
missing_since(const char *id, bool beating)
{
    int free_slot = -1;
    for (int i = 0; i < HUNG_TRACK; i++) {
        if (!strcmp(missing[i].id, id)) {
            if (beating)
                missing[i].id[0] = '\0';
            return beating ? NULL : &missing[i].since;
        }
        if (!missing[i].id[0] && free_slot < 0)
            free_slot = i;
    }
    if (beating || free_slot < 0)
        return NULL;
    snprintf(missing[free_slot].id, sizeof missing[free_slot].id, "%s", id);
    missing[free_slot].since = gw_now();
    return &missing[free_slot].since;
}

/* 1: its process is gone (or a zombie, or the pid was reused); 0: it runs; -1: cannot tell
 * from here (another host, boot or pid namespace). */
static int
pid_gone(const peer_t *p)
{
    if (strcmp(p->host, g_gw.cfg.host_id) || strcmp(p->boot, self.boot) ||
        strcmp(p->pidns, self.pidns) || atoi(p->pid) <= 0)
        return -1;
    char state = 0;
    uint64_t start = 0;
    if (provider_proc_stat(atoi(p->pid), &state, &start, NULL) < 0)
        return 1;
    return state == 'Z' || state == 'X' || start != strtoull(p->pid_start, NULL, 10);
}

typedef struct {
    char dead[64];
    double t0; /* when the claim was sent (monotonic) */
    bool pid_dead;
} claim_t;

static void
adopt_pool(redisReply *pool)
{
    for (size_t i = 0; pool && i < pool->elements; i++)
        if (pool->element[i]->type == REDIS_REPLY_STRING)
            pool_adopt(pool->element[i]->str);
}

/* A peer judged dead by its heartbeat may only be stalled (stopped, hung, its host cut off):
 * its Redis connections (named sp-gw:<id>, redis_client.c) are closed before we read its
 * sessions' streams, so whatever it writes is either in what we read or refused; it reconnects
 * only to find the taken mark first thing. A pid that is gone has no connections left.
 * Blocking connection rc, like the re-attachment that follows. */
static void
fence(redisContext *rc, const char *dead)
{
    char name[96];
    snprintf(name, sizeof name, " name=sp-gw:%s ", dead);
    redisReply *r = redisCommand(rc, "CLIENT LIST TYPE normal");
    for (const char *line = r && r->type == REDIS_REPLY_STRING ? r->str : NULL; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (!strncmp(line, "id=", 3) && memmem(line, len, name, strlen(name))) {
            char id[32];
            snprintf(id, sizeof id, "%.*s", (int)strcspn(line + 3, " "), line + 3);
            freeReplyObject(redisCommand(rc, "CLIENT KILL ID %s", id));
            GW_LOG("takeover: %s's Redis connection %s closed", dead, id);
        }
        line = end ? end + 1 : NULL;
    }
    freeReplyObject(r);
}

static void
on_claimed(redisReply *r, void *ud)
{
    claim_t *c = ud;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 || g_gw.stopping) {
        if (r && r->type == REDIS_REPLY_ERROR)
            GW_LOG("takeover of %s: %s", c->dead, r->str);
        free(c);
        return;
    }
    redisReply *ids = r->element[0], *pool = r->element[1];
    if (ids->elements == 0 && pool->elements == 0) {
        free(c);
        return;
    }
    /* Re-attached now, before the loop runs again: a client that read the new route from Redis
     * and connects here finds the session. */
    redisContext *rc = redis_client_sync_connect(g_gw.cfg.redis);
    if (rc && !c->pid_dead)
        fence(rc, c->dead);
    adopt_pool(pool);
    size_t ok = 0;
    for (size_t i = 0; i < ids->elements; i++)
        if (ids->element[i]->type == REDIS_REPLY_STRING &&
            session_take_over(rc, ids->element[i]->str, c->dead) == 0)
            ok++;
    if (rc)
        redisFree(rc);
    if (ids->elements == 0) {
        GW_LOG("takeover: %s's %zu warm sandboxes taken over", c->dead, pool->elements);
        free(c);
        return;
    }
    GW_LOG("takeover: %s died (%s); %zu of its %zu sessions and %zu warm sandboxes taken over "
           "in %.1f ms",
           c->dead, c->pid_dead ? "its process is gone" : "its heartbeat expired", ok,
           ids->elements, pool->elements, (gw_now() - c->t0) * 1e3);
    free(c);
}

static void
claim(const peer_t *p, bool pid_dead)
{
    claim_t *c = xcalloc(1, sizeof *c);
    snprintf(c->dead, sizeof c->dead, "%s", p->id);
    c->t0 = gw_now();
    c->pid_dead = pid_dead;
    const char *argv[] = {"EVAL", CLAIM_LUA,    "0",
                          p->id,  g_gw.cfg.id,  pid_dead ? "1" : "0",
                          p->pid, p->pid_start, POOL_PREFIX};
    redis_client_cmdv(on_claimed, c, 9, argv, NULL);
}

typedef struct {
    char dead[64], host[128];
} orphan_t;

static void
on_orphan_marked(redisReply *r, void *ud)
{
    orphan_t *o = ud;
    redisContext *rc = NULL;
    if (r && r->type == REDIS_REPLY_INTEGER && r->integer == 1 && !g_gw.stopping &&
        !(rc = redis_client_sync_connect(g_gw.cfg.redis))) {
        GW_LOG("takeover: %s's sessions not marked yet (no connection for it); trying again",
               o->dead);
        const char *argv[] = {"EVAL", ORPHAN_RELEASE_LUA, "0", o->dead, g_gw.cfg.id};
        redis_client_cmdv(NULL, NULL, 5, argv, NULL);
    } else if (rc) {
        fence(rc, o->dead);
        char now[32], msg[300];
        snprintf(now, sizeof now, "%.6f", gw_wall());
        snprintf(msg, sizeof msg,
                 "the runtime's gateway %.64s is gone and no other gateway runs on its host %.64s",
                 o->dead, o->host);
        const char *argv[] = {"EVAL", ORPHAN_WRITE_LUA, "0", o->dead, g_gw.cfg.id, now, msg};
        redisReply *w = redisCommandArgv(rc, 7, argv, NULL);
        if (w && w->type == REDIS_REPLY_INTEGER && w->integer > 0)
            GW_LOG("%s died and no gateway of its host is left: its %lld sessions are "
                   "ERROR_RUNTIME_DISCONNECTED",
                   o->dead, w->integer);
        else if (w && w->type == REDIS_REPLY_ERROR)
            GW_LOG("marking %s's sessions: %s", o->dead, w->str);
        else if (!w)
            GW_LOG("marking %s's sessions: %s", o->dead, rc->errstr[0] ? rc->errstr : "no answer");
        freeReplyObject(w);
        redisFree(rc);
    }
    free(o);
}

static void
orphan(const peer_t *p)
{
    orphan_t *o = xcalloc(1, sizeof *o);
    snprintf(o->dead, sizeof o->dead, "%s", p->id);
    snprintf(o->host, sizeof o->host, "%s", p->host);
    const char *argv[] = {"EVAL", ORPHAN_MARK_LUA, "0", p->id, g_gw.cfg.id};
    redis_client_cmdv(on_orphan_marked, o, 5, argv, NULL);
}

static bool
str_item(const redisReply *r)
{
    return r->type == REDIS_REPLY_STRING;
}

static void
judge(const peer_t *peers, size_t n)
{
    double now = gw_now();
    /* A missing heartbeat means something only once peers had time to beat on this Redis: not
     * right after it (or we) came back, when every key may have expired meanwhile. */
    bool settled = connected_at > 0 && now - connected_at >= TAKEOVER_SETTLE_MS / 1000.0;
    for (size_t i = 0; i < n; i++) {
        const peer_t *p = &peers[i];
        int gone = pid_gone(p);
        double *since = missing_since(p->id, p->beating);
        double missing_for = since ? now - *since : 0;
        if (p->owned <= 0)
            continue;
        if (!strcmp(p->host, g_gw.cfg.host_id)) {
            bool hung = gone == 0 && missing_for > TAKEOVER_HUNG_MS / 1000.0;
            if (gone == 1 || (gone == -1 && !p->beating && settled) || (hung && settled))
                claim(p, gone == 1);
            continue;
        }
        /* Another host: writing ERROR into its sessions' streams is for a gateway gone for good,
         * not one cut off for a moment (it would have to re-read them, apply_marks). */
        if (p->beating || !settled || missing_for < TAKEOVER_ORPHAN_MS / 1000.0)
            continue;
        bool host_alive = false; /* another gateway of that host beats: it takes over */
        for (size_t k = 0; k < n && !host_alive; k++)
            host_alive = k != i && peers[k].beating && !strcmp(peers[k].host, p->host);
        if (!host_alive)
            orphan(p);
    }
}

static void
on_scan(redisReply *r, void *ud)
{
    (void)ud;
    scan_in_flight = false;
    if (!r || r->type != REDIS_REPLY_ARRAY || g_gw.stopping)
        return;
    peer_t *peers = xcalloc(r->elements + 1, sizeof *peers);
    size_t n = 0;
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *e = r->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements != 8)
            continue;
        bool ok = true;
        for (size_t k = 0; k < 8; k++)
            ok = ok && str_item(e->element[k]);
        if (!ok)
            continue;
        peer_t *p = &peers[n++];
        p->id = e->element[0]->str;
        p->owned = atoll(e->element[1]->str);
        p->beating = !strcmp(e->element[2]->str, "1");
        p->host = e->element[3]->str;
        p->pid = e->element[4]->str;
        p->pid_start = e->element[5]->str;
        p->boot = e->element[6]->str;
        p->pidns = e->element[7]->str;
    }
    judge(peers, n);
    free(peers);
}

static void
on_scan_timer(uv_timer_t *t)
{
    (void)t;
    if (!redis_client_connected())
        connected_at = 0;
    else if (connected_at == 0)
        connected_at = gw_now();
    if (scan_in_flight || g_gw.stopping || !redis_client_connected())
        return;
    scan_in_flight = true;
    const char *argv[] = {"EVAL", SCAN_LUA, "0", g_gw.cfg.id, POOL_PREFIX};
    if (redis_client_cmdv(on_scan, NULL, 5, argv, NULL) < 0)
        scan_in_flight = false;
}

void
takeover_start(void)
{
    if (scanning)
        return;
    scanning = true;
    uv_timer_init(g_gw.loop, &scan_timer);
    uv_timer_start(&scan_timer, on_scan_timer, TAKEOVER_SCAN_MS, TAKEOVER_SCAN_MS);
}

void
takeover_stop(void)
{
    if (!scanning)
        return;
    scanning = false;
    uv_timer_stop(&scan_timer);
    uv_close((uv_handle_t *)&scan_timer, NULL);
}
