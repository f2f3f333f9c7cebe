/* events.c — GET /api/v1/sessions/{id}/events?since=N&limit=L&type=T: a session's event
 * history from its Redis stream. Like the WebSocket, a reader asking for events the stream cap
 * already trimmed gets a synthesized {"type":"truncated","from","to"} event first.
 * The events are JSON texts the gateway wrote; they are copied into the reply as they are
 * (parsed only to read their type when a filter is given), so 10,000 events cost a copy, not a
 * parse and a serialisation each. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "redis.h"
#include "session_record.h"
#include "buf.h"
#include "json_util.h"

#define EVENTS_LIMIT_MAX 10000
#define XRANGE_CHUNK     1024
#define SCAN_FACTOR      20 /* with a type filter, look at up to limit * SCAN_FACTOR events */

static uint64_t
entry_seq(const redisReply *e)
{
    const char *dash = strchr(e->element[0]->str, '-');
    return dash ? strtoull(dash + 1, NULL, 10) : 0;
}

static void
append_truncated(buf_t *out, uint64_t from, uint64_t to)
{
    buf_printf(out,
               "{\"seq\":%" PRIu64 ",\"type\":\"truncated\",\"from\":%" PRIu64 ",\"to\":%" PRIu64
               ",\"reason\":\"stream cap reached\"}",
               from, from, to);
}

/* Does the event text hold an object whose "type" is type? */
static bool
type_is(const char *text, size_t len, const char *type)
{
    err_t err = {0};
    json_object *ev = json_parse_lossy(text, len, &err);
    bool yes = ev && !strcmp(json_get_str(ev, "type", ""), type);
    json_object_put(ev);
    return yes;
}

void
api_events_list(api_req_t *r, char **params)
{
    const char *sid = params[0];
    bool ok;
    long long since = api_query_int(r, "since", 0, 0, INT64_MAX - 1, &ok);
    if (!ok)
        return;
    long long limit = api_query_int(r, "limit", 100, 1, EVENTS_LIMIT_MAX, &ok);
    if (!ok)
        return;
    char type[32] = "";
    if (api_query(r, "type", type, sizeof type) == -2) {
        api_failf(r, ERR_BAD_REQ, "malformed type");
        return;
    }
    api_err_t fail;
    json_object *s = api_session_load(r, sid, &fail);
    if (!s) {
        api_fail(r, &fail);
        return;
    }
    int64_t last = json_get_int(s, "last_seq", 0);
    json_object_put(s);

    char key[160], start[48];
    snprintf(key, sizeof key, "sp:session:{%s}:events", sid);
    uint64_t from = (uint64_t)since + 1, next = (uint64_t)since;
    buf_t out = BUF_INIT;
    buf_puts(&out, "{\"events\":[");
    long long added = 0, scanned = 0, budget = *type ? limit * SCAN_FACTOR : limit;
    bool first = true, more = true;
    while (added < limit && scanned < budget && more) {
        snprintf(start, sizeof start, "0-%" PRIu64, next + 1);
        long long want = budget - scanned < XRANGE_CHUNK ? budget - scanned : XRANGE_CHUNK;
        if (!*type && want > limit - added)
            want = limit - added;
        redisReply *x = api_redis_cmdf(r, "XRANGE %s %s + COUNT %lld", key, start, want);
        if (!x || x->type != REDIS_REPLY_ARRAY) {
            if (x)
                freeReplyObject(x);
            buf_free(&out);
            api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
            return;
        }
        more = (long long)x->elements == want;
        for (size_t i = 0; i < x->elements && added < limit; i++) {
            redisReply *e = x->element[i];
            if (e->type != REDIS_REPLY_ARRAY || e->elements != 2)
                continue;
            uint64_t seq = entry_seq(e);
            if (first && seq > from) {
                append_truncated(&out, from, seq - 1);
                added++;
            }
            first = false;
            next = seq;
            scanned++;
            redisReply *f = e->element[1];
            for (size_t k = 0; k + 1 < f->elements; k += 2) {
                const redisReply *v = f->element[k + 1];
                if (strcmp(f->element[k]->str, "e") != 0 || v->type != REDIS_REPLY_STRING ||
                    !v->len || v->str[0] != '{')
                    continue;
                if (*type && !type_is(v->str, v->len, type))
                    continue;
                if (out.data[out.len - 1] != '[')
                    buf_append(&out, ",", 1);
                /* As stored, but in UTF-8 whatever Redis holds: an entry written by anyone
                 * with its password must not make the whole answer undecodable. */
                size_t len = v->len;
                char *fixed;
                const char *text = json_valid_text(v->str, &len, &fixed);
                buf_append(&out, text, len);
                free(fixed);
                added++;
            }
            if (added >= limit && i + 1 < x->elements)
                more = true;
        }
        freeReplyObject(x);
    }
    buf_printf(&out, "],\"next_since\":%" PRIu64 ",\"last_seq\":%" PRId64 ",\"more\":%s}", next,
               last, next < (uint64_t)last ? "true" : "false");
    api_reply_raw(r, 200, "application/json", out.data, out.len);
    buf_free(&out);
}
