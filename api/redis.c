/* redis.c — the API worker's Redis connection: one synchronous hiredis context per worker,
 * reconnected on demand, authenticated first (--redis-user, --redis-password-file: the file is
 * read at each connection), with fire-and-forget posts. See redis.h and redis/README.md.
 *
 * A connection Redis closed (a restart, its idle timeout) is seen before it is used: a worker
 * may sit for hours on a connection a restart ended, and its next request must not be the one
 * that finds out. A connection that breaks under a command (closed or reset after the check)
 * is made again and the command sent once more when running it twice cannot matter: a read,
 * outside WATCH/MULTI (their state dies with the connection). Writes, counters and scripts are
 * never sent twice: Redis may have run them. A command a demoted primary refused (READONLY: it
 * ran nothing) is sent once more on a new connection to the primary the sentinels name now. */
#include "redis.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "json_util.h"
#include "redis_auth.h"
#include "redis_sentinel.h"

static redisContext *conn; /* one per worker process */
static int posted;         /* commands sent without waiting: replies not read yet */
static bool transaction;   /* a WATCH or MULTI is open on conn: nothing may be sent again */

/* A refused AUTH is not retried for AUTH_RETRY_S (requests meanwhile get the same 503 at once:
 * no connection per request hammering Redis); the log says why when it changes and once every
 * AUTH_LOG_S per worker. */
#define AUTH_RETRY_S 2
#define AUTH_LOG_S   60
static char refused_why[ERR_MSG_MAX]; /* what clients are told while refused; "" when not */
static double refused_until;          /* clock_mono() until which no connection is tried */
static char logged_why[ERR_MSG_MAX];
static double logged_at;

/* Logs msg unless this worker said the same less than AUTH_LOG_S ago. */
static void
log_refusal(const char *msg, const char *hint)
{
    double now = clock_mono();
    if (!strcmp(msg, logged_why) && now - logged_at < AUTH_LOG_S)
        return;
    fprintf(stderr, "sandpipe-api: worker %d: redis: %s (%s)\n", (int)getpid(), msg, hint);
    snprintf(logged_why, sizeof logged_why, "%s", msg);
    logged_at = now;
}

/* An error reply that refuses the credentials (NOAUTH: none given; NOPERM: the ACL is too
 * narrow for a command) is logged with what to check. */
static void
check_reply(const redisReply *rep)
{
    if (!rep || rep->type != REDIS_REPLY_ERROR || !redis_auth_refusal(rep->str))
        return;
    log_refusal(rep->str, g_api.redis_auth.password_file
                              ? "the user's rules in Redis' ACL (redis/users.acl)"
                              : "this Redis wants a password: give --redis-user and "
                                "--redis-password-file");
}

const char *
api_redis_unavailable_why(void)
{
    return refused_why[0] ? refused_why : "Redis is not reachable";
}

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
    transaction = false;
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

/* Whether Redis has closed c (end of file, a reset) or sent what no command asked for: one
 * non-blocking peek, no round trip. Called with no reply pending (posted ones drained). */
static bool
peer_gone(const redisContext *c)
{
    char byte;
    ssize_t n = recv(c->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0)
        return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
    return true; /* 0: closed; > 0: bytes out of step with the commands */
}

redisContext *
api_redis_get(api_req_t *r, bool reply)
{
    if (conn && posted)
        drain(r);
    if (conn && !conn->err && peer_gone(conn)) {
        fprintf(stderr,
                "sandpipe-api: worker %d: redis: the connection was closed (a restart?): "
                "connecting again\n",
                (int)getpid());
        api_redis_drop(r);
    }
    if (conn && conn->err)
        api_redis_drop(r);
    if (!conn && refused_why[0] && clock_mono() < refused_until) {
        if (reply)
            api_failf(r, ERR_UNAVAILABLE, "%s", refused_why);
        return NULL;
    }
    if (!conn) {
        /* In sentinel mode, asked anew at every connection: a failover is followed here. */
        err_t cerr = {0};
        conn = redis_connect_sync(&g_api.redis_where, &g_api.redis_sentinel_auth, 1000, &cerr);
        if (!conn) {
            api_redis_drop(r);
            refused_why[0] = '\0'; /* not reachable: that is why now */
            if (g_api.redis_where.kind == REDIS_ADDR_SENTINEL)
                log_refusal(cerr.msg, "the sentinels and the primary they name");
            if (reply)
                api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
            return NULL;
        }
        api_redis_set_timeout(conn, API_REDIS_TIMEOUT_MS);
        err_t err = {0};
        int rc = redis_auth_sync(conn, &g_api.redis_auth, &err);
        if (rc < 0) {
            api_redis_drop(r);
            if (rc == -ERR_UNAVAILABLE) {
                refused_why[0] = '\0';
                if (reply)
                    api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
                return NULL;
            }
            /* Refused, or the password file does not load: the log names the user and the
             * file; the client learns that much and no more. */
            log_refusal(err.msg, "check --redis-user, --redis-password-file and Redis' ACL "
                                 "(redis/users.acl)");
            const char *said = strstr(err.msg, ": ");
            if (rc == -ERR_AUTH)
                snprintf(refused_why, sizeof refused_why,
                         "Redis refused the API's credentials: %.200s", said ? said + 2 : err.msg);
            else
                snprintf(refused_why, sizeof refused_why,
                         "the API cannot read its Redis password file (see its log)");
            refused_until = clock_mono() + AUTH_RETRY_S;
            if (reply)
                api_failf(r, ERR_UNAVAILABLE, "%s", refused_why);
            return NULL;
        }
        if (redis_check_primary(conn, &g_api.redis_where, &err) < 0) {
            log_refusal(err.msg, "a stale answer or a failover under way: asking again");
            api_redis_drop(r);
            refused_why[0] = '\0';
            if (reply)
                api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
            return NULL;
        }
        refused_why[0] = '\0';
    }
    r->rc = conn;
    return conn;
}

