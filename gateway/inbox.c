/* inbox.c — the gateway side of API requests. See inbox.h and redis/README.md. */
#include "inbox.h"

#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gw.h"
#include "json_util.h"
#include "redis_client.h"
#include "session.h"
#include "xfer.h"
#include "xalloc.h"

#define REPLY_TTL 120

static redisAsyncContext *blk; /* dedicated to XREAD BLOCK */
static char last_id[64] = "$";
static uv_timer_t retry;
static bool retry_init, stopping;
static double read_sent; /* when the XREAD in flight went out (0: none) */

/* XREAD blocks at most INBOX_BLOCK_MS, so a live connection answers within that; one silent
 * for INBOX_DEAD_MS is dead (a hung server) and is replaced. An error reply (a server still
 * loading its data) is retried after INBOX_ERROR_MS, not at once. */
#define INBOX_BLOCK_MS 2000
#define INBOX_DEAD_MS  5000
#define INBOX_ERROR_MS 200

typedef struct {
    char reply[128];
    uint64_t seq; /* action waited for */
    bool wait;    /* a second answer with the observation */
    gw_session_t *s;
} req_t;

static void read_next(void);

/* ---- replies ---- */

static void send_reply_text(const char *key, const char *t, size_t len);

static void
send_reply(const char *key, json_object *msg)
{
    size_t len;
    const char *t = json_text(msg, &len);
    send_reply_text(key, t, len);
    json_object_put(msg);
}

static void
reply_ok(const char *key, json_object *result)
{
    json_object *m = json_object_new_object();
    json_set_bool(m, "ok", true);
    json_set(m, "result", result ? result : json_object_new_object());
    send_reply(key, m);
}

static void
reply_err(const char *key, int code, const char *msg)
{
    json_object *m = json_error_new(code, msg);
    json_set_bool(m, "ok", false);
    send_reply(key, m);
}

/* ---- requests ---- */

static bool
allowed(json_object *r, gw_session_t *s, bool write)
{
    const char *role = json_get_str(r, "role", ""), *owner = json_get_str(r, "owner", "");
    if (!strcmp(role, "admin"))
        return true;
    if (!strcmp(role, "viewer"))
        return !write && !strcmp(json_get_str(r, "viewer_session", ""), session_id(s));
    return !strcmp(role, "user") && !strcmp(owner, session_owner(s));
}

static void
on_created(void *ud, gw_session_t *s, int code, const char *msg)
{
    req_t *q = ud;
    if (s)
        reply_ok(q->reply, session_describe(s));
    else
        reply_err(q->reply, code, msg ? msg : "the session could not start");
    free(q);
}

static void
send_reply_text(const char *key, const char *t, size_t len)
{
    const char *argv[] = {"RPUSH", key, t};
    size_t lens[] = {5, strlen(key), len};
    redis_client_cmdv(NULL, NULL, 3, argv, lens);
    char ttl[16];
    snprintf(ttl, sizeof ttl, "%d", REPLY_TTL);
    redis_client_cmd(NULL, NULL, "EXPIRE %s %s", key, ttl);
}

/* The observation event of a waited-for action: the reply embeds its stored text as is. */
static void
on_observed(void *ud, const char *event, size_t len)
{
    req_t *q = ud;
    if (event) {
        buf_t b = BUF_INIT;
        buf_printf(&b,
                   "{\"ok\":true,\"result\":{\"seq\":%llu,\"event\":", (unsigned long long)q->seq);
        buf_append(&b, event, len);
        buf_puts(&b, "}}");
        send_reply_text(q->reply, b.data, b.len);
        buf_free(&b);
    } else if (!g_gw.stopping) {
        /* (a gateway shutting down says nothing: the session and its action go on in the
         * sandbox, and the waiting API finds the observation in the stream later) */
        json_object *m = json_object_new_object(), *e = json_object_new_object();
        json_set_str(e, "code", "session_ended");
        json_set_str(e, "message", "the session stopped before the action finished");
        json_set(m, "error", e);
        json_set_bool(m, "ok", false);
        send_reply(q->reply, m);
    }
    free(q);
}

/* The action event is stored: its number is the answer; with wait, the observation follows. */
static void
on_action_stored(void *ud, uint64_t seq)
{
    req_t *q = ud;
    if (!seq) {
        if (!g_gw.stopping)
            reply_err(q->reply, ERR_NOT_FOUND, "the session stopped before the action was queued");
        free(q);
        return;
    }
    json_object *res = json_object_new_object();
    json_set_int(res, "seq", (int64_t)seq);
    reply_ok(q->reply, res);
    if (q->wait)
        session_watch_action(q->s, seq, on_observed, q);
    else
        free(q);
}

static void
on_op_done(void *ud, json_object *result)
{
    req_t *q = ud;
    json_object *err = json_get(result, "error");
    if (err) {
        json_object *m = json_object_new_object();
        json_set_bool(m, "ok", false);
        json_set(m, "error", json_object_get(err));
        send_reply(q->reply, m);
    } else {
        reply_ok(q->reply, json_object_get(result));
    }
    free(q);
}

