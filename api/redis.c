/* redis.c — the API worker's Redis connection: one synchronous hiredis context per worker,
 * reconnected on demand, with fire-and-forget posts. See redis.h and redis/README.md. */
#include "redis.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "api.h"
#include "json_util.h"

static redisContext *conn; /* one per worker process */
static int posted;         /* commands sent without waiting: replies not read yet */

void
api_redis_set_timeout(redisContext *c, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    redisSetTimeout(c, tv);
}

void
api_redis_drop(api_req_t *r)
{
    if (conn)
        redisFree(conn);
    conn = NULL;
    posted = 0;
    if (r)
        r->rc = NULL;
}

/* Reads (and discards) the replies of posted commands, so the next reply read is the next
 * command's. -1 when the connection failed (then dropped). */
static int
drain(api_req_t *r)
{
    while (posted > 0) {
        void *rep = NULL;
        if (redisGetReply(conn, &rep) != REDIS_OK) {
            api_redis_drop(r);
            return -1;
        }
        freeReplyObject(rep);
        posted--;
    }
    return 0;
}

redisContext *
api_redis_get(api_req_t *r, bool reply)
{
    if (conn && posted)
        drain(r);
    if (conn && conn->err)
        api_redis_drop(r);
    if (!conn) {
        struct timeval tv = {1, 0};
        const char *a = g_api.redis;
        if (!strncmp(a, "unix:", 5)) {
            conn = redisConnectUnixWithTimeout(a + 5, tv);
        } else {
            char host[256];
            snprintf(host, sizeof host, "%s", a);
            char *colon = strrchr(host, ':');
            int port = 6379;
            if (colon) {
                *colon = '\0';
                port = atoi(colon + 1);
            }
            conn = redisConnectWithTimeout(host, port, tv);
        }
        if (!conn || conn->err) {
            api_redis_drop(r);
            if (reply)
                api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
            return NULL;
        }
        api_redis_set_timeout(conn, API_REDIS_TIMEOUT_MS);
    }
    r->rc = conn;
    return conn;
}

redisReply *
api_redis_cmd(api_req_t *r, int timeout_ms, int argc, const char **argv)
{
    redisContext *c = api_redis_get(r, false);
    if (!c)
        return NULL;
    if (timeout_ms > 0)
        api_redis_set_timeout(c, timeout_ms);
    redisReply *rep = redisCommandArgv(c, argc, argv, NULL);
    if (!rep) {
        api_redis_drop(r);
        return NULL;
    }
    if (timeout_ms > 0)
        api_redis_set_timeout(c, API_REDIS_TIMEOUT_MS);
    return rep;
}

redisReply *
api_redis_cmdf(api_req_t *r, const char *fmt, ...)
{
    redisContext *c = api_redis_get(r, false);
    if (!c)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    redisReply *rep = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!rep)
        api_redis_drop(r);
    return rep;
}

void
api_redis_post(api_req_t *r, const char *fmt, ...)
{
    (void)r;
    if (!conn || conn->err)
        return; /* best effort: never connects for a counter */
    va_list ap;
    va_start(ap, fmt);
    if (redisvAppendCommand(conn, fmt, ap) == REDIS_OK)
        posted++;
    va_end(ap);
}

void
api_redis_end_request(api_req_t *r)
{
    if (!conn || !posted)
        return;
    int done = 0;
    while (!done)
        if (redisBufferWrite(conn, &done) != REDIS_OK) {
            api_redis_drop(r);
            return;
        }
}

void
api_metric_incr(api_req_t *r, const char *field, long long by)
{
    api_redis_post(r, "HINCRBY sp:metrics %s %lld", field, by);
}
