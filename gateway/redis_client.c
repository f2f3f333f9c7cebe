/* redis_client.c — hiredis async on libuv (redis_uv.c) with reconnect. Every connection
 * authenticates first when credentials are set (redis_client_set_auth): AUTH, then CLIENT
 * SETNAME and PING; a refusal is logged and tried again every RDS_AUTH_RETRY_MS, the password
 * file read anew each time (a rotated password is picked up). */
#include "redis_client.h"

#include <hiredis/async.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "redis_addr.h"
#include "redis_auth.h"
#include "redis_sentinel.h"
#include "redis_uv.h"
#include "xalloc.h"

static redisAsyncContext *ac;
static bool connected;
static char *addr_saved;
static redis_addr_t where;         /* addr_saved, parsed */
static redis_endpoint_t primary;   /* sentinel mode: the primary this connection is to */
static redis_auth_t sentinel_auth; /* password_file NULL: no AUTH to the sentinels */
static char sentinel_logged_why[ERR_MSG_MAX];
static void (*ready_cb)(void);
static uv_timer_t retry_timer, watch_timer;
static bool timer_init;
static size_t pending;
static double ping_sent; /* monotonic time of the watchdog PING in flight, 0 if none */
static int loading_waits;

/* A connection whose PING is unanswered this long is dead (a hung or partitioned server): it is
 * dropped and a new one made. kill -9 of Redis is seen at once (EOF); this catches the rest. */
#define RDS_DEAD_MS    3000
#define RDS_WATCH_MS   1000
#define RDS_RETRY_MS   200
#define RDS_LOADING_MS 100
/* Refused credentials are not fixed by hammering: try again this often, say so once a minute. */
#define RDS_AUTH_RETRY_MS 5000
#define RDS_AUTH_LOG_S    60

static redis_auth_t auth;                    /* password_file NULL: no AUTH */
static char auth_pw[REDIS_PASSWORD_MAX + 1]; /* read for the connection being made, then wiped */
static int auth_pw_len = -1;
static int retry_ms = RDS_RETRY_MS;
static unsigned auth_refusals;    /* in a row */
static double auth_logged;        /* gw_now() of the last refusal logged */
static char auth_logged_why[160]; /* and what it said */

typedef struct {
    redis_client_cb cb;
    void *ud;
} call_t;

static void connect_now(void);
static void schedule_retry(void);
static void on_ping(redisAsyncContext *c, void *r, void *privdata);
static void on_role(redisAsyncContext *c, void *r, void *privdata);
static void drop_connection(const char *why);

static bool stopped; /* redis_client_stop was called */

static void
on_retry(uv_timer_t *t)
{
    (void)t;
    if (ac && !connected) { /* connected, still loading: ask again */
        if (redisAsyncCommand(ac, on_ping, (void *)1, "PING") != REDIS_OK)
            schedule_retry();
        return;
    }
    if (!ac)
        connect_now();
}

static void
timers_init(void)
{
    if (!timer_init) {
        uv_timer_init(g_gw.loop, &retry_timer);
        uv_unref((uv_handle_t *)&retry_timer);
        uv_timer_init(g_gw.loop, &watch_timer);
        uv_unref((uv_handle_t *)&watch_timer);
        timer_init = true;
    }
}

static void
schedule_retry(void)
{
    if (g_gw.stopping || stopped) /* the timers are closing: never init them again */
        return;
    timers_init();
    uv_timer_start(&retry_timer, on_retry, (uint64_t)retry_ms, 0);
}

/* Redis refused this connection's credentials (or there was no password to give): logged when
 * what it says changes and once a minute, then the next try waits RDS_AUTH_RETRY_MS. The
 * connection, if any, is dropped from a reply callback (hiredis frees it once that returns). */
