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
#include "redis_auth.h"
#include "redis_uv.h"
#include "xalloc.h"

static redisAsyncContext *ac;
static bool connected;
static char *addr_saved;
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
    GW_LOG("redis: connected to %s%s%s", addr_saved, auth.user ? " as " : "",
           auth.user ? auth.user : "");
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
    /* ready only once it answers PING (not -LOADING) */
    if (redisAsyncCommand(ac, on_ping, (void *)1, "PING") != REDIS_OK)
        schedule_retry();
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

/* "unix:/path" → path (returns 1); "host:port" → host and port (returns 0). */
static int
parse_addr(const char *addr, char *host, size_t cap, int *port)
{
    if (strncmp(addr, "unix:", 5) == 0) {
        snprintf(host, cap, "%s", addr + 5);
        return 1;
    }
    snprintf(host, cap, "%s", addr);
    char *colon = strrchr(host, ':');
    *port = 6379;
    if (colon) {
        *colon = '\0';
        *port = atoi(colon + 1);
    }
    return 0;
}

redisAsyncContext *
redis_client_async_open(const char *addr)
{
    char host[256];
    int port;
    return parse_addr(addr, host, sizeof host, &port) ? redisAsyncConnectUnix(host)
                                                      : redisAsyncConnect(host, port);
}

static void
connect_now(void)
{
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
    ac = redis_client_async_open(addr_saved);
    if (!ac || ac->err) {
        GW_LOG("redis: %s", ac ? ac->errstr : "out of memory");
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

int
redis_client_start(const char *addr, void (*on_ready)(void))
{
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

bool
redis_client_connected(void)
{
    return connected;
}

static void
on_reply(redisAsyncContext *c, void *r, void *privdata)
{
    (void)c;
    call_t *call = privdata;
    pending--;
    redisReply *reply = r;
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
    struct timeval tv = {2, 0};
    char host[256];
    int port;
    redisContext *c = parse_addr(addr, host, sizeof host, &port)
                          ? redisConnectUnixWithTimeout(host, tv)
                          : redisConnectWithTimeout(host, port, tv);
    if (!c || c->err) {
        if (c)
            redisFree(c);
        return NULL;
    }
    err_t err = {0};
    if (redis_auth_sync(c, &auth, &err) < 0) {
        GW_LOG("redis: %s", err.msg);
        redisFree(c);
        return NULL;
    }
    return c;
}
