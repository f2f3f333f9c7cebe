/* session.c — sessions owned by this gateway: lifecycle, status, actions, output events,
 * terminals. See session.h. Redis keys: redis/README.md. */
#include "session.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <uv.h>

#include "buf.h"
#include "exec_link.h"
#include "gw.h"
#include "json_util.h"
#include "pool.h"
#include "redis_client.h"
#include "xalloc.h"

/* Output events in flight to Redis above which the executor's credit is held back: Redis sets
 * the pace of a flood (and hiredis' output buffer stays small). */
#define CREDIT_HOLD_UNACKED 32

typedef enum { CH_ACTION = 1, CH_TERM, CH_ONESHOT } chan_kind_t;

typedef struct queued {
    struct queued *next;
    json_object *action;
    uint64_t seq;
} queued_t;

/* A one-shot executor op (file.read, bash.signal, ...) waiting for its CLOSE. */
typedef struct oneshot {
    chan_kind_t kind; /* CH_ONESHOT: first, so the channel's data pointer tells the kind */
    struct oneshot *next;
    uint32_t ch;
    session_op_cb cb;
    void *ud;
} oneshot_t;

struct gw_session {
    gw_session_t *next;
    char id[64], owner[128], profile[64], status[40];
    sandbox_t sb;
    const provider_t *prov;
    exec_link_t *link;
    event_log_t *log;
    gw_sub_t *subs;
    gw_term_t *terms;
    queued_t *qhead, *qtail;
    int queued;
    uint32_t act_ch;      /* executor channel of the running action, 0 if none */
    uint64_t act_seq;
    buf_t out;            /* output not yet turned into an event */
    size_t owed;          /* output credit held back while Redis catches up */
    uv_timer_t timer;     /* output flush / credit release */
    bool timer_armed;
    double created, last_activity;
    int idle_timeout, max_lifetime;
    session_ready_cb ready_cb;
    void *ready_ud;
    json_object *params;
    int reconnects;
    bool deleting;
    oneshot_t *oneshots;
};

static chan_kind_t kind_action = CH_ACTION, kind_term = CH_TERM;



static void start_next_action(gw_session_t *s);
static void set_status(gw_session_t *s, const char *st, const char *msg);

/* ---- small helpers ---- */

static void
random_id(char *out, size_t cap, const char *prefix)
{
    uint8_t r[8];
    if (getrandom(r, sizeof r, 0) != sizeof r)
        memset(r, 0, sizeof r);
    snprintf(out, cap, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, r[0], r[1], r[2], r[3], r[4],
             r[5], r[6], r[7]);
}

/* Length of the longest prefix of p[0..n) that does not end inside a UTF-8 sequence. */
static size_t
utf8_complete_prefix(const uint8_t *p, size_t n)
{
    size_t i = n, back = 0;
    while (i > 0 && back < 4 && (p[i - 1] & 0xC0) == 0x80) {
        i--;
        back++;
    }
    if (i == 0)
        return n;
    uint8_t lead = p[i - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return (back + 1 < need) ? i - 1 : n;
}

static bool
utf8_valid(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!len || i + len > n)
            return false;
        for (size_t k = 1; k < len; k++)
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
        if (len == 2 && c < 0xC2)
            return false;
        if (c == 0 && len == 1)
            return false; /* NUL: keep JSON text clean, send as base64 */
        i += len;
    }
    return true;
}

static json_object *
event_new(const char *type)
{
    json_object *e = json_object_new_object();
    json_set_str(e, "type", type);
    return e;
}

static void
save_field(gw_session_t *s, const char *field, const char *value)
{
    char key[128];
    snprintf(key, sizeof key, "sp:session:{%s}", s->id);
    rds_cmd(NULL, NULL, "HSET %s %s %s", key, field, value);
}

/* ---- subscribers ---- */