static void
handle(json_object *r)
{
    const char *op = json_get_str(r, "op", ""), *reply = json_get_str(r, "reply", NULL);
    if (!reply || strncmp(reply, "sp:reply:", 9) != 0 ||
        strlen(reply) >= sizeof(((req_t *)0)->reply))
        return; /* nobody to answer: drop */
    if (!strcmp(op, "session.create")) {
        if (!strcmp(json_get_str(r, "role", ""), "viewer")) {
            reply_err(reply, ERR_AUTH, "viewers cannot create sessions");
            return;
        }
        req_t *q = xcalloc(1, sizeof *q);
        snprintf(q->reply, sizeof q->reply, "%s", reply);
        session_create(json_get(r, "params"), json_get_str(r, "owner", ""), on_created, q);
        return;
    }
    gw_session_t *s = session_find(json_get_str(r, "session", ""));
    bool write = strcmp(op, "file.read") && strcmp(op, "file.list") && strcmp(op, "file.stat") &&
                 strcmp(op, "oh.list_files") && strcmp(op, "session.get") && strcmp(op, "health") &&
                 strcmp(op, "file.download");
    if (!s || !allowed(r, s, write)) {
        reply_err(reply, ERR_NOT_FOUND, "no such session on this gateway");
        return;
    }
    err_t err = {0};
    if (!strcmp(op, "session.get")) {
        reply_ok(reply, session_describe(s));
    } else if (!strcmp(op, "session.delete")) {
        json_object *d = session_describe(s);
        session_delete(s, "deleted through the API");
        json_set_str(d, "status", session_status_text(SESSION_STOPPED));
        reply_ok(reply, d);
    } else if (!strcmp(op, "session.pause") || !strcmp(op, "session.resume")) {
        int rc = !strcmp(op, "session.pause") ? session_pause(s, "paused through the API", &err)
                                              : session_resume(s, &err);
        if (rc < 0)
            reply_err(reply, err.code, err.msg);
        else
            reply_ok(reply, session_describe(s));
    } else if (!strcmp(op, "file.upload") || !strcmp(op, "file.download")) {
        if (xfer_start(s, r, !strcmp(op, "file.upload"), &err) < 0)
            reply_err(reply, err.code, err.msg);
    } else if (!strcmp(op, "action")) {
        uint64_t seq = session_submit(s, json_get(r, "action"), json_get_str(r, "owner", ""), &err);
        if (!seq) {
            reply_err(reply, err.code, err.msg);
            return;
        }
        /* answered once the action event is stored (its number is then never reused); with
         * wait, a second answer follows: the observation event */
        req_t *q = xcalloc(1, sizeof *q);
        snprintf(q->reply, sizeof q->reply, "%s", reply);
        q->seq = seq;
        q->wait = json_get_bool(r, "wait", false);
        q->s = s;
        session_when_stored(s, seq, on_action_stored, q);
    } else if (!strcmp(op, "signal")) {
        if (session_signal(s, json_get_str(r, "signal", "INT"), &err) < 0)
            reply_err(reply, err.code, err.msg);
        else
            reply_ok(reply, NULL);
    } else if (!strcmp(op, "file.read") || !strcmp(op, "file.list") || !strcmp(op, "file.stat") ||
               !strcmp(op, "oh.list_files") || !strcmp(op, "health") || !strcmp(op, "file.write") ||
               !strcmp(op, "file.mkdir") || !strcmp(op, "file.remove") ||
               !strcmp(op, "file.move")) {
        /* The request's own fields are the executor op's fields. */
        json_object *req = json_object_new_object();
        json_object_object_foreach(r, k, v)
        {
            if (strcmp(k, "reply") && strcmp(k, "owner") && strcmp(k, "role") &&
                strcmp(k, "session") && strcmp(k, "id") && strcmp(k, "viewer_session"))
                json_set(req, k, json_object_get(v));
        }
        req_t *q = xcalloc(1, sizeof *q);
        snprintf(q->reply, sizeof q->reply, "%s", reply);
        if (session_exec_op(s, req, on_op_done, q, &err) < 0) {
            free(q);
            reply_err(reply, err.code, err.msg);
        }
        json_object_put(req);
    } else {
        char m[128];
        snprintf(m, sizeof m, "unknown op \"%.60s\"", op);
        reply_err(reply, ERR_BAD_REQ, m);
    }
}

/* ---- the blocking read loop ---- */

static void connect_blk(void);
static void on_blk_connect(const redisAsyncContext *c, int status);
static void on_retry(uv_timer_t *t);
static void schedule(void);

/* A reply to the read in flight: false when there is nothing to use (disconnected: the
 * disconnect callback reconnects; an error, e.g. a server still loading: read again after
 * INBOX_ERROR_MS). */
static bool
reply_usable(const redisReply *r)
{
    read_sent = 0;
    if (!r)
        return false;
    if (r->type == REDIS_REPLY_ERROR) {
        uv_timer_start(&retry, on_retry, INBOX_ERROR_MS, 0);
        return false;
    }
    return true;
}