static void
auth_failed(const char *why)
{
    auth_refusals++;
    double now = gw_now();
    if (strcmp(why, auth_logged_why) || now - auth_logged >= RDS_AUTH_LOG_S) {
        const char *hint = auth.password_file
                               ? "check --redis-user, --redis-password-file and Redis' ACL "
                                 "(redis/users.acl)"
                               : "this Redis wants a password: give --redis-user and "
                                 "--redis-password-file";
        GW_LOG("redis: %s (%s; %u refusal%s in a row, trying again every %d s)", why, hint,
               auth_refusals, auth_refusals == 1 ? "" : "s", RDS_AUTH_RETRY_MS / 1000);
        snprintf(auth_logged_why, sizeof auth_logged_why, "%s", why);
        auth_logged = now;
    }
    retry_ms = RDS_AUTH_RETRY_MS;
    if (ac)
        redisAsyncDisconnect(ac); /* on_disconnect schedules the retry */
    else
        schedule_retry();
}

/* Authenticated (or nothing to authenticate): back to the normal retry pace. */
static void
auth_ok(void)
{
    if (auth_refusals)
        GW_LOG("redis: authenticated as %s after %u refusal%s", auth.user ? auth.user : "default",
               auth_refusals, auth_refusals == 1 ? "" : "s");
    auth_refusals = 0;
    auth_logged_why[0] = '\0';
    retry_ms = RDS_RETRY_MS;
}

/* Every second: a PING on the shared connection; one unanswered for RDS_DEAD_MS drops it. */
static void
on_watch(uv_timer_t *t)
{
    (void)t;
    if (!ac || g_gw.stopping)
        return;
    if (ping_sent > 0) {
        if ((gw_now() - ping_sent) * 1000.0 > RDS_DEAD_MS) {
            GW_LOG("redis: no answer for %d ms: dropping the connection", RDS_DEAD_MS);
            redisAsyncContext *dead = ac;
            ping_sent = 0;
            ac = NULL;
            connected = false;
            redisAsyncFree(dead); /* pending callbacks get NULL */
            schedule_retry();
        }
        return;
    }
    ping_sent = gw_now();
    if (redisAsyncCommand(ac, on_ping, NULL, "PING") != REDIS_OK)
        ping_sent = 0;
    /* A primary demoted without this gateway writing anything is noticed here too. */
    if (connected && where.kind == REDIS_ADDR_SENTINEL)
        redisAsyncCommand(ac, on_role, NULL, "ROLE");
}

/* Connected (or the watchdog's PING): a server still loading its AOF answers -LOADING; wait for
 * it before saying ready, so nothing is sent only to be refused. */
static void
on_ping(redisAsyncContext *c, void *r, void *privdata)
{
    (void)c;
    bool first = privdata != NULL;
    redisReply *reply = r;
    ping_sent = 0;
    if (!reply || !first || connected)
        return;
    if (reply->type == REDIS_REPLY_ERROR && redis_auth_refusal(reply->str)) {
        auth_failed(reply->str); /* e.g. NOAUTH: no credentials given to a Redis that wants them */
        return;
    }
    if (reply->type == REDIS_REPLY_ERROR && !strncmp(reply->str, "LOADING", 7)) {
        if (loading_waits++ % 50 == 0)
            GW_LOG("redis: the server is loading its data; waiting");
        uv_timer_start(&retry_timer, on_retry, RDS_LOADING_MS, 0);
        return;
    }
    connected = true;
    loading_waits = 0;
    auth_ok();
    char name[REDIS_HOST_MAX + 16] = "";
    if (where.kind == REDIS_ADDR_SENTINEL)
        redis_endpoint_str(&primary, name, sizeof name);
    GW_LOG("redis: connected to %s%s%s%s%s", addr_saved, name[0] ? ", primary " : "", name,
           auth.user ? " as " : "", auth.user ? auth.user : "");
    if (ready_cb)
        ready_cb();
}

/* The connection is ours (authenticated, or no credentials set): name it, then PING. */
static void
session_begin(void)
{
    /* Named, so a peer that takes this gateway's sessions over can cut a stalled gateway off
     * (takeover.c): its next write fails, and its reconnection checks ownership first. */
    redisAsyncCommand(ac, NULL, NULL, "CLIENT SETNAME sp-gw:%s", g_gw.cfg.id);
    /* The sentinel's answer may be stale or the server demoted since: a replica is dropped
     * before anything is written to it (on_role), and the sentinels asked again. */
    if (where.kind == REDIS_ADDR_SENTINEL)
        redisAsyncCommand(ac, on_role, (void *)1, "ROLE");
    /* ready only once it answers PING (not -LOADING) */
    if (redisAsyncCommand(ac, on_ping, (void *)1, "PING") != REDIS_OK)
        schedule_retry();
}

