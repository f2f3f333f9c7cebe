/* session_restore.c — after a gateway restart, or when taking over a dead peer's sessions
 * (takeover.c): re-attach every session Redis says this gateway owns, continue its sequence
 * numbers, resume an action that was in flight. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "redis_client.h"
#include "net_policy.h"
#include "sandbox/sandbox_host.h"
#include "session_int.h"
#include "session_ports.h"
#include "takeover.h"
#include "xalloc.h"

/* ---- restart: re-attach from Redis ---- */

#define SCAN_PAGE 500

typedef struct {
    uint64_t seq;        /* the action event's seq */
    json_object *action; /* the action as submitted */
    uint64_t out_end;    /* output offset its stored output events reach */
} pending_t;

typedef struct {
    pending_t *v;
    size_t n;
} pending_list_t;

/* Bytes of output an event holds ("data" is UTF-8 text, "data_b64" base64). */
static uint64_t
output_bytes(json_object *ev)
{
    json_object *d = json_get(ev, "data");
    if (d)
        return (uint64_t)json_object_get_string_len(d);
    const char *b = json_get_str(ev, "data_b64", "");
    size_t len = strlen(b);
    size_t pad = len >= 1 && b[len - 1] == '=' ? (len >= 2 && b[len - 2] == '=' ? 2 : 1) : 0;
    return len / 4 * 3 - pad;
}

/* Walks the stream back from its end to the last observation. Actions are run one at a time,
 * in order, so every action after that observation has none yet: the first may be running on
 * the executor (its output in the stream reaches out_end), the others never started. */
static void
scan_unobserved(redisContext *rc, const char *id, pending_list_t *pl)
{
    char end[40] = "+";
    uint64_t ends[64] = {0}, acts[64] = {0}; /* output ends seen, per action (newest first) */
    int nends = 0;
    for (int page = 0; page < 100000; page++) {
        redisReply *r =
            redisCommand(rc, "XREVRANGE sp:session:{%s}:events %s - COUNT %d", id, end, SCAN_PAGE);
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements == 0) {
            freeReplyObject(r);
            break;
        }
        bool stop = false;
        uint64_t last = 0;
        for (size_t i = 0; i < r->elements && !stop; i++) {
            redisReply *item = r->element[i];
            if (item->type != REDIS_REPLY_ARRAY || item->elements != 2)
                continue;
            const char *sid = item->element[0]->str, *dash = strchr(sid, '-');
            last = strtoull(dash ? dash + 1 : sid, NULL, 10);
            redisReply *f = item->element[1];
            json_object *ev = NULL;
            for (size_t k = 0; k + 1 < f->elements; k += 2)
                if (!strcmp(f->element[k]->str, "e"))
                    ev = json_tokener_parse(f->element[k + 1]->str);
            const char *type = json_get_str(ev, "type", "");
            uint64_t act = (uint64_t)json_get_int(ev, "action", 0);
            if (!strcmp(type, "observation")) {
                stop = true;
            } else if (!strcmp(type, "action")) {
                pl->v = xrealloc(pl->v, (pl->n + 1) * sizeof *pl->v);
                memmove(pl->v + 1, pl->v, pl->n * sizeof *pl->v);
                pl->v[0].seq = last;
                pl->v[0].action = json_object_get(json_get(ev, "action"));
                pl->v[0].out_end = 0;
                for (int k = 0; k < nends; k++)
                    if (acts[k] == last)
                        pl->v[0].out_end = ends[k];
                pl->n++;
            } else if ((!strcmp(type, "output") || !strcmp(type, "truncated")) && act) {
                uint64_t e = !strcmp(type, "output")
                                 ? (uint64_t)json_get_int(ev, "offset", 0) + output_bytes(ev)
                                 : (uint64_t)json_get_int(ev, "to_offset", 0);
                int k = 0;
                while (k < nends && acts[k] != act)
                    k++;
                if (k == nends && nends < 64) {
                    acts[nends++] = act;
                    ends[k] = 0;
                }
                if (k < nends && e > ends[k])
                    ends[k] = e;
            }
            json_object_put(ev);
        }
        freeReplyObject(r);
        if (stop || last <= 1)
            break;
        snprintf(end, sizeof end, "(0-%" PRIu64, last);
    }
}

