/* session.c — sessions owned by this gateway: lifecycle (create, reaping), status (OpenHands
 * values, in Redis and as events), subscribers. Deleting one and destroying its sandbox:
 * session_delete.c; its sandbox, from the pool or a provider: session_sandbox.c; actions and
 * output: session_actions.c; terminals: session_term.c; restarts: session_restore.c. */
#include "session.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envd_proc.h"
#include "envd_routes.h"
#include "gw.h"
#include "pool.h"
#include "json_util.h"
#include "redis_client.h"
#include "sandbox/sandbox_host.h"
#include "session_int.h"
#include "session_ports.h"
#include "xalloc.h"

chan_kind_t session_kind_action = CH_ACTION;

/* ---- small helpers ---- */

json_object *
session_event_new(const char *type)
{
    json_object *e = json_object_new_object();
    json_set_str(e, "type", type);
    return e;
}

void
session_save_field(gw_session_t *s, const char *field, const char *value)
{
    char key[128];
    snprintf(key, sizeof key, "sp:session:{%s}", s->id);
    redis_client_cmd(NULL, NULL, "HSET %s %s %s", key, field, value);
}

/* ---- subscribers ---- */

/* The event log's callback: events up to seq are stored, so visible. */
static void
on_stored(void *ud, uint64_t seq)
{
    gw_session_t *s = ud;
    for (gw_sub_t *sub = s->subs, *next; sub; sub = next) {
        next = sub->next;
        sub->wake(sub);
    }
    session_on_stored(s, seq);
}

void
session_subscribe(gw_session_t *s, gw_sub_t *sub)
{
    sub->next = s->subs;
    s->subs = sub;
}

void
session_unsubscribe(gw_session_t *s, gw_sub_t *sub)
{
    for (gw_sub_t **pp = &s->subs; *pp; pp = &(*pp)->next)
        if (*pp == sub) {
            *pp = sub->next;
            return;
        }
}

/* ---- status ---- */

void
session_set_status(gw_session_t *s, session_status_t to, const char *msg)
{
    if (s->status == to)
        return;
    const char *st = session_status_text(to);
    if (!session_status_may_become(s->status, to)) {
        GW_LOG("session %s: no change from %s to %s", s->id, session_status_text(s->status), st);
        return;
    }
    s->status = to;
    if (to != SESSION_STARTED)
        session_woken_release(s);
    session_save_field(s, "status", st);
    json_object *e = session_event_new("status");
    json_set_str(e, "status", st);
    if (msg)
        json_set_str(e, "message", msg);
    event_log_append(s->log, e);
    char note[256];
    snprintf(note, sizeof note, "{\"session\":\"%s\",\"status\":\"%s\"}", s->id, st);
    redis_client_cmd(NULL, NULL, "PUBLISH sp:status %s", note);
}

/* ---- lifecycle ---- */

const char *
session_id(const gw_session_t *s)
{
    return s->id;
}

const char *
session_owner(const gw_session_t *s)
{
    return s->owner;
}

const char *
session_home(const gw_session_t *s)
{
    return s->link ? exec_link_home(s->link) : "";
}

session_status_t
session_status(const gw_session_t *s)
{
    return s->status;
}

event_log_t *
session_log(gw_session_t *s)
{
    return s->log;
}

bool
session_stopped(const gw_session_t *s)
{
    return s->status == SESSION_STOPPED;
}

gw_session_t *
session_find(const char *id)
{
    for (gw_session_t *s = g_gw.sessions; s; s = s->next)
        if (strcmp(s->id, id) == 0)
            return s;
    return NULL;
}

gw_session_t *
session_next(const gw_session_t *s)
{
    return s->next;
}

int
sessions_count(void)
{
    int n = 0;
    for (gw_session_t *s = g_gw.sessions; s; s = s->next)
        n++;
    return n;
}