/* Drops the shared connection now (from a reply callback too: hiredis frees it once the
 * callback returns); every pending command's callback gets NULL, and the next connection asks
 * the sentinels again. */
static void
drop_connection(const char *why)
{
    static char said[160];
    static double said_at;
    if (!ac)
        return;
    /* Until the sentinels see a demotion they may name the same replica at every try: the
     * same words at most every RDS_AUTH_LOG_S. */
    if (strcmp(why, said) || gw_now() - said_at >= RDS_AUTH_LOG_S) {
        GW_LOG("redis: %s: dropping the connection%s", why,
               where.kind == REDIS_ADDR_SENTINEL ? " (asking the sentinels again)" : "");
        snprintf(said, sizeof said, "%s", why);
        said_at = gw_now();
    }
    redisAsyncContext *dead = ac;
    ping_sent = 0;
    ac = NULL;
    connected = false;
    redisAsyncFree(dead);
    schedule_retry();
}

/* ROLE, at connection (privdata 1) and from the watchdog: a server that is no longer the
 * primary is left at once. */
static void
on_role(redisAsyncContext *c, void *r, void *privdata)
{
    (void)privdata;
    if (!r || c != ac)
        return;
    if (!redis_role_is_master(r, NULL)) {
        const redisReply *reply = r;
        drop_connection(reply->type == REDIS_REPLY_ERROR ? reply->str
                                                         : "the server is not the primary now");
        return;
    }
}

static void
on_auth(redisAsyncContext *c, void *r, void *privdata)
{
    (void)c;
    (void)privdata;
    redisReply *reply = r;
    if (!reply) /* the connection went first: on_disconnect retries */
        return;
    if (reply->type == REDIS_REPLY_ERROR) {
        char why[200];
        snprintf(why, sizeof why, "authentication as %s refused: %s",
                 auth.user ? auth.user : "default", reply->str);
        auth_failed(why);
        return;
    }
    session_begin();
}

static void
on_connect(const redisAsyncContext *c, int status)
{
    if (status != REDIS_OK) {
        GW_LOG("redis: cannot connect to %s: %s", addr_saved, c->errstr);
        ac = NULL;
        OPENSSL_cleanse(auth_pw, sizeof auth_pw);
        auth_pw_len = -1;
        schedule_retry();
        return;
    }
    timers_init();
    uv_timer_start(&watch_timer, on_watch, RDS_WATCH_MS, RDS_WATCH_MS);
    if (auth_pw_len < 0) {
        session_begin();
        return;
    }
    /* AUTH first: nothing else is sent before Redis has accepted it (on_auth). */
    const char *argv[3];
    size_t lens[3];
    int argc = redis_auth_command(&auth, auth_pw, (size_t)auth_pw_len, argv, lens);
    int rc = redisAsyncCommandArgv(ac, on_auth, NULL, argc, argv, lens);
    OPENSSL_cleanse(auth_pw, sizeof auth_pw);
    auth_pw_len = -1;
    if (rc != REDIS_OK)
        schedule_retry();
}

static void
on_disconnect(const redisAsyncContext *c, int status)
{
    (void)c;
    connected = false;
    ac = NULL;
    ping_sent = 0;
    if (status != REDIS_OK)
        GW_LOG("redis: connection lost; reconnecting");
    schedule_retry();
}

/* Sentinel mode: the sentinels are asked off the loop, on libuv's thread pool (each given
 * REDIS_SENTINEL_TIMEOUT_MS to connect and as much to answer, plus a name lookup no timeout
 * bounds): a sentinel that is gone or frozen never stalls the terminals, links and WebSockets
 * the loop serves. The answer is used by the next connect_now, then asked again at the next
 * (re)connection. Only the worker writes the ask; where and sentinel_auth are fixed by then. */