static void
wake_subs(void *ud, uint64_t seq)
{
    (void)seq;
    gw_session_t *s = ud;
    for (gw_sub_t *sub = s->subs, *next; sub; sub = next) {
        next = sub->next;
        sub->wake(sub);
    }
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

static void
set_status(gw_session_t *s, const char *st, const char *msg)
{
    if (strcmp(s->status, st) == 0)
        return;
    snprintf(s->status, sizeof s->status, "%s", st);
    save_field(s, "status", st);
    json_object *e = event_new("status");
    json_set_str(e, "status", st);
    if (msg)
        json_set_str(e, "message", msg);
    evlog_append(s->log, e);
    char note[256];
    snprintf(note, sizeof note, "{\"session\":\"%s\",\"status\":\"%s\"}", s->id, st);
    rds_cmd(NULL, NULL, "PUBLISH sp:status %s", note);
}

/* ---- output ---- */

/* Turns buffered output into "output" events of at most GW_OUTPUT_CHUNK bytes. Text goes as
 * "data"; bytes that are not UTF-8 as "data_b64". A character split across reads is held back
 * until its end arrives (or the action ends). */
static void
flush_output(gw_session_t *s, bool final)
{
    size_t off = 0; /* consumed once at the end: no memmove per event */
    while (off < s->out.len) {
        const uint8_t *p = (const uint8_t *)s->out.data + off;
        size_t left = s->out.len - off;
        size_t n = left > GW_OUTPUT_CHUNK ? GW_OUTPUT_CHUNK : left;
        size_t whole = utf8_complete_prefix(p, n);
        if (whole > 0)
            n = whole;
        else if (!final && n == left)
            break;
        /* Built as text directly: json-c's generic escaping was the hot spot of floods. */
        buf_t m = BUF_INIT;
        buf_printf(&m, "\"type\":\"output\",\"action\":%" PRIu64 ",", s->act_seq);
        if (utf8_valid(p, n)) {
            buf_puts(&m, "\"data\":\"");
            json_escape_append(&m, (const char *)p, n);
        } else {
            buf_puts(&m, "\"data_b64\":\"");
            char *b64 = buf_reserve(&m, 4 * ((n + 2) / 3) + 1);
            int len = EVP_EncodeBlock((unsigned char *)b64, p, (int)n);
            buf_advance(&m, (size_t)len);
        }
        buf_puts(&m, "\"");
        evlog_append_members(s->log, m.data, m.len);
        buf_free(&m);
        off += n;
    }
    buf_consume(&s->out, off);
}

/* Credit goes back in quarter windows: a CREDIT frame per small output would cost a write
 * per action for nothing (the executor still has three quarters of its window). */
#define CREDIT_BATCH (FRAME_DEFAULT_WINDOW / 4)

static void
release_credit(gw_session_t *s)
{
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    if (s->owed >= CREDIT_BATCH && c && s->act_ch && evlog_unacked(s->log) < CREDIT_HOLD_UNACKED) {
        exec_client_grant(c, s->act_ch, (uint32_t)s->owed);
        s->owed = 0;
        exec_link_flush(s->link);
    }
}

static void
on_log_drained(void *ud)
{
    release_credit(ud);
}

static void
on_timer(uv_timer_t *t)
{
    gw_session_t *s = t->data;
    s->timer_armed = false;
    flush_output(s, false);
    release_credit(s);
    if (s->out.len) { /* held credit is released by on_log_drained */
        s->timer_armed = true;
        uv_timer_start(&s->timer, on_timer, GW_OUTPUT_FLUSH_MS, 0);
    }
}

static void
arm_timer(gw_session_t *s)
{
    if (!s->timer_armed) {
        s->timer_armed = true;
        uv_timer_start(&s->timer, on_timer, GW_OUTPUT_FLUSH_MS, 0);
    }
}

/* ---- executor link callbacks ---- */

static void
on_link_data(void *ud, uint32_t ch, bool is_stderr, const uint8_t *p, size_t n)
{
    (void)is_stderr;
    gw_session_t *s = ud;
    exec_client_t *c = exec_link_client(s->link);
    chan_kind_t *kind = c ? exec_client_get_chan_data(c, ch) : NULL;
    if (kind == &kind_action && ch == s->act_ch) {
        buf_append(&s->out, p, n);
        if (s->out.len >= GW_OUTPUT_CHUNK)
            flush_output(s, false);
        s->owed += n;
        release_credit(s);
        arm_timer(s);
        s->last_activity = gw_now();
        return;
    }
    for (gw_term_t *t = s->terms; t; t = t->next)
        if (t->ch == ch) {
            t->on_data(t, p, n);
            return;
        }
}

static void
finish_action(gw_session_t *s, json_object *obs)
{
    flush_output(s, true);
    json_object *e = event_new("observation");
    json_set_int(e, "action", (int64_t)s->act_seq);
    json_set(e, "observation", obs);
    evlog_append(s->log, e);
    s->act_ch = 0;
    s->act_seq = 0;
    s->owed = 0;
    s->last_activity = gw_now();
    save_field(s, "inflight", "");
    start_next_action(s);
}

static json_object *
error_observation(const char *text)
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
fail_oneshots(gw_session_t *s, const char *why)
{
    while (s->oneshots) {
        oneshot_t *o = s->oneshots;
        s->oneshots = o->next;
        if (o->cb) {
            json_object *e = json_error_new(ERR_BUSY, why);
            o->cb(o->ud, e);
            json_object_put(e);
        }
        free(o);
    }
}

static void
on_link_close(void *ud, uint32_t ch, json_object *res)
{
    gw_session_t *s = ud;
    for (oneshot_t **pp = &s->oneshots; *pp; pp = &(*pp)->next)
        if ((*pp)->ch == ch) {
            oneshot_t *o = *pp;
            *pp = o->next;
            if (o->cb)
                o->cb(o->ud, res);
            free(o);
            return;
        }
    if (ch == s->act_ch) {
        json_object *err = json_get(res, "error");
        if (err) {
            char text[512];
            snprintf(text, sizeof text, "ERROR: %s", json_get_str(err, "message", "the executor refused the action"));
            finish_action(s, error_observation(text));
        } else {
            finish_action(s, json_object_get(res));
        }
        return;
    }
    for (gw_term_t **pp = &s->terms; *pp; pp = &(*pp)->next)
        if ((*pp)->ch == ch) {
            gw_term_t *t = *pp;
            *pp = t->next;
            t->ch = 0;
            t->on_close(t, res);
            return;
        }
}

static void
on_link_up(void *ud)
{
    gw_session_t *s = ud;
    s->reconnects = 0;
    if (strcmp(s->status, ST_READY) != 0) {
        if (strcmp(s->status, ST_STARTING) == 0)
            set_status(s, ST_STARTED, NULL);
        set_status(s, ST_READY, NULL);
    }
    if (s->ready_cb) {
        session_ready_cb cb = s->ready_cb;
        s->ready_cb = NULL;
        cb(s->ready_ud, s, 0, NULL);
    }
    start_next_action(s);
}

static void
on_link_down(void *ud, const char *why)
{
    gw_session_t *s = ud;
    if (s->deleting)
        return;
    GW_LOG("session %s: executor link down: %s", s->id, why);
    if (s->act_ch) {
        char text[300];
        snprintf(text, sizeof text, "ERROR: the runtime disconnected while running the action (%s)", why);
        s->act_ch = 0;
        uint64_t seq = s->act_seq;
        flush_output(s, true);
        json_object *e = event_new("observation");
        json_set_int(e, "action", (int64_t)seq);
        json_set(e, "observation", error_observation(text));
        evlog_append(s->log, e);
        s->act_seq = 0;
    }
    for (gw_term_t *t = s->terms, *next; t; t = next) {
        next = t->next;
        t->ch = 0;
        t->on_close(t, NULL);
    }
    s->terms = NULL;
    fail_oneshots(s, "the runtime disconnected");
    if (s->ready_cb) {
        session_ready_cb cb = s->ready_cb;
        s->ready_cb = NULL;
        set_status(s, ST_ERROR, why);
        cb(s->ready_ud, NULL, ERR_BUSY, why);
        return;
    }
    /* Retry while the sandbox lives; give up when it is gone. */
    if (s->prov->alive(&s->sb) && s->reconnects++ < 3) {
        exec_link_connect(s->link, s->sb.socket_path, 3000);
        return;
    }
    set_status(s, ST_DISCONNECTED, why);
}

static const exec_link_cbs_t link_cbs = {
    .on_up = on_link_up, .on_down = on_link_down, .on_data = on_link_data,
    .on_close = on_link_close,
};

/* ---- actions ---- */

static void
start_next_action(gw_session_t *s)
{
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    if (s->act_ch || !s->qhead || !c)
        return;
    queued_t *q = s->qhead;
    s->qhead = q->next;
    if (!s->qhead)
        s->qtail = NULL;
    s->queued--;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "action");
    json_set(req, "action", json_object_get(q->action));
    err_t err = {0};
    uint32_t ch = exec_client_open(c, req, &err);
    json_object_put(req);
    s->act_seq = q->seq;
    char seqs[32];
    snprintf(seqs, sizeof seqs, "%" PRIu64, q->seq);
    save_field(s, "inflight", seqs);
    save_field(s, "inflight_action", json_object_to_json_string_ext(q->action, JSON_C_TO_STRING_PLAIN));
    json_object_put(q->action);
    free(q);
    if (!ch) {
        s->act_ch = 0;
        finish_action(s, error_observation(err.msg));
        return;
    }
    s->act_ch = ch;
    exec_client_set_chan_data(c, ch, &kind_action);
    exec_client_set_auto_grant(c, ch, false);
    exec_link_flush(s->link);
}