json_object *
session_describe(const gw_session_t *s)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "id", s->id);
    json_set_str(o, "owner", s->owner);
    json_set_str(o, "status", session_status_text(s->status));
    json_set_str(o, "profile", s->profile);
    json_set_str(o, "gateway", g_gw.cfg.id);
    json_set_str(o, "provider", s->prov ? s->prov->name : "");
    json_set_str(o, "image", s->sb.image[0] ? s->sb.image : pool_image(s->params));
    json_set(o, "created", json_object_new_double(s->created));
    json_set_int(o, "last_seq", (int64_t)event_log_acked_seq(s->log));
    json_set_int(o, "queued_actions", s->queued + (s->act_ch ? 1 : 0));
    json_set_int(o, "idle_timeout", s->idle_timeout);
    json_set_int(o, "max_lifetime", s->max_lifetime);
    session_lifecycle_describe(s, o);
    json_set(o, "idle_seconds", json_object_new_double(gw_now() - s->last_activity));
    json_object *plugins = json_get(s->params, "plugins");
    json_set(o, "plugins", plugins ? json_object_get(plugins) : session_plugins_default());
    json_object *net = json_get(s->params, "network");
    json_set(o, "network", net ? json_object_get(net) : json_tokener_parse("{\"mode\":\"none\"}"));
    json_object *lim = json_object_new_object(); /* what its sandbox runs under; 0: no limit */
    json_set_int(lim, "memory_bytes", s->sb.memory_bytes);
    json_set_int(lim, "cpu_millicores", s->sb.cpu_millicores);
    json_set_int(lim, "disk_bytes", s->sb.disk_bytes);
    json_set(o, "limits", lim);
    json_set(o, "plugin_status",
             s->plugin_status ? json_object_get(s->plugin_status) : json_object_new_object());
    if (s->sb.warning[0]) /* degraded isolation: no cgroup, no disk limit (provider.h) */
        json_set_str(o, "warning", s->sb.warning);
    return o;
}

void
session_set_max_lifetime(gw_session_t *s, int seconds)
{
    char life[32];
    s->max_lifetime = seconds;
    snprintf(life, sizeof life, "%d", seconds);
    session_save_field(s, "max_lifetime", life);
}

gw_session_t *
session_alloc(const char *id, const char *owner, const char *profile, uint64_t next_seq)
{
    gw_session_t *s = xcalloc(1, sizeof *s);
    snprintf(s->id, sizeof s->id, "%s", id);
    snprintf(s->owner, sizeof s->owner, "%s", owner ? owner : "");
    snprintf(s->profile, sizeof s->profile, "%s", profile ? profile : "default");
    s->log = event_log_new(s->id, next_seq, g_gw.cfg.stream_max_events, g_gw.cfg.stream_max_bytes,
                           on_stored, s);
    s->link = exec_link_new(&session_link_cbs, s);
    s->created = gw_wall();
    s->last_activity = gw_now();
    s->idle_timeout = g_gw.cfg.idle_timeout;
    s->max_lifetime = g_gw.cfg.max_lifetime;
    uv_timer_init(g_gw.loop, &s->timer);
    s->timer.data = s;
    s->next = g_gw.sessions;
    g_gw.sessions = s;
    return s;
}

static void
on_timer_closed(uv_handle_t *h)
{
    gw_session_t *s = h->data;
    buf_free(&s->out);
    buf_free(&s->out_events);
    buf_free(&s->releases);
    json_object_put(s->act_action);
    json_object_put(s->reattach_action);
    event_log_free(s->log);
    json_object_put(s->params);
    json_object_put(s->pending_env);
    json_object_put(s->plugin_status);
    session_ports_free(s);
    envd_procs_free(s);
    envd_watchers_free(s);
    free(s);
    session_memory_freed();
}