/* Commands that only read: sent again on a new connection when the old one broke under them. */
static const char READS[] = " GET HGET HGETALL HMGET HEXISTS HLEN EXISTS TYPE TTL PTTL LLEN LRANGE"
                            " SCAN SCARD SMEMBERS SISMEMBER SRANDMEMBER ZCARD ZSCORE ZRANGE"
                            " ZREVRANGE ZRANGEBYSCORE ZREVRANGEBYSCORE XLEN XRANGE XREVRANGE XREAD"
                            " PING ";

/* Whether the command named name (its first n bytes) only reads. */
static bool
is_read(const char *name, size_t n)
{
    char word[24];
    if (n == 0 || n + 3 > sizeof word)
        return false;
    snprintf(word, sizeof word, " %.*s ", (int)n, name);
    return strcasestr(READS, word) != NULL;
}

/* Keeps `transaction` true from a WATCH or MULTI to its EXEC, DISCARD or UNWATCH. */
static void
track_transaction(const char *name, size_t n)
{
    if ((n == 5 && !strncasecmp(name, "WATCH", 5)) || (n == 5 && !strncasecmp(name, "MULTI", 5)))
        transaction = true;
    else if ((n == 4 && !strncasecmp(name, "EXEC", 4)) ||
             (n == 7 && !strncasecmp(name, "DISCARD", 7)) ||
             (n == 7 && !strncasecmp(name, "UNWATCH", 7)))
        transaction = false;
}

/* The connection broke (closed or reset), as opposed to a read timeout (errno: hiredis' last). */
static bool
broke(const redisContext *c, int errno_then)
{
    return c->err == REDIS_ERR_EOF ||
           (c->err == REDIS_ERR_IO && errno_then != EAGAIN && errno_then != EWOULDBLOCK);
}

/* Sends cmd (len bytes, RESP; name: its first word, n bytes) and reads its reply. Returns the
 * reply or NULL (the connection dropped). */
static redisReply *
run(api_req_t *r, int timeout_ms, const char *cmd, int len, const char *name, size_t n)
{
    for (int attempt = 0;; attempt++) {
        redisContext *c = api_redis_get(r, false);
        if (!c)
            return NULL;
        if (timeout_ms > 0)
            api_redis_set_timeout(c, timeout_ms);
        void *rep = NULL;
        if (redisAppendFormattedCommand(c, cmd, (size_t)len) == REDIS_OK &&
            redisGetReply(c, &rep) == REDIS_OK) {
            const redisReply *rr = rep;
            if (rr->type == REDIS_REPLY_ERROR && redis_reply_readonly(rr->str)) {
                /* A demoted primary (a failover): it ran nothing. The next connection asks
                 * the sentinels again; the command is sent there once, unless a WATCH or
                 * MULTI was open (its state stayed behind). */
                bool again = attempt == 0 && !transaction;
                fprintf(stderr,
                        "sandpipe-api: worker %d: redis: the server is a replica now: "
                        "connecting again\n",
                        (int)getpid());
                api_redis_drop(r);
                if (again) {
                    freeReplyObject(rep);
                    continue;
                }
                return rep;
            }
            track_transaction(name, n);
            check_reply(rep);
            if (timeout_ms > 0)
                api_redis_set_timeout(c, API_REDIS_TIMEOUT_MS);
            return rep;
        }
        bool again = attempt == 0 && !transaction && broke(c, errno) && is_read(name, n);
        api_redis_drop(r);
        if (!again)
            return NULL;
    }
}

redisReply *
api_redis_cmd(api_req_t *r, int timeout_ms, int argc, const char **argv)
{
    char *cmd = NULL;
    int len = argc > 0 ? redisFormatCommandArgv(&cmd, argc, argv, NULL) : -1;
    if (len < 0)
        return NULL;
    redisReply *rep = run(r, timeout_ms, cmd, len, argv[0], strlen(argv[0]));
    redisFreeCommand(cmd);
    return rep;
}

redisReply *
api_redis_cmdf(api_req_t *r, const char *fmt, ...)
{
    char *cmd = NULL;
    va_list ap;
    va_start(ap, fmt);
    int len = redisvFormatCommand(&cmd, fmt, ap);
    va_end(ap);
    if (len < 0)
        return NULL;
    redisReply *rep = run(r, 0, cmd, len, fmt, strcspn(fmt, " "));
    redisFreeCommand(cmd);
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
