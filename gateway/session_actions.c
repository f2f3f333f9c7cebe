/* session_actions.c — a session's actions: the per-session queue, the executor channel of the
 * running action (durable: taken over after a lost link or restart), the observation event,
 * and the executor link's callbacks. Its output and credit: session_output.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "metrics.h"
#include "redis_client.h"
#include "session_int.h"
#include "session_ports.h"
#include "session_network.h"
#include "xalloc.h"

/* ---- executor link callbacks ---- */

static void
on_link_data(void *ud, uint32_t ch, bool is_stderr, const uint8_t *p, size_t n)
{
    gw_session_t *s = ud;
    exec_client_t *c = exec_link_client(s->link);
    chan_kind_t *kind = c ? exec_client_get_chan_data(c, ch) : NULL;
    metrics_output(n);
    if (kind == &session_kind_action && ch == s->act_ch) {
        size_t dup = s->act_skip < n ? (size_t)s->act_skip : n; /* in events already */
        s->act_skip -= dup;
        s->act_recv += dup;
        p += dup;
        n -= dup;
        if (n == 0)
            return;
        buf_append(&s->out, p, n);
        s->act_recv += n;
        if (s->out.len >= GW_OUTPUT_CHUNK)
            session_flush_output(s, false);
        session_arm_flush(s);
        s->last_activity = gw_now();
        return;
    }
    if (kind && *kind == CH_ONESHOT) {
        session_oneshot_data((oneshot_t *)kind, is_stderr, p, n);
        return;
    }
    session_term_data(s, ch, p, n);
}

/* The executor's first word on an action.attach: what it still has for us. */
static void
on_attached(gw_session_t *s, json_object *msg)
{
    /* Where the executor's kept bytes begin (the offset attached from, or past it when the
     * store lost bytes): credit is counted from there. */
    s->act_granted = (uint64_t)json_get_int(msg, "acked", 0);
    json_object *lf = json_get(msg, "lost_from");
    if (lf) {
        /* The store lost output it had confirmed (its data went back in time): the executor
         * cannot send it again. Say so in the stream. */
        uint64_t from = (uint64_t)json_object_get_int64(lf);
        uint64_t to = (uint64_t)json_get_int(msg, "lost_to", 0);
        json_object *e = session_event_new("truncated");
        json_set_int(e, "action", (int64_t)s->act_seq);
        json_set_int(e, "from_offset", (int64_t)from);
        json_set_int(e, "to_offset", (int64_t)to);
        json_set_int(e, "bytes", (int64_t)(to - from));
        json_set_str(e, "reason", "output lost by the event store");
        event_log_append(s->log, e);
        uint64_t gone = to > s->act_recv ? to - s->act_recv : 0; /* not sent again */
        s->act_skip = s->act_skip > gone ? s->act_skip - gone : 0;
        s->act_recv = to;
        s->act_stored = to;
    }
    if (s->act_granted > s->act_stored)
        s->act_stored = s->act_granted;
}

static void
on_link_json(void *ud, uint32_t ch, json_object *msg)
{
    gw_session_t *s = ud;
    exec_client_t *c = exec_link_client(s->link);
    chan_kind_t *kind = c ? exec_client_get_chan_data(c, ch) : NULL;
    if (kind == &session_kind_action && ch == s->act_ch &&
        !strcmp(json_get_str(msg, "event", ""), "attached"))
        on_attached(s, msg);
    else if (kind == &session_kind_plugins && ch == s->plugins_ch) {
        session_plugins_json(s, msg);
        if (s->plugins_pending)
            session_plugins_known(s);
    } else if (kind && *kind == CH_ONESHOT)
        session_oneshot_json((oneshot_t *)kind, msg);
    else if (kind && *kind == CH_TERM)
        session_term_json(s, ch, msg);
}

static void
on_link_eof(void *ud, uint32_t ch)
{
    gw_session_t *s = ud;
    exec_client_t *c = exec_link_client(s->link);
    chan_kind_t *kind = c ? exec_client_get_chan_data(c, ch) : NULL;
    if (kind && *kind == CH_ONESHOT)
        session_oneshot_eof((oneshot_t *)kind);
}

static void
on_link_writable(void *ud, uint32_t ch, size_t avail)
{
    (void)avail;
    gw_session_t *s = ud;
    exec_client_t *c = exec_link_client(s->link);
    chan_kind_t *kind = c ? exec_client_get_chan_data(c, ch) : NULL;
    if (kind && *kind == CH_ONESHOT)
        session_oneshot_writable((oneshot_t *)kind);
    else if (kind && *kind == CH_TERM)
        session_term_writable(s, ch);
}

