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
#include "ops.h"
#include "redis_client.h"

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

static void read_next(void);

/* ---- answers: RPUSH to the request's reply key ---- */

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

static void
send_reply(const char *key, json_object *msg)
{
    size_t len;
    const char *t = json_text(msg, &len);
    send_reply_text(key, t, len);
    json_object_put(msg);
}

static void
answer_ok(const ops_reply_t *to, json_object *result)
{
    json_object *m = json_object_new_object();
    json_set_bool(m, "ok", true);
    json_set(m, "result", result);
    send_reply(to->key, m);
}

static void
answer_fail(const ops_reply_t *to, json_object *error)
{
    json_object *m = json_object_new_object();
    json_set_bool(m, "ok", false);
    json_set(m, "error", error);
    send_reply(to->key, m);
}

/* The observation event of a waited-for action: the answer embeds its stored text as is. */
static void
answer_observed(const ops_reply_t *to, uint64_t seq, const char *event, size_t len)
{
    buf_t b = BUF_INIT;
    buf_printf(&b, "{\"ok\":true,\"result\":{\"seq\":%llu,\"event\":", (unsigned long long)seq);
    buf_append(&b, event, len);
    buf_puts(&b, "}}");
    send_reply_text(to->key, b.data, b.len);
    buf_free(&b);
}

/* An op the inbox does not carry (only the API's transfers: every other request of the API comes
 * over HTTP, http_control.c): after the session check, as any op that writes. */
static void
unknown_op(const ops_call_t *c)
{
    char m[160];
    snprintf(m, sizeof m, "op \"%.60s\" is not taken from the inbox (file.upload, file.download)",
             c->op);
    ops_fail(c->reply, "bad_request", m);
}

static const ops_t inbox_unknown = {NULL, true, true, OPS_INBOX, NULL, unknown_op};

static const ops_transport_t inbox_transport = {
    .via = OPS_INBOX,
    .ok = answer_ok,
    .fail = answer_fail,
    .observed = answer_observed,
    .forbidden = "unauthorized",
    /* the API refuses a viewer's writes itself (403); one that reaches the inbox anyway
     * learns nothing about the session */
    .hides_refusals = true,
    .actor = "through the API",
    .unknown = &inbox_unknown,
};

/* A request {"op","reply","owner","role","viewer_session",...}: the API copied who asks from
 * the token it verified. One without a usable reply key has nobody to answer: dropped. */
static void
handle(json_object *r)
{
    const char *reply = json_get_str(r, "reply", NULL);
    if (!reply || strncmp(reply, "sp:reply:", 9) != 0 || strlen(reply) >= OPS_REPLY_KEY_MAX)
        return;
    ops_reply_t to = {.via = &inbox_transport};
    snprintf(to.key, sizeof to.key, "%s", reply);
    ops_call_t c = {
        .op = json_get_str(r, "op", ""),
        .args = r,
        .params = json_get(r, "params"),
        .who = {.sub = json_get_str(r, "owner", ""),
                .role = json_get_str(r, "role", ""),
                .session = json_get_str(r, "viewer_session", "")},
        .reply = &to,
    };
    ops_dispatch(&c);
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
