/* sandbox_list.c — GET /v2/sandboxes (and v1 GET /sandboxes): the E2B sandboxes the key may
 * see, oldest first (order=desc: newest), filtered by state and metadata, in pages: limit (1..100,
 * default 100) and nextToken (how many matching sandboxes earlier pages held), the next page's
 * token in X-Next-Token. A sandbox whose session has ended is dropped from sp:e2b:sandboxes here.
 * See e2b.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b.h"
#include "metadata_filter.h"
#include "json_util.h"
#include "redis.h"

#define LIST_SCAN_MAX 5000 /* sandboxes looked at per page at most */
#define LIST_LIMIT    100  /* E2B's default and largest page */

static bool
metadata_matches(json_object *s, json_object *want)
{
    json_object *have = json_get(s, "e2b_metadata");
    json_object_object_foreach(want, k, v)
    {
        if (strcmp(json_get_str(have, k, "\x01"), json_object_get_string(v)) != 0)
            return false;
    }
    return true;
}

/* Is session sid over (or gone), so that its E2B record may go? */
static bool
session_ended(api_req_t *r, const char *sid)
{
    redisReply *h = api_redis_cmdf(r, "HGET sp:session:{%s} status", sid);
    bool ended = h && (h->type == REDIS_REPLY_NIL ||
                       (h->type == REDIS_REPLY_STRING && !strcmp(h->str, "STOPPED")));
    if (h)
        freeReplyObject(h);
    return ended;
}

void
api_e2b_list(api_req_t *r, char **params)
{
    (void)params;
    if (e2b_auth(r, false) < 0)
        return;
    bool ok;
    long long limit = api_query_int(r, "limit", LIST_LIMIT, 1, LIST_LIMIT, &ok);
    long long skip = ok ? api_query_int(r, "nextToken", 0, 0, LIST_SCAN_MAX, &ok) : 0;
    if (!ok)
        return;
    char filter[E2B_FILTER_MAX] = "", state[64] = "", order[8] = "";
    json_object *want = json_object_new_object();
    if (api_query(r, "metadata", filter, sizeof filter) == -2 ||
        api_query(r, "state", state, sizeof state) == -2 ||
        api_query(r, "order", order, sizeof order) == -2 || e2b_metadata_filter(filter, want) < 0) {
        json_object_put(want);
        api_failf(r, ERR_BAD_REQ, "malformed metadata, state or order");
        return;
    }
    bool running = !*state || strstr(state, "running"), paused = !*state || strstr(state, "paused");
    if (!api_redis_get(r, true)) {
        json_object_put(want);
        return;
    }
    redisReply *z =
        api_redis_cmdf(r, "%s sp:e2b:sandboxes 0 %d",
                       !strcmp(order, "desc") ? "ZREVRANGE" : "ZRANGE", LIST_SCAN_MAX - 1);
    if (!z || z->type != REDIS_REPLY_ARRAY) {
        if (z)
            freeReplyObject(z);
        json_object_put(want);
        api_failf(r, ERR_UNAVAILABLE, "Redis is not reachable");
        return;
    }
    json_object *arr = json_object_new_array();
    long long matched = 0;
    bool more = false;
    for (size_t i = 0; i < z->elements; i++) {
        const char *sid = z->element[i]->str;
        api_err_t e;
        json_object *s = e2b_sandbox_load(r, sid, &e);
        if (!s) {
            if (e.code == ERR_NOT_FOUND && session_ended(r, sid))
                e2b_sandbox_forget(r, sid);
            continue;
        }
        const char *st = e2b_state(s);
        bool keep = (!strcmp(st, "running") ? running : paused) && metadata_matches(s, want);
        if (keep && matched++ >= skip) {
            if ((long long)json_object_array_length(arr) == limit)
                more = true;
            else
                json_object_array_add(arr, e2b_detail(s));
        }
        json_object_put(s);
        if (more)
            break;
    }
    freeReplyObject(z);
    json_object_put(want);
    char next[64] = "";
    if (more)
        snprintf(next, sizeof next, "X-Next-Token: %lld\r\n", skip + limit);
    api_reply_json_with(r, 200, more ? next : NULL, arr);
}