static void
clear_action(gw_session_t *s)
{
    s->act_ch = 0;
    s->act_seq = 0;
    s->act_attach = false;
    json_object_put(s->act_action);
    s->act_action = NULL;
    s->act_recv = s->act_granted = s->act_stored = s->act_skip = 0;
}

/* The observation event of action seq (takes obs); watchers hear of it once it is stored. */
static void
append_observation(gw_session_t *s, uint64_t seq, json_object *obs)
{
    json_object *e = session_event_new("observation");
    json_set_int(e, "action", (int64_t)seq);
    json_set(e, "observation", obs);
    release_t r = {.act = seq, .obs_seq = event_log_append(s->log, e)};
    buf_append(&s->releases, &r, sizeof r);
}

static void
finish_action(gw_session_t *s, json_object *obs)
{
    session_flush_output(s, true);
    append_observation(s, s->act_seq, obs);
    metrics_action_done(gw_now() - s->act_t0);
    clear_action(s);
    s->last_activity = gw_now();
    session_start_next_action(s);
}

json_object *
session_error_observation(const char *text)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "observation", "error");
    json_set_str(o, "content", text);
    json_object *x = json_object_new_object();
    json_set_str(x, "error_id", "");
    json_set(o, "extras", x);
    json_set_str(o, "message", text);
    return o;
}

static void
on_link_close(void *ud, uint32_t ch, json_object *res)
{
    gw_session_t *s = ud;
    if (session_oneshot_closed(s, ch, res))
        return;
    if (ch && ch == s->plugins_ch) { /* an executor without the op: no states to show */
        GW_LOG("session %s: plugins channel closed: %s", s->id,
               json_get_str(json_get(res, "error"), "message", "by the executor"));
        s->plugins_ch = 0;
        session_plugins_known(s);
        return;
    }
    if (ch == s->act_ch) {
        json_object *err = json_get(res, "error");
        if (err && s->act_attach && !strcmp(json_get_str(err, "code", ""), "not_found") &&
            s->act_action) {
            /* The executor never saw it (we died before it went out): run it now. */
            json_object *action = json_object_get(s->act_action);
            uint64_t seq = s->act_seq;
            double t0 = s->act_t0;
            clear_action(s);
            session_enqueue(s, action, seq);
            s->qtail->t0 = t0;
            json_object_put(action);
            /* first in line: it was submitted before anything still queued */
            if (s->qhead != s->qtail) {
                queued_t *q = s->qtail, *p = s->qhead;
                while (p->next != q)
                    p = p->next;
                p->next = NULL;
                s->qtail = p;
                q->next = s->qhead;
                s->qhead = q;
            }
            session_start_next_action(s);
            return;
        }
        if (err) {
            char text[512];
            snprintf(text, sizeof text, "ERROR: %s",
                     json_get_str(err, "message", "the executor refused the action"));
            finish_action(s, session_error_observation(text));
        } else {
            finish_action(s, json_object_get(res));
        }
        return;
    }
    session_term_exited(s, ch, res);
}

static void became_ready(gw_session_t *s);

/* A warm sandbox was started before its session's env was known: export it in the shell (and
 * for every process started later) before the session says READY. */
static void
on_env_applied(void *ud, json_object *result)
{
    gw_session_t *s = ud;
    s->env_applying = false;
    if (s->deleting)
        return;
    json_object *err = json_get(result, "error");
    if (!err) {
        became_ready(s);
        return;
    }
    char why[300];
    snprintf(why, sizeof why, "setting the session's env failed: %s",
             json_get_str(err, "message", "?"));
    session_set_status(s, SESSION_ERROR, why);
    if (s->ready_cb) {
        session_ready_cb cb = s->ready_cb;
        s->ready_cb = NULL;
        cb(s->ready_ud, NULL, ERR_BAD_REQ, why);
    }
    session_delete(s, why);
}

static void
on_link_up(void *ud)
{
    gw_session_t *s = ud;
    s->reconnects = 0;
    /* Its network before anything runs in it (a pooled sandbox gets it now, at claim time). */
    err_t nerr = {0};
    if (session_network_attach(s, &nerr) < 0) {
        if (s->status == SESSION_STARTING) {
            char why[320];
            snprintf(why, sizeof why, "the sandbox's network: %s", nerr.msg);
            session_start_failed(s, nerr.code > ERR_BASE ? nerr.code : ERR_UNAVAILABLE, why);
            return;
        }
        /* re-attached after a restart: netd keeps the link it made; say what failed */
        GW_LOG("session %s: network: %s", s->id, nerr.msg);
    }
    session_terms_reattach(s); /* the executor kept them: take them back first */
    /* First the session's plugins: the executor reads them before any action sent after them
     * on this connection; READY does not wait for its answer (session_plugins.c). */
    session_plugins_open(s);
    session_link_ready(s);
}

