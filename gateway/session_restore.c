/* session_restore.c — after a gateway restart: re-attach every session Redis says this gateway
 * owns, continue its sequence numbers, resume an action that was in flight. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "redis_client.h"
#include "session_int.h"
#include "xalloc.h"

/* ---- restart: re-attach from Redis ---- */

/* The gateway died while an action ran. A `run` keeps running in the sandbox with its output
 * held there: fetch the rest (and the exit code) with an empty command under the same seq, so
 * the stream shows the action's whole output and its observation. Other actions finish at
 * once; their result is unknown and says so. */
static void
resume_inflight(gw_session_t *s, uint64_t seq, const char *action_json)
{
    json_object *a = action_json ? json_tokener_parse(action_json) : NULL;
    if (a && !strcmp(json_get_str(a, "action", ""), "run")) {
        json_object *cont = json_object_new_object(), *args = json_object_new_object();
        json_set_str(cont, "action", "run");
        json_set_str(args, "command", "");
        json_set_bool(args, "is_input", false);
        json_set_bool(args, "blocking", json_get_bool(json_get(a, "args"), "blocking", false));
        json_set(cont, "args", args);
        if (json_get(a, "timeout"))
            json_set(cont, "timeout", json_object_get(json_get(a, "timeout")));
        session_enqueue(s, cont, seq);
        json_object_put(cont);
    } else {
        json_object *e = session_event_new("observation");
        json_set_int(e, "action", (int64_t)seq);
        json_set(e, "observation",
                 session_error_observation(
                     "ERROR: the gateway restarted while this action ran; its result is unknown."));
        evlog_append(s->log, e);
    }
    json_object_put(a);
}

void
sessions_restore(void)
{
    redisContext *rc = rds_sync_connect(g_gw.cfg.redis);
    if (!rc) {
        GW_LOG("restore: redis unreachable; no sessions re-attached");
        return;
    }
    redisReply *ids = redisCommand(rc, "SMEMBERS sp:gateway:%s:sessions", g_gw.cfg.id);
    for (size_t i = 0; ids && ids->type == REDIS_REPLY_ARRAY && i < ids->elements; i++) {
        const char *id = ids->element[i]->str;
        redisReply *h = redisCommand(rc, "HGETALL sp:session:{%s}", id);
        const char *owner = "", *profile = "default", *sbjson = NULL, *status = "";
        int idle = g_gw.cfg.idle_timeout, life = g_gw.cfg.max_lifetime;
        bool idle_pause = false;
        double created = gw_wall();
        uint64_t inflight = 0;
        const char *inflight_action = NULL;
        for (size_t k = 0; h && h->type == REDIS_REPLY_ARRAY && k + 1 < h->elements; k += 2) {
            const char *f = h->element[k]->str, *v = h->element[k + 1]->str;
            if (!strcmp(f, "owner"))
                owner = v;
            else if (!strcmp(f, "profile"))
                profile = v;
            else if (!strcmp(f, "sandbox"))
                sbjson = v;
            else if (!strcmp(f, "status"))
                status = v;
            else if (!strcmp(f, "idle_timeout"))
                idle = atoi(v);
            else if (!strcmp(f, "max_lifetime"))
                life = atoi(v);
            else if (!strcmp(f, "idle_action"))
                idle_pause = !strcmp(v, "pause");
            else if (!strcmp(f, "created"))
                created = atof(v);
            else if (!strcmp(f, "inflight"))
                inflight = strtoull(v, NULL, 10);
            else if (!strcmp(f, "inflight_action"))
                inflight_action = v;
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
        if (!sbo || sandbox_from_json(sbo, &sb, &err) < 0 || !strcmp(status, ST_STOPPED)) {
            json_object_put(sbo);
            freeReplyObject(h);
            freeReplyObject(last);
            redisCommand(rc, "SREM sp:gateway:%s:sessions %s", g_gw.cfg.id, id);
            continue;
        }
        json_object_put(sbo);
        gw_session_t *s = session_alloc(id, owner, profile, next_seq);
        snprintf(s->status, sizeof s->status, "%s", status);
        s->idle_timeout = idle;
        s->max_lifetime = life;
        s->idle_pause = idle_pause;
        s->created = created;
        s->params = json_object_new_object();
        s->sb = sb;
        s->prov = provider_find(sb.provider);
        if (!s->prov)
            s->prov = &provider_local;
        GW_LOG("restore: session %s (events from %" PRIu64 ")", id, next_seq);
        if (inflight && inflight < next_seq)
            resume_inflight(s, inflight, inflight_action);
        if (s->prov->alive(&s->sb) && !strcmp(status, ST_PAUSED)) {
            s->connect_on_resume = true; /* a frozen executor cannot say HELLO */
        } else if (s->prov->alive(&s->sb)) {
            exec_link_connect(s->link, s->sb.socket_path, 5000);
        } else {
            snprintf(s->status, sizeof s->status, "%s", "");
            session_set_status(s, ST_DISCONNECTED, "the sandbox is gone");
        }
        freeReplyObject(h);
        freeReplyObject(last);
    }
    freeReplyObject(ids);
    redisFree(rc);
}