static void
enqueue(gw_session_t *s, json_object *action, uint64_t seq)
{
    queued_t *q = xcalloc(1, sizeof *q);
    q->action = json_object_get(action);
    q->seq = seq;
    if (s->qtail)
        s->qtail->next = q;
    else
        s->qhead = q;
    s->qtail = q;
    s->queued++;
}

uint64_t
session_submit(gw_session_t *s, json_object *action, const char *origin, err_t *err)
{
    if (!action || !json_object_is_type(action, json_type_object) ||
        !json_get_str(action, "action", NULL)) {
        err_set(err, ERR_BAD_REQ, "an action is an object with a string \"action\" (OpenHands format)");
        return 0;
    }
    if (strcmp(s->status, ST_READY) != 0 && strcmp(s->status, ST_STARTED) != 0 &&
        strcmp(s->status, ST_STARTING) != 0) {
        err_set(err, ERR_BUSY, "the session is %s", s->status);
        return 0;
    }
    if (s->queued >= GW_ACTION_QUEUE_MAX) {
        err_set(err, ERR_BUSY, "too many queued actions (%d)", GW_ACTION_QUEUE_MAX);
        return 0;
    }
    json_object *e = event_new("action");
    json_set(e, "action", json_object_get(action));
    if (origin)
        json_set_str(e, "origin", origin);
    uint64_t seq = evlog_append(s->log, e);
    enqueue(s, action, seq);
    s->last_activity = gw_now();
    start_next_action(s);
    return seq;
}