typedef struct {
    uv_work_t req;
    int rc;
    redis_endpoint_t primary;
    err_t err;
} sentinel_ask_t;

static bool asking;        /* an ask is on the thread pool */
static bool primary_named; /* the last ask named primary: the next connection is to it */

static void
ask_work(uv_work_t *req)
{
    sentinel_ask_t *a = req->data;
    a->rc = redis_sentinel_ask(&where, &sentinel_auth, &a->primary, &a->err);
}

static void
ask_done(uv_work_t *req, int status)
{
    sentinel_ask_t *a = req->data;
    asking = false;
    if (status == 0 && a->rc == 0) {
        primary = a->primary;
        primary_named = true;
        sentinel_logged_why[0] = '\0';
    } else {
        const char *why = status ? "the ask was cancelled" : a->err.msg;
        if (strcmp(why, sentinel_logged_why)) {
            GW_LOG("redis: no primary from the sentinels (%s); asking again", why);
            snprintf(sentinel_logged_why, sizeof sentinel_logged_why, "%s", why);
        }
    }
    free(a);
    if (stopped || g_gw.stopping)
        return;
    if (primary_named)
        connect_now();
    else
        schedule_retry();
}

static void
sentinel_ask_start(void)
{
    if (asking)
        return;
    sentinel_ask_t *a = xcalloc(1, sizeof *a);
    a->req.data = a;
    if (uv_queue_work(g_gw.loop, &a->req, ask_work, ask_done) != 0) {
        free(a);
        schedule_retry();
        return;
    }
    asking = true;
}

/* A new connection to where (in sentinel mode, to the primary the last ask named). */
static redisAsyncContext *
async_open(void)
{
    if (where.kind == REDIS_ADDR_UNIX)
        return redisAsyncConnectUnix(where.path);
    if (where.kind == REDIS_ADDR_TCP)
        return redisAsyncConnect(where.tcp.host, where.tcp.port);
    primary_named = false; /* each (re)connection asks again */
    return redisAsyncConnect(primary.host, primary.port);
}

static void
connect_now(void)
{
    if (where.kind == REDIS_ADDR_SENTINEL && !primary_named) {
        sentinel_ask_start(); /* ask_done connects, or schedules the next try */
        return;
    }
    if (auth.password_file) {
        /* Read now, before connecting: a file that does not load is a refusal with no
         * connection to drop (hiredis' connect callback may not free its own context). */
        err_t err = {0};
        auth_pw_len = redis_password_load(auth.password_file, auth_pw, sizeof auth_pw, &err);
        if (auth_pw_len < 0) {
            auth_pw_len = -1;
            auth_failed(err.msg);
            return;
        }
    }
    ac = async_open();
    if (!ac || ac->err) {
        if (ac)
            GW_LOG("redis: %s", ac->errstr);
        if (ac)
            redisAsyncFree(ac);
        ac = NULL;
        OPENSSL_cleanse(auth_pw, sizeof auth_pw);
        auth_pw_len = -1;
        schedule_retry();
        return;
    }
    redis_uv_attach(ac, g_gw.loop);
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
}

void
redis_client_set_auth(const redis_auth_t *a)
{
    auth = a ? *a : (redis_auth_t){0};
}

void
redis_client_set_sentinel_auth(const redis_auth_t *a)
{
    sentinel_auth = a ? *a : (redis_auth_t){0};
}

int
redis_client_start(const char *addr, void (*on_ready)(void))
{
    err_t err = {0};
    if (redis_addr_parse(addr, &where, &err) < 0) {
        GW_LOG("%s", err.msg);
        return -1;
    }
    addr_saved = xstrdup(addr);
    ready_cb = on_ready;
    connect_now();
    return 0;
}

void
redis_client_stop(void)
{
    stopped = true;
    if (timer_init) {
        uv_close((uv_handle_t *)&retry_timer, NULL);
        uv_close((uv_handle_t *)&watch_timer, NULL);
    }
    timer_init = false;
    if (ac)
        redisAsyncDisconnect(ac);
    ac = NULL;
    connected = false;
}