static void
on_xread(redisAsyncContext *c, void *reply, void *privdata)
{
    (void)c;
    (void)privdata;
    redisReply *r = reply;
    if (!reply_usable(r))
        return;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1) {
        redisReply *entries = r->element[0]->element[1];
        for (size_t i = 0; i < entries->elements; i++) {
            redisReply *e = entries->element[i];
            snprintf(last_id, sizeof last_id, "%s", e->element[0]->str);
            redisReply *f = e->element[1];
            for (size_t k = 0; k + 1 < f->elements; k += 2)
                if (!strcmp(f->element[k]->str, "r")) {
                    err_t err = {0};
                    json_object *req =
                        json_parse(f->element[k + 1]->str, f->element[k + 1]->len, &err);
                    if (req && json_object_is_type(req, json_type_object))
                        handle(req);
                    json_object_put(req);
                }
        }
    }
    read_next();
}

static void
read_next(void)
{
    if (!blk || stopping)
        return;
    char key[128];
    snprintf(key, sizeof key, "sp:gateway:%s:inbox", g_gw.cfg.id);
    read_sent = gw_now();
    redisAsyncCommand(blk, on_xread, NULL, "XREAD COUNT 64 BLOCK %d STREAMS %s %s", INBOX_BLOCK_MS,
                      key, last_id);
}

/* Retries: a new connection, or the next read after an error reply. Also the watchdog. */
static void
on_retry(uv_timer_t *t)
{
    (void)t;
    if (!blk) {
        connect_blk();
    } else if (read_sent == 0) {
        on_blk_connect(blk, REDIS_OK); /* pins "$" first if that is still to do */
    }
}

static void
on_watchdog(uv_timer_t *t)
{
    (void)t;
    if (blk && read_sent > 0 && (gw_now() - read_sent) * 1000.0 > INBOX_DEAD_MS) {
        GW_LOG("inbox: Redis silent for %d ms: reconnecting", INBOX_DEAD_MS);
        redisAsyncContext *dead = blk;
        blk = NULL;
        read_sent = 0;
        redisAsyncFree(dead);
        schedule();
    }
}

static void
schedule(void)
{
    if (stopping)
        return;
    if (!retry_init) {
        uv_timer_init(g_gw.loop, &retry);
        retry_init = true;
    }
    uv_timer_start(&retry, on_retry, 500, 0);
}

/* The inbox's newest entry id when the gateway first connects (0-0 for an empty inbox). */
static void
on_top_id(redisAsyncContext *c, void *reply, void *privdata)
{
    (void)c;
    (void)privdata;
    redisReply *r = reply;
    if (!reply_usable(r))
        return;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
        r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements >= 1 &&
        r->element[0]->element[0]->type == REDIS_REPLY_STRING)
        snprintf(last_id, sizeof last_id, "%s", r->element[0]->element[0]->str);
    else
        snprintf(last_id, sizeof last_id, "0-0");
    read_next();
}

static void
on_blk_connect(const redisAsyncContext *c, int status)
{
    (void)c;
    if (status != REDIS_OK) {
        blk = NULL;
        schedule();
        return;
    }
    if (strcmp(last_id, "$") != 0) {
        read_next();
        return;
    }
    /* First connection: pin "$" to a real id now. Left as "$", a reconnection (Redis
     * restarted) would skip every request queued between the restart and the new XREAD. */
    char key[128];
    snprintf(key, sizeof key, "sp:gateway:%s:inbox", g_gw.cfg.id);
    read_sent = gw_now();
    redisAsyncCommand(blk, on_top_id, NULL, "XREVRANGE %s + - COUNT 1", key);
}

static void
on_blk_disconnect(const redisAsyncContext *c, int status)
{
    (void)c;
    (void)status;
    blk = NULL;
    schedule();
}

static void
connect_blk(void)
{
    blk = redis_client_async_open(g_gw.cfg.redis);
    if (!blk || blk->err) {
        if (blk)
            redisAsyncFree(blk);
        blk = NULL;
        schedule();
        return;
    }
    redisLibuvAttach(blk, g_gw.loop);
    redisAsyncSetConnectCallback(blk, on_blk_connect);
    redisAsyncSetDisconnectCallback(blk, on_blk_disconnect);
}

static uv_timer_t watchdog;

void
inbox_start(void)
{
    if (!retry_init) {
        uv_timer_init(g_gw.loop, &retry);
        retry_init = true;
    }
    uv_timer_init(g_gw.loop, &watchdog);
    uv_timer_start(&watchdog, on_watchdog, 1000, 1000);
    connect_blk();
}

void
inbox_stop(void)
{
    stopping = true;
    if (retry_init) {
        uv_timer_stop(&retry);
        uv_close((uv_handle_t *)&retry, NULL);
        uv_close((uv_handle_t *)&watchdog, NULL);
        retry_init = false;
    }
    if (blk)
        redisAsyncDisconnect(blk);
    blk = NULL;
}