/* Actions that were queued or running when the gateway died: the first is taken over on the
 * executor (or run, if it never got there), the rest queued again, in order. Without a
 * sandbox, each gets an error observation: nobody waits forever. */
static void
resume_actions(gw_session_t *s, pending_list_t *pl, bool sandbox_alive)
{
    for (size_t i = 0; i < pl->n; i++) {
        pending_t *p = &pl->v[i];
        if (!sandbox_alive) {
            json_object *e = session_event_new("observation");
            json_set_int(e, "action", (int64_t)p->seq);
            json_set(e, "observation",
                     session_error_observation(
                         "ERROR: the runtime is gone: the sandbox stopped while its gateway was "
                         "down."));
            event_log_append(s->log, e);
            json_object_put(p->action);
        } else if (i == 0) {
            s->reattach_seq = p->seq;
            s->reattach_off = p->out_end;
            s->reattach_action = p->action;
        } else {
            session_enqueue(s, p->action, p->seq);
            json_object_put(p->action);
        }
    }
    free(pl->v);
}

/* A session whose start its gateway never finished (it died or restarted first), and that cannot
 * be finished from what is stored: ERROR with why in its record ("error") and stream, for who
 * asked for it (the API finds it by its create key) and every reader; it leaves our set. */
static void
fail_start(redisContext *rc, const char *id, uint64_t seq, const char *why)
{
    char ended[32], ts[32];
    snprintf(ended, sizeof ended, "%.6f", gw_wall());
    snprintf(ts, sizeof ts, "%" PRIu64, seq);
    json_object *e = json_object_new_object();
    json_set_int(e, "seq", (int64_t)seq);
    json_set(e, "ts", json_object_new_double(gw_wall()));
    json_set_str(e, "type", "status");
    json_set_str(e, "status", session_status_text(SESSION_ERROR));
    json_set_str(e, "message", why);
    json_set_str(e, "gateway", g_gw.cfg.id);
    freeReplyObject(redisCommand(rc, "HSET sp:session:{%s} status %s error %s ended %s", id,
                                 session_status_text(SESSION_ERROR), why, ended));
    freeReplyObject(redisCommand(rc, "XADD sp:session:{%s}:events 0-%s e %s", id, ts,
                                 json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN)));
    json_object_put(e);
    freeReplyObject(redisCommand(rc, "PUBLISH sp:status {\"session\":\"%s\",\"status\":\"%s\"}", id,
                                 session_status_text(SESSION_ERROR)));
    if (g_gw.cfg.retention > 0) {
        freeReplyObject(redisCommand(rc, "EXPIRE sp:session:{%s} %d", id, g_gw.cfg.retention));
        freeReplyObject(
            redisCommand(rc, "EXPIRE sp:session:{%s}:events %d", id, g_gw.cfg.retention));
        freeReplyObject(redisCommand(rc, "ZADD sp:sessions:ended %s %s", ended, id));
    }
    GW_LOG("restore: session %s: %s", id, why);
}

/* Re-attaches session id from its record (this gateway owns it in Redis; from: the gateway it
 * is taken from, NULL after a restart). NULL when there is nothing to re-attach (stopped, or no
 * valid sandbox record: then it leaves our set; a start never finished is marked ERROR). */
