/* api_events.c — GET /api/v1/sessions/{id}/events?since=N&limit=L&type=T: a session's event
 * history from its Redis stream. Like the WebSocket, a reader asking for events the stream cap
 * already trimmed gets a synthesized {"type":"truncated","from","to"} event first. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_redis.h"
#include "json_util.h"

#define EVENTS_LIMIT_MAX 1000
#define SCAN_FACTOR      20 /* with a type filter, look at up to limit * SCAN_FACTOR events */

static uint64_t
entry_seq(const redisReply *e)
{
    const char *dash = strchr(e->element[0]->str, '-');
    return dash ? strtoull(dash + 1, NULL, 10) : 0;
}

static json_object *
truncated_event(uint64_t from, uint64_t to)
{
    json_object *t = json_object_new_object();
    json_set_int(t, "seq", (int64_t)from);
    json_set_str(t, "type", "truncated");
    json_set_int(t, "from", (int64_t)from);
    json_set_int(t, "to", (int64_t)to);
    json_set_str(t, "reason", "stream cap reached");
    return t;
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
        api_error(r, 400, "bad_request", "malformed type");
        return;
    }
    bool found;
    json_object *s = api_session_load(r, sid, &found);
    if (!s) {
        if (!found)
            api_error(r, 404, "not_found", "no session %.100s", sid);
        return;
    }
    int64_t last = json_get_int(s, "last_seq", 0);
    json_object_put(s);

    char key[160], start[48];
    snprintf(key, sizeof key, "sp:session:{%s}:events", sid);
    uint64_t from = (uint64_t)since + 1, next = (uint64_t)since;
    json_object *arr = json_object_new_array();
    long long added = 0, scanned = 0, budget = *type ? limit * SCAN_FACTOR : limit;
    bool first = true, more = true;
    while (added < limit && scanned < budget && more) {
        snprintf(start, sizeof start, "0-%" PRIu64, next + 1);
        long long want = budget - scanned < 256 ? budget - scanned : 256;
        if (!*type && want > limit - added)
            want = limit - added;
        redisReply *x = api_redis_cmdf(r, "XRANGE %s %s + COUNT %lld", key, start, want);
        if (!x || x->type != REDIS_REPLY_ARRAY) {
            if (x)
                freeReplyObject(x);
            json_object_put(arr);
            api_error(r, 503, "unavailable", "Redis is not reachable");
            return;
        }
        more = (long long)x->elements == want;
        for (size_t i = 0; i < x->elements && added < limit; i++) {
            redisReply *e = x->element[i];
            if (e->type != REDIS_REPLY_ARRAY || e->elements != 2)
                continue;
            uint64_t seq = entry_seq(e);
            if (first && seq > from) {
                json_object_array_add(arr, truncated_event(from, seq - 1));
                added++;
            }
            first = false;
            next = seq;
            scanned++;
            redisReply *f = e->element[1];
            for (size_t k = 0; k + 1 < f->elements; k += 2) {
                if (strcmp(f->element[k]->str, "e") != 0)
                    continue;
                err_t err = {0};
                json_object *ev = json_parse(f->element[k + 1]->str, f->element[k + 1]->len, &err);
                if (!ev)
                    continue;
                if (*type && strcmp(json_get_str(ev, "type", ""), type) != 0) {
                    json_object_put(ev);
                    continue;
                }
                json_object_array_add(arr, ev);
                added++;
            }
            if (added >= limit && i + 1 < x->elements)
                more = true;
        }
        freeReplyObject(x);
    }
    json_object *o = json_object_new_object();
    json_set(o, "events", arr);
    json_set_int(o, "next_since", (int64_t)next);
    json_set_int(o, "last_seq", last);
    json_set_bool(o, "more", next < (uint64_t)last);
    api_reply_json(r, 200, o);
}