void
session_link_ready(gw_session_t *s)
{
    if (s->pending_env) {
        json_object *req = json_object_new_object();
        json_set_str(req, "op", "bash.env");
        json_set_str(req, "session", "default");
        json_set(req, "env", s->pending_env);
        s->pending_env = NULL;
        if (s->status == SESSION_STARTING)
            session_set_status(s, SESSION_STARTED, NULL);
        err_t err = {0};
        s->env_applying = true;
        if (session_exec_op(s, req, on_env_applied, s, &err) < 0) {
            json_object *e = json_error_new(err.code, err.msg);
            on_env_applied(s, e);
            json_object_put(e);
        }
        json_object_put(req);
        return;
    }
    became_ready(s);
}

static void
became_ready(gw_session_t *s)
{
    if (s->env_pending_saved) {
        s->env_pending_saved = false;
        char key[128];
        snprintf(key, sizeof key, "sp:session:{%s}", s->id);
        redis_client_cmd(NULL, NULL, "HDEL %s env_pending", key);
    }
    if (s->status == SESSION_STARTING)
        session_set_status(s, SESSION_STARTED, NULL);
    session_set_status(s, SESSION_READY, NULL);
    session_ports_watch(s);
    session_file_watches_reopen(s);
    if (s->ready_cb) {
        session_ready_cb cb = s->ready_cb;
        s->ready_cb = NULL;
        cb(s->ready_ud, s, 0, NULL);
    }
    session_start_next_action(s);
}

static void
on_link_down(void *ud, const char *why)
{
    gw_session_t *s = ud;
    if (s->deleting)
        return;
    GW_LOG("session %s: executor link down: %s", s->id, why);
    s->plugins_ch = 0;
    session_plugins_known(s);
    if (s->act_ch) {
        /* The executor keeps the action (it is durable): take it over from what is stored once
         * the link is back, not from what is in events: those not yet stored may never be (this
         * gateway may die, or lose the session to a peer, first), and the executor forgets what
         * is below the offset. Output not yet in an event is sent again. */
        s->reattach_seq = s->act_seq;
        s->reattach_off = s->act_stored;
        s->reattach_have = s->act_recv - s->out.len;
        s->reattach_action = s->act_action;
        s->act_action = NULL;
        buf_clear(&s->out);
        clear_action(s);
    }
    session_terms_lost(s);
    session_file_watches_lost(s);
    session_fail_oneshots(s, "the runtime disconnected");
    if (s->ready_cb && !s->resuming) { /* a create: it failed */
        session_ready_cb cb = s->ready_cb;
        s->ready_cb = NULL;
        session_terms_gone(s);
        session_set_status(s, SESSION_ERROR, why);
        cb(s->ready_ud, NULL, ERR_BUSY, why);
        return;
    }
    /* Retry while the sandbox lives (a resume's answer waits for it); give up when it is gone. */
    if (s->prov->alive(&s->sb) && s->reconnects++ < 3) {
        exec_link_connect(s->link, s->sb.socket_path, 3000);
        return;
    }
    if (s->ready_cb) { /* a resume whose executor never came back: why, and as any lost link */
        session_ready_cb cb = s->ready_cb;
        s->ready_cb = NULL;
        cb(s->ready_ud, NULL, ERR_UNAVAILABLE, why);
    }
    if (s->reattach_seq) {
        char text[300];
        snprintf(text, sizeof text, "ERROR: the runtime disconnected while running the action (%s)",
                 why);
        append_observation(s, s->reattach_seq, session_error_observation(text));
        s->reattach_seq = 0;
        json_object_put(s->reattach_action);
        s->reattach_action = NULL;
    }
    session_terms_gone(s);
    if (s->status == SESSION_STARTING) {
        /* restored (a takeover, a restart) before it was ever READY, and its executor never
         * answered: a start that failed, for who asked for it (the API follows the record) */
        char msg[300];
        snprintf(msg, sizeof msg, "the session did not start: its executor never answered (%s)",
                 why);
        session_start_failed(s, ERR_UNAVAILABLE, msg);
        return;
    }
    session_set_status(s, SESSION_DISCONNECTED, why);
}

const exec_link_cbs_t session_link_cbs = {
    .on_up = on_link_up,
    .on_down = on_link_down,
    .on_data = on_link_data,
    .on_json = on_link_json,
    .on_eof = on_link_eof,
    .on_close = on_link_close,
    .on_writable = on_link_writable,
};