static gw_session_t *
restore_one(redisContext *rc, const char *id, const char *from)
{
    redisReply *h = redisCommand(rc, "HGETALL sp:session:{%s}", id);
    const char *owner = "", *profile = "default", *sbjson = NULL, *plugins = NULL,
               *plugin_status = NULL, *terms = NULL, *network = NULL, *public_ports = NULL;
    session_status_t status = SESSION_NEW;
    int idle = g_gw.cfg.idle_timeout, life = g_gw.cfg.max_lifetime;
    bool idle_pause = false, lifetime_pause = false, env_pending = false;
    int auto_resume = 0;
    double created = gw_wall();
    for (size_t k = 0; h && h->type == REDIS_REPLY_ARRAY && k + 1 < h->elements; k += 2) {
        const char *f = h->element[k]->str, *v = h->element[k + 1]->str;
        if (!strcmp(f, "owner"))
            owner = v;
        else if (!strcmp(f, "profile"))
            profile = v;
        else if (!strcmp(f, "sandbox"))
            sbjson = v;
        else if (!strcmp(f, "status"))
            status = session_status_parse(v);
        else if (!strcmp(f, "idle_timeout"))
            idle = atoi(v);
        else if (!strcmp(f, "max_lifetime"))
            life = atoi(v);
        else if (!strcmp(f, "idle_action"))
            idle_pause = !strcmp(v, "pause");
        else if (!strcmp(f, "lifetime_action"))
            lifetime_pause = !strcmp(v, "pause");
        else if (!strcmp(f, "auto_resume"))
            auto_resume = atoi(v) > 0 ? atoi(v) : 0;
        else if (!strcmp(f, "created"))
            created = atof(v);
        else if (!strcmp(f, "plugins"))
            plugins = v;
        else if (!strcmp(f, "plugin_status"))
            plugin_status = v;
        else if (!strcmp(f, "terms"))
            terms = v;
        else if (!strcmp(f, "network"))
            network = v;
        else if (!strcmp(f, "public_ports"))
            public_ports = v;
        else if (!strcmp(f, "env_pending"))
            env_pending = !strcmp(v, "1");
    }
    redisReply *last = redisCommand(rc, "XREVRANGE sp:session:{%s}:events + - COUNT 1", id);
    uint64_t next_seq = 1;
    if (last && last->type == REDIS_REPLY_ARRAY && last->elements == 1) {
        const char *sid = last->element[0]->element[0]->str;
        const char *dash = strchr(sid, '-');
        next_seq = strtoull(dash ? dash + 1 : sid, NULL, 10) + 1;
    }
    sandbox_t sb;
    err_t err = {0};
    json_object *sbo = sbjson ? json_tokener_parse(sbjson) : NULL;
    /* The record names the sandbox; what it is on this host comes from our state directory */
    bool has_sb = sbo && sandbox_from_record(sbo, g_gw.cfg.state_dir, id, &sb, &err) == 0;
    json_object_put(sbo);
    /* never READY yet (RUNTIME_STARTED also follows a resume: only a warm sandbox's env
     * makes it a start) */
    bool starting = status == SESSION_STARTING;
    char who[96], why[300] = "";
    snprintf(who, sizeof who, from ? "its gateway %.64s died" : "its gateway restarted", from);
    if (starting && !has_sb && h && h->type == REDIS_REPLY_ARRAY && h->elements > 0 && !sbjson)
        snprintf(why, sizeof why, "the session did not start: %s before its sandbox was started",
                 who);
    else if (sbjson && !has_sb && status != SESSION_STOPPED)
        snprintf(why, sizeof why, "its sandbox cannot be re-attached: %.200s", err.msg);
    else if ((starting || status == SESSION_STARTED) && has_sb && env_pending) /* not stored */
        snprintf(why, sizeof why,
                 "the session did not start: %s before the session's env was set in its sandbox",
                 who);
    const provider_t *sbp = has_sb ? provider_find(sb.provider) : NULL;
    if (starting && sbp && !why[0] && !sbp->alive(&sb))
        snprintf(why, sizeof why, "the session did not start: %s and its sandbox is gone", who);
    if (why[0])
        fail_start(rc, id, next_seq, why);
    if (!has_sb || why[0] || status == SESSION_STOPPED) {
        freeReplyObject(h);
        freeReplyObject(last);
        /* A sandbox still on the host (stopped: the gateway died or stopped during its
         * destroy) is destroyed; the session leaves the set once it is gone. */
        if (sbp)
            session_sandbox_destroy(id, sbp, &sb);
        else
            freeReplyObject(redisCommand(rc, "SREM sp:gateway:%s:sessions %s", g_gw.cfg.id, id));
        return NULL;
    }
    gw_session_t *s = session_alloc(id, owner, profile, next_seq);
    s->status = status; /* as it was: restoring is no change of status */
    s->idle_timeout = idle;
    s->max_lifetime = life;
    s->idle_pause = idle_pause;
    s->lifetime_pause = lifetime_pause;
    s->auto_resume = auto_resume;
    s->created = created;
    session_ports_public_parse(s, public_ports);
    s->params = json_object_new_object();
    json_object *asked = plugins ? json_tokener_parse(plugins) : NULL;
    if (asked && json_object_is_type(asked, json_type_array))
        json_object_object_add(s->params, "plugins", asked);
    else
        json_object_put(asked);
    /* its network policy, read again as a client's would be (Redis is not trusted with it): a
     * record without one, or with a malformed one, has none */
    json_object *net = network ? json_tokener_parse(network) : NULL;
    net_policy_t np;
    err_t nerr = {0};
    if (net && net_policy_parse(net, NET_NONE, &np, &nerr) == 0) {
        json_object_object_add(s->params, "network", net_policy_to_json(&np));
        net_policy_free(&np);
    } else if (network) {
        GW_LOG("restore: session %s: network policy %s: no network", id, nerr.msg);
    }
    json_object_put(net);
    /* as it was: the executor's first word is compared with it (no events again) */
    json_object *told = plugin_status ? json_tokener_parse(plugin_status) : NULL;
    if (told && json_object_is_type(told, json_type_object))
        s->plugin_status = told;
    else
        json_object_put(told);
    s->sb = sb;
    s->prov = provider_find(sb.provider);
    if (!s->prov)
        s->prov = &provider_local;
    pending_list_t pl = {0};
    scan_unobserved(rc, id, &pl);
    GW_LOG("restore: session %s (events from %" PRIu64 ", %zu unfinished actions)", id, next_seq,
           pl.n);
    bool alive = s->prov->alive(&s->sb);
    resume_actions(s, &pl, alive);
    if (alive) /* its executor kept them: taken back once the link is up */
        session_terms_restore(s, terms);
    if (alive && status == SESSION_PAUSED) {
        s->connect_on_resume = true; /* a frozen executor cannot say HELLO */
    } else if (alive) {
        exec_link_connect(s->link, s->sb.socket_path, 5000);
    } else {
        /* once: a status event only if the status changes (restarts add none) */
        session_set_status(s, SESSION_DISCONNECTED, "the sandbox is gone");
    }
    freeReplyObject(h);
    freeReplyObject(last);
    return s;
}