int
session_exec_op(gw_session_t *s, json_object *req, session_op_cb cb, void *ud, err_t *err)
{
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    if (!c)
        return err_set(err, ERR_BUSY, "the runtime is not connected (status %s)", s->status);
    uint32_t ch = exec_client_open(c, req, err);
    if (!ch)
        return -1;
    oneshot_t *o = xcalloc(1, sizeof *o);
    o->kind = CH_ONESHOT;
    o->ch = ch;
    o->cb = cb;
    o->ud = ud;
    o->next = s->oneshots;
    s->oneshots = o;
    exec_client_set_chan_data(c, ch, o);
    exec_link_flush(s->link);
    s->last_activity = gw_now();
    return 0;
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
    json_object *e = event_new("signal");
    json_set_str(e, "signal", sig);
    evlog_append(s->log, e);
    return 0;
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
session_status(const gw_session_t *s)
{
    return s->status;
}

event_log_t *
session_log(gw_session_t *s)
{
    return s->log;
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
    json_set_str(o, "status", s->status);
    json_set_str(o, "profile", s->profile);
    json_set_str(o, "gateway", g_gw.cfg.id);
    json_set_str(o, "provider", s->prov ? s->prov->name : "");
    json_set(o, "created", json_object_new_double(s->created));
    json_set_int(o, "last_seq", (int64_t)evlog_next_seq(s->log) - 1);
    json_set_int(o, "queued_actions", s->queued + (s->act_ch ? 1 : 0));
    json_set_int(o, "idle_timeout", s->idle_timeout);
    json_set_int(o, "max_lifetime", s->max_lifetime);
    return o;
}

static gw_session_t *
session_alloc(const char *id, const char *owner, const char *profile, uint64_t next_seq)
{
    gw_session_t *s = xcalloc(1, sizeof *s);
    snprintf(s->id, sizeof s->id, "%s", id);
    snprintf(s->owner, sizeof s->owner, "%s", owner ? owner : "");
    snprintf(s->profile, sizeof s->profile, "%s", profile ? profile : "default");
    s->log = evlog_new(s->id, next_seq, g_gw.cfg.stream_max_events, wake_subs, s);
    evlog_on_drain(s->log, on_log_drained, CREDIT_HOLD_UNACKED / 2);
    s->link = exec_link_new(&link_cbs, s);
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
    evlog_free(s->log);
    json_object_put(s->params);
    free(s);
}

static void
session_free(gw_session_t *s)
{
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
    for (gw_term_t *t = s->terms, *next; t; t = next) {
        next = t->next;
        t->ch = 0;
        t->on_close(t, NULL);
    }
    while (s->qhead) {
        queued_t *q = s->qhead;
        s->qhead = q->next;
        json_object_put(q->action);
        free(q);
    }
    fail_oneshots(s, "the session was stopped");
    exec_link_free(s->link);
    uv_close((uv_handle_t *)&s->timer, on_timer_closed);
}

static void
save_session(gw_session_t *s)
{
    char key[128], created[64], idle[32], life[32];
    snprintf(key, sizeof key, "sp:session:{%s}", s->id);
    snprintf(created, sizeof created, "%.6f", s->created);
    snprintf(idle, sizeof idle, "%d", s->idle_timeout);
    snprintf(life, sizeof life, "%d", s->max_lifetime);
    json_object *sb = sandbox_to_json(&s->sb);
    rds_cmd(NULL, NULL, "HSET %s id %s owner %s gateway %s status %s profile %s created %s "
                        "idle_timeout %s max_lifetime %s sandbox %s",
            key, s->id, s->owner, g_gw.cfg.id, s->status, s->profile, created, idle, life,
            json_object_to_json_string_ext(sb, JSON_C_TO_STRING_PLAIN));
    json_object_put(sb);
    char gkey[128];
    snprintf(gkey, sizeof gkey, "sp:gateway:%s:sessions", g_gw.cfg.id);
    rds_cmd(NULL, NULL, "SADD %s %s", gkey, s->id);
    rds_cmd(NULL, NULL, "ZADD sp:sessions %s %s", created, s->id);
}

static void
attach_sandbox(gw_session_t *s, const sandbox_t *sb)
{
    s->sb = *sb;
    s->prov = provider_find(sb->provider);
    if (!s->prov)
        s->prov = &provider_local;
    save_session(s);
    exec_link_connect(s->link, s->sb.socket_path, 15000);
}

typedef struct {
    gw_session_t *s;
} claim_ctx_t;

static void
on_claimed(void *ud, const sandbox_t *sb)
{
    gw_session_t *s = ud;
    if (s->deleting)
        return;
    if (sb) {
        attach_sandbox(s, sb);
        return;
    }
    /* No warm sandbox: start one now. */
    sandbox_t fresh;
    err_t err = {0};
    if (pool_create_sandbox(s->profile, s->params, &fresh, &err) < 0) {
        set_status(s, ST_ERROR, err.msg);
        session_ready_cb cb = s->ready_cb;
        s->ready_cb = NULL;
        if (cb)
            cb(s->ready_ud, NULL, err.code, err.msg);
        session_delete(s, err.msg);
        return;
    }
    attach_sandbox(s, &fresh);
}

void
session_create(json_object *params, const char *owner, session_ready_cb cb, void *ud)
{
    char id[64];
    random_id(id, sizeof id, "s-");
    const char *profile = json_get_str(params, "profile", "default");
    gw_session_t *s = session_alloc(id, owner, profile, 1);
    s->params = params ? json_object_get(params) : json_object_new_object();
    s->idle_timeout = (int)json_get_int(params, "idle_timeout", s->idle_timeout);
    s->max_lifetime = (int)json_get_int(params, "max_lifetime", s->max_lifetime);
    s->ready_cb = cb;
    s->ready_ud = ud;
    snprintf(s->status, sizeof s->status, "%s", "");
    set_status(s, ST_STARTING, NULL);
    save_session(s);
    /* Custom limits or env need a sandbox made for them; the pool serves the defaults. */
    bool custom = json_get(params, "env") || json_get(params, "memory") || json_get(params, "cpu") ||
                  json_get(params, "pids") || json_get(params, "network");
    if (custom)
        on_claimed(s, NULL);
    else
        pool_claim(s->profile, on_claimed, s);
}

void
session_delete(gw_session_t *s, const char *reason)
{
    if (s->deleting)
        return;
    s->deleting = true;
    set_status(s, ST_STOPPED, reason);
    err_t err = {0};
    if (s->prov && s->sb.id[0] && s->prov->destroy(&s->sb, true, &err) < 0)
        GW_LOG("session %s: destroy: %s", s->id, err.msg);
    char gkey[128], key[128];
    snprintf(gkey, sizeof gkey, "sp:gateway:%s:sessions", g_gw.cfg.id);
    snprintf(key, sizeof key, "sp:session:{%s}", s->id);
    rds_cmd(NULL, NULL, "SREM %s %s", gkey, s->id);
    rds_cmd(NULL, NULL, "HSET %s ended %f", key, gw_wall());
    if (s->ready_cb) {
        session_ready_cb cb = s->ready_cb;
        s->ready_cb = NULL;
        cb(s->ready_ud, NULL, ERR_NOT_FOUND, reason ? reason : "deleted");
    }
    session_free(s);
}

void
sessions_tick(void)
{
    double now = gw_now(), wall = gw_wall();
    for (gw_session_t *s = g_gw.sessions, *next; s; s = next) {
        next = s->next;
        bool busy = s->act_ch || s->qhead || s->terms;
        if (s->idle_timeout > 0 && !busy && now - s->last_activity > s->idle_timeout)
            session_delete(s, "idle timeout");
        else if (s->max_lifetime > 0 && wall - s->created > s->max_lifetime)
            session_delete(s, "maximum lifetime reached");
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
        enqueue(s, cont, seq);
        json_object_put(cont);
    } else {
        json_object *e = event_new("observation");
        json_set_int(e, "action", (int64_t)seq);
        json_set(e, "observation", error_observation("ERROR: the gateway restarted while this action ran; its result is unknown."));
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
        double created = gw_wall();
        uint64_t inflight = 0;
        const char *inflight_action = NULL;
        for (size_t k = 0; h && h->type == REDIS_REPLY_ARRAY && k + 1 < h->elements; k += 2) {
            const char *f = h->element[k]->str, *v = h->element[k + 1]->str;
            if (!strcmp(f, "owner")) owner = v;
            else if (!strcmp(f, "profile")) profile = v;
            else if (!strcmp(f, "sandbox")) sbjson = v;
            else if (!strcmp(f, "status")) status = v;
            else if (!strcmp(f, "idle_timeout")) idle = atoi(v);
            else if (!strcmp(f, "max_lifetime")) life = atoi(v);
            else if (!strcmp(f, "created")) created = atof(v);
            else if (!strcmp(f, "inflight")) inflight = strtoull(v, NULL, 10);
            else if (!strcmp(f, "inflight_action")) inflight_action = v;
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
        s->created = created;
        s->params = json_object_new_object();
        s->sb = sb;
        s->prov = provider_find(sb.provider);
        if (!s->prov)
            s->prov = &provider_local;
        GW_LOG("restore: session %s (events from %" PRIu64 ")", id, next_seq);
        if (inflight && inflight < next_seq)
            resume_inflight(s, inflight, inflight_action);
        if (s->prov->alive(&s->sb)) {
            exec_link_connect(s->link, s->sb.socket_path, 5000);
        } else {
            snprintf(s->status, sizeof s->status, "%s", "");
            set_status(s, ST_DISCONNECTED, "the sandbox is gone");
        }
        freeReplyObject(h);
        freeReplyObject(last);
    }
    freeReplyObject(ids);
    redisFree(rc);
}

/* ---- terminals ---- */

int
session_term_open(gw_session_t *s, gw_term_t *t, int cols, int rows, err_t *err)
{
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    if (!c)
        return err_set(err, ERR_BUSY, "the runtime is not connected (status %s)", s->status);
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "terminal");
    json_set_int(req, "cols", cols);
    json_set_int(req, "rows", rows);
    uint32_t ch = exec_client_open(c, req, err);
    json_object_put(req);
    if (!ch)
        return -1;
    exec_client_set_chan_data(c, ch, &kind_term);
    /* The PTY produces only as fast as this client consumes (ttyd's lesson, per terminal). */
    exec_client_set_auto_grant(c, ch, false);
    t->s = s;
    t->ch = ch;
    t->next = s->terms;
    s->terms = t;
    s->last_activity = gw_now();
    exec_link_flush(s->link);
    return 0;
}

void
session_term_input(gw_term_t *t, const void *p, size_t n)
{
    exec_client_t *c = t->s && t->ch ? exec_link_client(t->s->link) : NULL;
    if (!c)
        return;
    /* Keystrokes are small; beyond the executor's credit they wait in the link's queue. */
    const uint8_t *b = p;
    while (n) {
        ssize_t k = exec_client_send_data(c, t->ch, b, n);
        if (k <= 0)
            break;
        b += k;
        n -= (size_t)k;
    }
    t->s->last_activity = gw_now();
    exec_link_flush(t->s->link);
}

void
session_term_resize(gw_term_t *t, int cols, int rows)
{
    exec_client_t *c = t->s && t->ch ? exec_link_client(t->s->link) : NULL;
    if (!c)
        return;
    json_object *m = json_object_new_object(), *r = json_object_new_object();
    json_set_int(r, "cols", cols);
    json_set_int(r, "rows", rows);
    json_set(m, "resize", r);
    exec_client_send_json(c, t->ch, m);
    json_object_put(m);
    exec_link_flush(t->s->link);
}

void
session_term_consumed(gw_term_t *t, size_t n)
{
    exec_client_t *c = t->s && t->ch ? exec_link_client(t->s->link) : NULL;
    if (!c)
        return;
    exec_client_grant(c, t->ch, (uint32_t)n);
    exec_link_flush(t->s->link);
}

void
session_term_close(gw_term_t *t)
{
    gw_session_t *s = t->s;
    if (!s)
        return;
    for (gw_term_t **pp = &s->terms; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    exec_client_t *c = t->ch ? exec_link_client(s->link) : NULL;
    if (c) {
        exec_client_send_close(c, t->ch, NULL); /* hangs the terminal up */
        exec_link_flush(s->link);
    }
    t->ch = 0;
    t->s = NULL;
}