void
redis_client_flush(void)
{
    if (ac)
        redis_uv_flush(ac);
}

bool
redis_client_connected(void)
{
    return connected;
}

bool
redis_client_sentinel(void)
{
    return where.kind == REDIS_ADDR_SENTINEL;
}

void
redis_client_reconnect(const char *why)
{
    drop_connection(why);
}

static void
on_reply(redisAsyncContext *c, void *r, void *privdata)
{
    call_t *call = privdata;
    pending--;
    redisReply *reply = r;
    if (reply && reply->type == REDIS_REPLY_ERROR && redis_reply_readonly(reply->str)) {
        /* A demoted primary did not run the write: not a failed write but a lost connection,
         * which every caller already handles (a NULL reply; the event log re-sends). */
        if (c == ac)
            drop_connection("the server is a replica now (READONLY)");
        reply = NULL;
    }
    if (reply && reply->type == REDIS_REPLY_ERROR)
        GW_LOG("redis: %s", reply->str);
    if (call->cb)
        call->cb(reply, call->ud);
    free(call);
}

/* A call for cb, or NULL once cb has had its NULL reply (Redis is not connected). */
static call_t *
call_begin(redis_client_cb cb, void *ud)
{
    if (!connected || !ac) {
        if (cb)
            cb(NULL, ud);
        return NULL;
    }
    call_t *call = xmalloc(sizeof *call);
    call->cb = cb;
    call->ud = ud;
    return call;
}

/* rc is hiredis's answer to queueing the call's command: pending until on_reply, or (not
 * queued) freed after its callback has had a NULL reply. */
static int
call_queued(call_t *call, int rc)
{
    if (rc != REDIS_OK) {
        if (call->cb)
            call->cb(NULL, call->ud);
        free(call);
        return -1;
    }
    pending++;
    return 0;
}

int
redis_client_cmdv(redis_client_cb cb, void *ud, int argc, const char **argv, const size_t *lens)
{
    call_t *call = call_begin(cb, ud);
    if (!call)
        return -1;
    return call_queued(call, redisAsyncCommandArgv(ac, on_reply, call, argc, argv, lens));
}

int
redis_client_cmd(redis_client_cb cb, void *ud, const char *fmt, ...)
{
    call_t *call = call_begin(cb, ud);
    if (!call)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int rc = redisvAsyncCommand(ac, on_reply, call, fmt, ap);
    va_end(ap);
    return call_queued(call, rc);
}

redisContext *
redis_client_sync_connect(const char *addr)
{
    redis_addr_t a;
    err_t err = {0};
    redisContext *c = NULL;
    if (redis_addr_parse(addr, &a, &err) == 0) {
        /* Sentinel mode, connected: straight to the primary the shared connection is on (its
         * ROLE checked below). Asking the sentinels here, on the loop, would wait for their
         * name lookups, unbounded: a lost node's sentinel's took ~20 s in make soak-swarm,
         * long enough for this gateway's own heartbeat and its executor links to time out. */
        redis_addr_t direct = a;
        bool same = a.kind == REDIS_ADDR_SENTINEL && where.kind == REDIS_ADDR_SENTINEL &&
                    !strcmp(addr, addr_saved ? addr_saved : "") && connected;
        if (same) {
            direct.kind = REDIS_ADDR_TCP;
            direct.tcp = primary;
        }
        c = redis_connect_sync(&direct, &sentinel_auth, 2000, &err);
        if (!c && same) /* that primary is gone: the sentinels, then */
            c = redis_connect_sync(&a, &sentinel_auth, 2000, &err);
    }
    if (!c) {
        GW_LOG("redis: %s", err.msg);
        return NULL;
    }
    if (redis_auth_sync(c, &auth, &err) < 0 || redis_check_primary(c, &a, &err) < 0) {
        GW_LOG("redis: %s", err.msg);
        redisFree(c);
        return NULL;
    }
    return c;
}