void
sessions_restore(void)
{
    redisContext *rc = redis_client_sync_connect(g_gw.cfg.redis);
    if (!rc) {
        GW_LOG("restore: redis unreachable; no sessions re-attached");
        return;
    }
    /* First say who runs under this id now: from here on no peer takes these sessions over (a
     * peer that already did has emptied our set, which is what we read next). */
    takeover_register(rc);
    redisReply *ids = redisCommand(rc, "SMEMBERS sp:gateway:%s:sessions", g_gw.cfg.id);
    for (size_t i = 0; ids && ids->type == REDIS_REPLY_ARRAY && i < ids->elements; i++)
        if (ids->element[i]->type == REDIS_REPLY_STRING)
            restore_one(rc, ids->element[i]->str, NULL);
    freeReplyObject(ids);
    redisFree(rc);
}

int
session_take_over(redisContext *rc, const char *id, const char *from)
{
    if (session_find(id))
        return 0; /* already ours in memory (claimed twice): nothing to redo */
    gw_session_t *s = rc ? restore_one(rc, id, from) : NULL;
    if (!s)
        return -1;
    /* One status event (the status itself is unchanged): who serves the session now, and
     * why, in its stream for every reader. */
    char msg[256];
    snprintf(msg, sizeof msg, "gateway %s is gone; %s took the session over", from, g_gw.cfg.id);
    json_object *e = session_event_new("status");
    json_set_str(e, "status", session_status_text(s->status));
    json_set_str(e, "message", msg);
    json_set_str(e, "gateway", g_gw.cfg.id);
    json_set_str(e, "previous_gateway", from);
    event_log_append(s->log, e);
    return 0;
}

