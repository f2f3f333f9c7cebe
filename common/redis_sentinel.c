/* redis_sentinel.c — asking the sentinels, checking ROLE, connecting (redis_sentinel.h). */
#include "redis_sentinel.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>

#include "redis_auth.h"

static redisContext *
connect_endpoint(const redis_endpoint_t *e, int timeout_ms)
{
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(e->host, e->port, tv);
    if (c && !c->err)
        redisSetTimeout(c, tv);
    return c;
}

/* One sentinel's answer, or < 0 with why in err. */
static int
ask_one(const redis_addr_t *a, const redis_endpoint_t *s, const redis_auth_t *sauth,
        redis_endpoint_t *out, err_t *err)
{
    char name[REDIS_HOST_MAX + 16];
    redis_endpoint_str(s, name, sizeof name);
    redisContext *c = connect_endpoint(s, REDIS_SENTINEL_TIMEOUT_MS);
    if (!c || c->err) {
        int rc =
            err_set(err, ERR_UNAVAILABLE, "sentinel %s: %s", name, c ? c->errstr : "out of memory");
        redisFree(c);
        return rc;
    }
    err_t aerr = {0};
    if (redis_auth_sync(c, sauth, &aerr) < 0) {
        redisFree(c);
        return err_set(err, aerr.code, "sentinel %s: %s", name, aerr.msg);
    }
    redisReply *r = redisCommand(c, "SENTINEL get-master-addr-by-name %s", a->master);
    int rc;
    if (!r)
        rc = err_set(err, ERR_UNAVAILABLE, "sentinel %s: %s", name,
                     c->errstr[0] ? c->errstr : "no answer");
    else if (r->type == REDIS_REPLY_ERROR)
        rc = err_set(err, ERR_UNAVAILABLE, "sentinel %s: %.160s", name, r->str);
    else if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
             r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING)
        rc = err_set(err, ERR_UNAVAILABLE, "sentinel %s does not know a primary named %s", name,
                     a->master);
    else {
        err_t verr = {0};
        rc = redis_endpoint_from_reply(r->element[0]->str, r->element[0]->len, r->element[1]->str,
                                       r->element[1]->len, out, &verr);
        if (rc < 0)
            rc = err_set(err, ERR_UNAVAILABLE, "sentinel %s: %s", name, verr.msg);
    }
    freeReplyObject(r);
    redisFree(c);
    return rc;
}

int
redis_sentinel_ask(const redis_addr_t *a, const redis_auth_t *sentinel_auth, redis_endpoint_t *out,
                   err_t *err)
{
    int rc = err_set(err, ERR_UNAVAILABLE, "no sentinel");
    for (int i = 0; i < a->nsentinels; i++) {
        rc = ask_one(a, &a->sentinels[i], sentinel_auth, out, err);
        if (rc == 0)
            return 0;
    }
    return rc;
}

bool
redis_role_is_master(const redisReply *r, int *replicas)
{
    /* ["master", offset, [[host, port, offset], ...]] */
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        r->element[0]->type != REDIS_REPLY_STRING || strcmp(r->element[0]->str, "master"))
        return false;
    if (replicas)
        *replicas = r->elements >= 3 && r->element[2]->type == REDIS_REPLY_ARRAY
                        ? (int)r->element[2]->elements
                        : 0;
    return true;
}

bool
redis_reply_readonly(const char *reply_text)
{
    return reply_text && !strncmp(reply_text, "READONLY", 8);
}

redisContext *
redis_connect_sync(const redis_addr_t *a, const redis_auth_t *sentinel_auth, int timeout_ms,
                   err_t *err)
{
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    redis_endpoint_t primary;
    redisContext *c;
    char name[REDIS_HOST_MAX + 16];
    switch (a->kind) {
    case REDIS_ADDR_UNIX:
        c = redisConnectUnixWithTimeout(a->path, tv);
        snprintf(name, sizeof name, "unix:%s", a->path);
        break;
    case REDIS_ADDR_TCP:
        c = redisConnectWithTimeout(a->tcp.host, a->tcp.port, tv);
        redis_endpoint_str(&a->tcp, name, sizeof name);
        break;
    default:
        if (redis_sentinel_ask(a, sentinel_auth, &primary, err) < 0)
            return NULL;
        c = redisConnectWithTimeout(primary.host, primary.port, tv);
        redis_endpoint_str(&primary, name, sizeof name);
        break;
    }
    if (!c || c->err) {
        err_set(err, ERR_UNAVAILABLE, "Redis at %s: %s", name, c ? c->errstr : "out of memory");
        redisFree(c);
        return NULL;
    }
    return c;
}

int
redis_check_primary(redisContext *c, const redis_addr_t *a, err_t *err)
{
    if (a->kind != REDIS_ADDR_SENTINEL)
        return 0;
    redisReply *r = redisCommand(c, "ROLE");
    int rc = 0;
    if (!redis_role_is_master(r, NULL))
        rc = err_set(err, ERR_UNAVAILABLE, "Redis is not the primary (ROLE: %.120s)",
                     !r                             ? "no answer"
                     : r->type == REDIS_REPLY_ERROR ? r->str
                                                    : "a replica");
    freeReplyObject(r);
    return rc;
}
