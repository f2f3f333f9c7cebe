/* create_outcome.c — what became of a session create whose gateway took the request and gave
 * no answer (it died, or did not answer in time). The gateway writes the session's record, and
 * sp:create:<key> naming it, before it takes a sandbox (gateway/session.c); a peer of its host
 * that takes the session over brings it up or marks it ERROR with the reason
 * (gateway/session_restore.c). So the record, followed here for a bounded while, says which
 * answer the caller gets (docs/api.md, "A create whose gateway dies"). */
#include <sys/random.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "clock.h"
#include "gateway_client.h"
#include "json_util.h"
#include "redis.h"
#include "session_record.h"

#define FOLLOW_MIN_S   10 /* at least this long: a takeover takes up to 5 s (docs/operations.md) */
#define FOLLOW_POLL_MS 50

void
api_create_key(char out[API_CREATE_KEY_LEN + 1])
{
    unsigned char r[API_CREATE_KEY_LEN / 2];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        uint64_t t = clock_mono_ns();
        memset(r, 0, sizeof r);
        memcpy(r, &t, sizeof t); /* unique enough for one worker's creates */
    }
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
}

/* The session the gateway recorded for key, into sid: 1, 0 none (yet), -1 Redis failure. */
static int
created_sid(api_req_t *r, const char *key, char *sid, size_t cap)
{
    redisReply *x = api_redis_cmdf(r, "GET sp:create:%s", key);
    if (!x)
        return -1;
    int found = x->type == REDIS_REPLY_STRING && x->len > 0 && x->len < cap &&
                strspn(x->str, "abcdefghijklmnopqrstuvwxyz0123456789-") == x->len;
    if (found)
        snprintf(sid, cap, "%s", x->str);
    freeReplyObject(x);
    return found;
}

/* Why the record says the start failed ("error"), into why. */
static void
start_error(api_req_t *r, const char *sid, char *why, size_t cap)
{
    redisReply *x = api_redis_cmdf(r, "HGET sp:session:{%s} error", sid);
    snprintf(why, cap, "%s",
             x && x->type == REDIS_REPLY_STRING ? x->str : "its runtime stopped as it started");
    if (x)
        freeReplyObject(x);
}

static void
pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

json_object *
api_create_outcome(api_req_t *r, const char *gw, const char *key, bool early, double deadline,
                   api_err_t *e)
{
    char sid[128] = "";
    const char *how = e->code == ERR_TIMEOUT ? "did not answer in time" : "went away";
    if (deadline < clock_mono() + FOLLOW_MIN_S)
        deadline = clock_mono() + FOLLOW_MIN_S;
    for (;;) {
        int found = sid[0] ? 1 : created_sid(r, key, sid, sizeof sid);
        if (found < 0) {
            api_err_redis(e);
            return NULL;
        }
        if (!found && api_gateway_alive(r, gw) == 0) {
            /* gone: what it wrote is all in Redis, and it recorded no session */
            api_err_set(e, ERR_GATEWAY_DOWN,
                        "the gateway %.100s went away before it answered, and before it recorded "
                        "a session: none was created",
                        gw);
            return NULL;
        }
        if (found) {
            /* the caller's own create: its record, whoever r's token names (the Runtime API
             * creates as a runtime's owner) */
            redisReply *h = api_redis_cmdf(r, "HGETALL sp:session:{%s}", sid);
            if (!h) {
                api_err_redis(e);
                return NULL;
            }
            json_object *s =
                h->type == REDIS_REPLY_ARRAY && h->elements ? api_session_from_hash(h) : NULL;
            freeReplyObject(h);
            if (s)
                json_set_int(s, "last_seq", api_session_last_seq(r, sid));
            const char *st = json_get_str(s, "status", "");
            if (!strcmp(st, "READY") ||
                (early && s && strcmp(st, "ERROR") && strcmp(st, "ERROR_RUNTIME_DISCONNECTED") &&
                 strcmp(st, "STOPPED")))
                return s;
            if (!strcmp(st, "ERROR") || !strcmp(st, "ERROR_RUNTIME_DISCONNECTED") ||
                !strcmp(st, "STOPPED")) {
                char why[400];
                start_error(r, sid, why, sizeof why);
                api_err_set(e, ERR_GATEWAY_DOWN,
                            "the gateway %.100s %s before session %s was ready; the session is "
                            "%s: %s",
                            gw, how, sid, st, why);
                json_object_put(s);
                return NULL;
            }
            json_object_put(s);
        }
        if (clock_mono() >= deadline) {
            if (found)
                api_err_set(e, ERR_TIMEOUT,
                            "the gateway %.100s %s before session %s was ready, and no gateway "
                            "has brought it up yet: follow it at /api/v1/sessions/%s",
                            gw, how, sid, sid);
            else
                api_err_set(e, ERR_TIMEOUT,
                            "the gateway %.100s did not answer in time and has recorded no "
                            "session yet",
                            gw);
            return NULL;
        }
        pause_ms(FOLLOW_POLL_MS);
    }
}