bool
sessions_own_sandbox(const char *sandbox_id)
{
    for (gw_session_t *s = g_gw.sessions; s; s = s->next)
        if (!strcmp(s->sb.id, sandbox_id))
            return true;
    return false;
}

/* Whether the provider JSON text names sandbox_id. */
static bool
names_sandbox(const char *json, const char *sandbox_id)
{
    json_object *o = json ? json_tokener_parse(json) : NULL;
    bool same = o && !strcmp(json_get_str(o, "id", ""), sandbox_id);
    json_object_put(o);
    return same;
}

/* Every key matching pattern (SCAN, bounded) into cb until it says true. */
static bool
scan_keys(redisContext *rc, const char *pattern, bool (*cb)(redisContext *, const char *, void *),
          void *ud)
{
    char cursor[32] = "0";
    for (int rounds = 0; rounds < 100000; rounds++) {
        redisReply *r = redisCommand(rc, "SCAN %s MATCH %s COUNT 1000", cursor, pattern);
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            freeReplyObject(r);
            return true; /* Redis failing: say held, remove nothing */
        }
        snprintf(cursor, sizeof cursor, "%s", r->element[0]->str ? r->element[0]->str : "0");
        bool found = false;
        for (size_t i = 0; !found && i < r->element[1]->elements; i++)
            if (r->element[1]->element[i]->type == REDIS_REPLY_STRING)
                found = cb(rc, r->element[1]->element[i]->str, ud);
        freeReplyObject(r);
        if (found)
            return true;
        if (!strcmp(cursor, "0"))
            return false;
    }
    return true;
}

static bool
set_holds(redisContext *rc, const char *key, void *ud)
{
    redisReply *ids = redisCommand(rc, "SMEMBERS %s", key);
    bool held = false;
    for (size_t i = 0; !held && ids && ids->type == REDIS_REPLY_ARRAY && i < ids->elements; i++) {
        redisReply *h =
            redisCommand(rc, "HMGET sp:session:{%s} sandbox status", ids->element[i]->str);
        held = h && h->type == REDIS_REPLY_ARRAY && h->elements == 2 &&
               h->element[0]->type == REDIS_REPLY_STRING &&
               !(h->element[1]->type == REDIS_REPLY_STRING &&
                 !strcmp(h->element[1]->str, "STOPPED")) &&
               names_sandbox(h->element[0]->str, ud);
        freeReplyObject(h);
    }
    freeReplyObject(ids);
    return held;
}

static bool
list_holds(redisContext *rc, const char *key, void *ud)
{
    redisReply *l = redisCommand(rc, "LRANGE %s 0 -1", key);
    bool held = false;
    for (size_t i = 0; !held && l && l->type == REDIS_REPLY_ARRAY && i < l->elements; i++)
        held = l->element[i]->type == REDIS_REPLY_STRING && names_sandbox(l->element[i]->str, ud);
    freeReplyObject(l);
    return held;
}

bool
sessions_sandbox_held(const char *sandbox_id)
{
    redisContext *rc = redis_client_sync_connect(g_gw.cfg.redis);
    if (!rc)
        return true; /* cannot tell: keep it */
    bool held = scan_keys(rc, "sp:gateway:*:sessions", set_holds, (void *)sandbox_id) ||
                scan_keys(rc, "sp:pool:*", list_holds, (void *)sandbox_id);
    redisFree(rc);
    return held;
}