void
session_free(gw_session_t *s)
{
    session_plugins_known(s); /* its waiters read it while it is whole */
    session_woken_release(s);
    for (gw_session_t **pp = &g_gw.sessions; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    while (s->subs) {
        gw_sub_t *sub = s->subs;
        s->subs = sub->next;
        sub->gone(sub);
    }
    session_terms_free(s);
    while (s->qhead) {
        queued_t *q = s->qhead;
        s->qhead = q->next;
        json_object_put(q->action);
        free(q);
    }
    session_file_watches_free(s);
    session_fail_oneshots(s, "the session was stopped");
    session_observed(s, 0, 0);
    session_stored_up_to(s, 0);
    exec_link_free(s->link);
    uv_close((uv_handle_t *)&s->timer, on_timer_closed);
}

#define CREATE_KEY_TTL_S 3600 /* how long the API may ask what became of a create */

bool
session_create_key_ok(const char *key)
{
    size_t n = strlen(key);
    return n >= 16 && n <= CREATE_KEY_MAX && strspn(key, "0123456789abcdef") == n;
}

void
session_save(gw_session_t *s)
{
    char key[128], created[64], idle[32], life[32], resume[32];
    snprintf(key, sizeof key, "sp:session:{%s}", s->id);
    snprintf(created, sizeof created, "%.6f", s->created);
    snprintf(idle, sizeof idle, "%d", s->idle_timeout);
    snprintf(life, sizeof life, "%d", s->max_lifetime);
    snprintf(resume, sizeof resume, "%d", s->auto_resume);
    json_object *sb = sandbox_to_json(&s->sb);
    json_object *plugins = json_get(s->params, "plugins"), *net = json_get(s->params, "network");
    redis_client_cmd(NULL, NULL,
                     "HSET %s id %s owner %s gateway %s status %s profile %s created %s "
                     "idle_timeout %s idle_action %s max_lifetime %s lifetime_action %s "
                     "auto_resume %s sandbox %s plugins %s network %s",
                     key, s->id, s->owner, g_gw.cfg.id, session_status_text(s->status), s->profile,
                     created, idle, s->idle_pause ? "pause" : "stop", life,
                     s->lifetime_pause ? "pause" : "stop", resume,
                     json_object_to_json_string_ext(sb, JSON_C_TO_STRING_PLAIN),
                     plugins ? json_object_to_json_string_ext(plugins, JSON_C_TO_STRING_PLAIN)
                             : "[\"agent_skills\",\"jupyter\",\"browser\"]",
                     net ? json_object_to_json_string_ext(net, JSON_C_TO_STRING_PLAIN |
                                                                   JSON_C_TO_STRING_NOSLASHESCAPE)
                         : "{\"mode\":\"none\"}");
    json_object_put(sb);
    char gkey[128];
    snprintf(gkey, sizeof gkey, "sp:gateway:%s:sessions", g_gw.cfg.id);
    redis_client_cmd(NULL, NULL, "SADD %s %s", gkey, s->id);
    redis_client_cmd(NULL, NULL, "ZADD sp:sessions %s %s", created, s->id);
    if (s->create_key[0]) { /* after the record, on the same connection: it names a record */
        redis_client_cmd(NULL, NULL, "HSET %s create_key %s", key, s->create_key);
        redis_client_cmd(NULL, NULL, "SET sp:create:%s %s EX %d", s->create_key, s->id,
                         CREATE_KEY_TTL_S);
    }
}

/* The plugins a session may ask for (OpenHands' names; the executor starts each on first use and
 * refuses the others' actions with upstream's texts). */
static int
plugins_check(json_object *plugins, err_t *err)
{
    static const char *const known[] = {"agent_skills", "jupyter", "browser", "vscode"};
    if (!plugins)
        return 0;
    size_t n =
        json_object_is_type(plugins, json_type_array) ? json_object_array_length(plugins) : 0;
    if (!json_object_is_type(plugins, json_type_array) || n > 16)
        return err_set(err, ERR_BAD_REQ, "\"plugins\" must be a list of plugin names");
    for (size_t i = 0; i < n; i++) {
        const char *name = json_object_get_string(json_object_array_get_idx(plugins, i));
        bool ok = false;
        for (size_t k = 0; k < sizeof known / sizeof known[0] && !ok; k++)
            ok = json_object_is_type(json_object_array_get_idx(plugins, i), json_type_string) &&
                 strcmp(name, known[k]) == 0;
        if (!ok)
            return err_set(err, ERR_BAD_REQ,
                           "unknown plugin %.64s (known: agent_skills, jupyter, browser, vscode)",
                           name ? name : "null");
    }
    return 0;
}

void
session_create(json_object *params, const char *owner, const char *create_key, session_ready_cb cb,
               void *ud, char *made, size_t cap)
{
    err_t err = {0};
    if (made && cap)
        made[0] = '\0';
    if (!redis_client_connected()) { /* its record and events could not be stored: no answer */
        cb(ud, NULL, ERR_UNAVAILABLE, "the event store (Redis) is unreachable; try again shortly");
        return;
    }
    json_object *image = json_get(params, "image");
    char rootfs[PATH_MAX];
    if (provider_env_check(json_get(params, "env"), &err) < 0 || /* before a sandbox is taken */
        plugins_check(json_get(params, "plugins"), &err) < 0 ||
        session_lifecycle_check(params, &err) < 0 ||
        (image && !json_object_is_type(image, json_type_string) &&
         err_set(&err, ERR_BAD_REQ, "image must be a string") < 0) ||
        image_resolve(g_gw.cfg.image_store, pool_image(params), rootfs, sizeof rootfs, &err) < 0) {
        cb(ud, NULL, err.code, err.msg);
        return;
    }
    char id[64];
    gw_random_id(id, sizeof id, "s-");
    if (made && cap)
        snprintf(made, cap, "%s", id);
    const char *profile = json_get_str(params, "profile", "default");
    gw_session_t *s = session_alloc(id, owner, profile, 1);
    s->params = params ? json_object_get(params) : json_object_new_object();
    if (!json_get(s->params, "plugins")) /* absent: every plugin (session_plugins_default) */
        json_object_object_add(s->params, "plugins", session_plugins_default());
    s->idle_timeout = (int)json_get_int(params, "idle_timeout", s->idle_timeout);
    s->max_lifetime = (int)json_get_int(params, "max_lifetime", s->max_lifetime);
    session_lifecycle_set(s, params);
    s->ready_cb = cb;
    s->ready_ud = ud;
    if (create_key && create_key[0])
        snprintf(s->create_key, sizeof s->create_key, "%s", create_key);
    session_set_status(s, SESSION_STARTING, NULL);
    session_save(s);
    session_take_sandbox(s);
}

void
sessions_redis_ready(void)
{
    for (gw_session_t *s = g_gw.sessions; s; s = s->next) {
        /* What this gateway knows is the truth: writes lost with the connection go again, the
         * whole record (a session created while Redis was away has none yet), its set and
         * listing entries, then the events. */
        session_save(s);
        if (s->env_pending_saved)
            session_save_field(s, "env_pending", "1");
        if (s->plugin_status)
            session_save_field(
                s, "plugin_status",
                json_object_to_json_string_ext(s->plugin_status, JSON_C_TO_STRING_PLAIN));
        if (s->term_counter) /* terminals were opened: which are still open */
            session_terms_save(s);
        event_log_resync(s->log);
    }
}

/* Listing entries of sessions whose keys have expired (ended longer than the retention). */
static void
on_expired(redisReply *r, void *ud)
{
    (void)ud;
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return;
    for (size_t i = 0; i < r->elements; i++) {
        if (r->element[i]->type != REDIS_REPLY_STRING)
            continue;
        redis_client_cmd(NULL, NULL, "ZREM sp:sessions %s", r->element[i]->str);
        redis_client_cmd(NULL, NULL, "ZREM sp:sessions:ended %s", r->element[i]->str);
    }
}

static void
prune_listing(void)
{
    static double last;
    double now = gw_now();
    if (g_gw.cfg.retention <= 0 || now - last < 60)
        return;
    last = now;
    redis_client_cmd(on_expired, NULL, "ZRANGEBYSCORE sp:sessions:ended -inf %f LIMIT 0 1000",
                     gw_wall() - g_gw.cfg.retention);
}

/* An executor op under way (a download, a preview's connection) is use of the session; a watch
 * (the port watch, open for the session's whole life, a client's file watch) is not. */
static bool
session_ops_running(const gw_session_t *s)
{
    for (const oneshot_t *o = s->oneshots; o; o = o->next)
        if (!o->passive)
            return true;
    return false;
}

void
sessions_tick(void)
{
    prune_listing();
    double now = gw_now(), wall = gw_wall();
    for (gw_session_t *s = g_gw.sessions, *next; s; s = next) {
        next = s->next;
        event_log_resync(s->log); /* a no-op unless Redis refused a write */
        session_flush_last_execute(s);
        session_terms_tick(s, now);
        bool busy = s->act_ch || s->qhead || s->terms || session_ops_running(s);
        if (!busy && now - s->last_activity >= SESSION_SHRINK_AFTER_S)
            session_shrink(s);
        bool paused = s->status == SESSION_PAUSED;
        bool idle =
            s->idle_timeout > 0 && !busy && !paused && now - s->last_activity > s->idle_timeout;
        if (s->max_lifetime > 0 && wall - s->created > s->max_lifetime) {
            session_lifetime_end(s);
        } else if (idle && s->idle_pause) {
            err_t err = {0};
            if (s->status == SESSION_READY && session_pause(s, "idle timeout", &err) < 0) {
                GW_LOG("session %s: idle pause failed (%s): stopping it", s->id, err.msg);
                session_delete(s, "idle timeout");
            }
        } else if (idle) {
            session_delete(s, "idle timeout");
        }
    }
    sessions_trim_heap();
}

void
sessions_drop(void)
{
    while (g_gw.sessions) {
        gw_session_t *s = g_gw.sessions;
        s->deleting = true;
        session_free(s);
    }
}

void
sessions_shutdown(void)
{
    /* Sessions outlive the gateway: close links and forget them, sandboxes keep running. */
    g_gw.stopping = true;
    while (g_gw.sessions) {
        gw_session_t *s = g_gw.sessions;
        s->deleting = true;
        session_free(s);
    }
}