/* ---- actions ---- */

/* Opens the action's channel: the action itself (durable, id = its seq) or, for one the
 * executor may already be running, action.attach from the output offset in events. */
static void
open_action(gw_session_t *s, exec_client_t *c, uint64_t seq, json_object *action, bool attach,
            uint64_t offset)
{
    char id[32];
    snprintf(id, sizeof id, "%" PRIu64, seq);
    json_object *req = json_object_new_object();
    json_set_str(req, "op", attach ? "action.attach" : "action");
    json_set_str(req, "id", id);
    if (attach)
        json_set_int(req, "offset", (int64_t)offset);
    else
        json_set(req, "action", json_object_get(action));
    err_t err = {0};
    uint32_t ch = exec_client_open(c, req, &err);
    json_object_put(req);
    s->act_seq = seq;
    s->act_action = action; /* takes the reference */
    s->act_attach = attach;
    s->act_recv = s->act_stored = offset;
    s->act_granted = 0;
    if (!ch) {
        finish_action(s, session_error_observation(err.msg));
        return;
    }
    s->act_ch = ch;
    exec_client_set_chan_data(c, ch, &session_kind_action);
    exec_client_set_auto_grant(c, ch, false);
    exec_link_flush(s->link);
}

void
session_start_next_action(gw_session_t *s)
{
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    if (s->act_ch || !c || s->env_applying)
        return;
    if (s->reattach_seq) {
        uint64_t seq = s->reattach_seq;
        json_object *action = s->reattach_action;
        s->reattach_seq = 0;
        s->reattach_action = NULL;
        s->act_t0 = gw_now();
        uint64_t off = s->reattach_off, have = s->reattach_have;
        s->reattach_have = 0;
        open_action(s, c, seq, action, true, off);
        if (s->act_ch)
            s->act_skip = have > off ? have - off : 0;
        return;
    }
    /* Only once its action event is stored: the executor never runs an action the stream does
     * not have, and a restarted gateway finds every action it may have started. */
    if (!s->qhead || s->qhead->seq > event_log_acked_seq(s->log))
        return;
    queued_t *q = s->qhead;
    s->qhead = q->next;
    if (!s->qhead)
        s->qtail = NULL;
    s->queued--;
    s->act_t0 = q->t0;
    open_action(s, c, q->seq, q->action, false, 0);
    free(q);
}

void
session_enqueue(gw_session_t *s, json_object *action, uint64_t seq)
{
    queued_t *q = xcalloc(1, sizeof *q);
    q->action = json_object_get(action);
    q->seq = seq;
    q->t0 = gw_now();
    if (s->qtail)
        s->qtail->next = q;
    else
        s->qhead = q;
    s->qtail = q;
    s->queued++;
}

uint64_t
session_submit(gw_session_t *s, json_object *action, const char *origin, const char *via,
               err_t *err)
{
    if (!action || !json_object_is_type(action, json_type_object) ||
        !json_get_str(action, "action", NULL)) {
        err_set(err, ERR_BAD_REQ,
                "an action is an object with a string \"action\" (OpenHands format)");
        return 0;
    }
    if (!session_status_takes_actions(s->status)) {
        err_set(err, ERR_BUSY, "the session is %s", session_status_text(s->status));
        return 0;
    }
    if (event_log_full(s->log)) { /* Redis away or refusing: its events could not be stored */
        err_set(err, ERR_BUSY, "the event store (Redis) is not keeping up; try again shortly");
        return 0;
    }
    if (s->queued >= GW_ACTION_QUEUE_MAX) {
        err_set(err, ERR_BUSY, "too many queued actions (%d)", GW_ACTION_QUEUE_MAX);
        return 0;
    }
    json_object *e = session_event_new("action");
    json_set(e, "action", json_object_get(action));
    if (origin)
        json_set_str(e, "origin", origin);
    if (via)
        json_set_str(e, "via", via);
    uint64_t seq = event_log_append(s->log, e);
    session_enqueue(s, action, seq);
    s->last_activity = gw_now();
    session_start_next_action(s);
    return seq;
}

int
session_signal(gw_session_t *s, const char *sig, err_t *err)
{
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "bash.signal");
    json_set_str(req, "signal", sig);
    int rc = session_exec_op(s, req, NULL, NULL, err);
    json_object_put(req);
    if (rc < 0)
        return rc;
    json_object *e = session_event_new("signal");
    json_set_str(e, "signal", sig);
    event_log_append(s->log, e);
    return 0;
}
