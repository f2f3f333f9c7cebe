/* redis_client.c — hiredis async on libuv with reconnect. The hiredis libuv adapter is a header
 * of static functions; it is included here only. */
#include "redis_client.h"

#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "xalloc.h"

static redisAsyncContext *ac;
static bool connected;
static char *addr_saved;
static void (*ready_cb)(void);
static uv_timer_t retry_timer;
static bool timer_init;
static size_t pending;

typedef struct {
    rds_cb cb;
    void *ud;
} call_t;

static void connect_now(void);

static void
on_retry(uv_timer_t *t)
{
    (void)t;
    connect_now();
}

static void
schedule_retry(void)
{
    if (g_gw.stopping)
        return;
    if (!timer_init) {
        uv_timer_init(g_gw.loop, &retry_timer);
        uv_unref((uv_handle_t *)&retry_timer);
        timer_init = true;
    }
    uv_timer_start(&retry_timer, on_retry, 200, 0);
}

static void
on_connect(const redisAsyncContext *c, int status)
{
    if (status != REDIS_OK) {
        GW_LOG("redis: cannot connect to %s: %s", addr_saved, c->errstr);
        ac = NULL;
        schedule_retry();
        return;
    }
    connected = true;
    GW_LOG("redis: connected to %s", addr_saved);
    if (ready_cb)
        ready_cb();
}

static void
on_disconnect(const redisAsyncContext *c, int status)
{
    (void)c;
    connected = false;
    ac = NULL;
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
rds_async_open(const char *addr)
{
    char host[256];
    int port;
    return parse_addr(addr, host, sizeof host, &port) ? redisAsyncConnectUnix(host)
                                                      : redisAsyncConnect(host, port);
}

static void
connect_now(void)
{
    ac = rds_async_open(addr_saved);
    if (!ac || ac->err) {
        GW_LOG("redis: %s", ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        ac = NULL;
        schedule_retry();
        return;
    }
    redisLibuvAttach(ac, g_gw.loop);
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
}

int
rds_start(const char *addr, void (*on_ready)(void))
{
    addr_saved = xstrdup(addr);
    ready_cb = on_ready;
    connect_now();
    return 0;
}

void
rds_stop(void)
{
    if (timer_init)
        uv_close((uv_handle_t *)&retry_timer, NULL);
    timer_init = false;
    if (ac)
        redisAsyncDisconnect(ac);
    ac = NULL;
    connected = false;
}

bool
rds_connected(void)
{
    return connected;
}

size_t
rds_pending(void)
{
    return pending;
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

int
rds_cmdv(rds_cb cb, void *ud, int argc, const char **argv, const size_t *lens)
{
    if (!connected || !ac) {
        if (cb)
            cb(NULL, ud);
        return -1;
    }
    call_t *call = xmalloc(sizeof *call);
    call->cb = cb;
    call->ud = ud;
    if (redisAsyncCommandArgv(ac, on_reply, call, argc, argv, lens) != REDIS_OK) {
        free(call);
        if (cb)
            cb(NULL, ud);
        return -1;
    }
    pending++;
    return 0;
}

int
rds_cmd(rds_cb cb, void *ud, const char *fmt, ...)
{
    if (!connected || !ac) {
        if (cb)
            cb(NULL, ud);
        return -1;
    }
    call_t *call = xmalloc(sizeof *call);
    call->cb = cb;
    call->ud = ud;
    va_list ap;
    va_start(ap, fmt);
    int rc = redisvAsyncCommand(ac, on_reply, call, fmt, ap);
    va_end(ap);
    if (rc != REDIS_OK) {
        free(call);
        if (cb)
            cb(NULL, ud);
        return -1;
    }
    pending++;
    return 0;
}

redisContext *
rds_sync_connect(const char *addr)
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
    return c;
}
