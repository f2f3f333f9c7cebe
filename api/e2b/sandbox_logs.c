/* sandbox_logs.c — GET /sandboxes/{id}/logs?start=&limit= (v1: {"logs": [{timestamp, line}],
 * "logEntries": [...]}) and GET /v2/sandboxes/{id}/logs?cursor=&limit=&direction=&level=&search=
 * (v2: {"logs": [...]}): the sandbox's log, made from its session's event stream (log_entry.h),
 * also once it has ended, for as long as its record is kept.
 *
 * Bounded: a Lua script reads the stream in Redis and sends back only the events that make a
 * log entry (output, the bulk of a stream, never leaves Redis), looking at LOGS_SCAN_MAX events
 * at most per request (then the answer is what it found); at most LOGS_LIMIT_MAX entries. The
 * cursor and start are milliseconds; an event's time is when its gateway stored it. See e2b.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b.h"
#include "json_util.h"
#include "log_entry.h"
#include "redis.h"
#include "session_record.h"

#define LOGS_LIMIT_MAX  1000  /* E2B's default and most */
#define LOGS_SCAN_MAX   10000 /* events looked at per request */
#define LOGS_SEARCH_MAX 256

/* Run with EVAL_RO (the api user reads sessions' streams, never writes them). KEYS[1] the events
 * stream; ARGV: direction ("f": oldest first, from the cursor on; "b": newest
 * first, from the cursor back), the cursor (epoch seconds; "" none), the limit, the events to
 * look at, the kept types (comma-joined). Each event's type and ts are read from its first bytes
 * (the gateway writes them first), so output events are never parsed. A forward read from a
 * cursor walks back from the newest (a cursor is mostly recent: a follower's). Returns the kept
 * events' JSON texts, in the order asked. */
static const char logs_script[] =
    "local key, dir, cur = KEYS[1], ARGV[1], tonumber(ARGV[2])\n"
    "local limit, scan = tonumber(ARGV[3]), tonumber(ARGV[4])\n"
    "local keep = {}\n"
    "for t in string.gmatch(ARGV[5], '[^,]+') do keep[t] = true end\n"
    "local back = dir == 'b' or cur ~= nil\n"
    "local from, seen, out, done = back and '+' or '-', 0, {}, false\n"
    "while not done and seen < scan do\n"
    "  local r\n"
    "  local n = math.min(256, scan - seen)\n"
    "  if back then r = redis.call('XREVRANGE', key, from, '-', 'COUNT', n)\n"
    "  else r = redis.call('XRANGE', key, from, '+', 'COUNT', n) end\n"
    "  if #r == 0 then break end\n"
    "  for _, ent in ipairs(r) do\n"
    "    seen = seen + 1\n"
    "    local e = ent[2][2]\n"
    "    local h = string.sub(e, 1, 160)\n"
    "    local t = string.match(h, '\"type\":\"([%w_]+)\"')\n"
    "    local ts = tonumber(string.match(h, '\"ts\":([%d%.]+)'))\n"
    "    if dir == 'f' and cur and ts and ts < cur then done = true break end\n"
    "    if t and keep[t] and not (dir == 'b' and cur and ts and ts > cur) then\n"
    "      out[#out + 1] = e\n"
    "      if (dir == 'b' or not cur) and #out >= limit then done = true break end\n"
    "    end\n"
    "  end\n"
    "  from = '(' .. r[#r][1]\n"
    "end\n"
    "if dir == 'f' and cur then\n"
    "  local fwd = {}\n"
    "  for i = #out, math.max(1, #out - limit + 1), -1 do fwd[#fwd + 1] = out[i] end\n"
    "  out = fwd\n"
    "end\n"
    "return out\n";

/* The log entries of sid's events (a new array): dir 'f' or 'b' from cursor_ms (< 0: none),
 * at most limit, of level min_level or more, whose message holds search ("": any). NULL with e
 * (Redis). */
static json_object *
read_entries(api_req_t *r, const char *sid, char dir, long long cursor_ms, long long limit,
             int min_level, const char *search, api_err_t *e)
{
    char key[160], cur[32] = "", lim[24], scan[24], types[256] = "", d[2] = {dir, '\0'};
    snprintf(key, sizeof key, "sp:session:{%s}:events", sid);
    if (cursor_ms >= 0)
        snprintf(cur, sizeof cur, "%.3f", (double)cursor_ms / 1000.0);
    /* what the level and the search leave out is cut here: Redis sends the most it may */
    bool filtered = min_level > 0 || search[0];
    snprintf(lim, sizeof lim, "%lld", filtered ? (long long)LOGS_LIMIT_MAX : limit);
    snprintf(scan, sizeof scan, "%d", LOGS_SCAN_MAX);
    for (size_t i = 0; e2b_log_types[i]; i++)
        snprintf(types + strlen(types), sizeof types - strlen(types), "%s%s", i ? "," : "",
                 e2b_log_types[i]);
    const char *argv[] = {"EVAL_RO", logs_script, "1", key, d, cur, lim, scan, types};
    redisReply *x = api_redis_cmd(r, 0, (int)(sizeof argv / sizeof argv[0]), argv);
    if (!x || x->type != REDIS_REPLY_ARRAY) {
        if (x)
            freeReplyObject(x);
        api_err_redis(e);
        return NULL;
    }
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < x->elements && (long long)json_object_array_length(arr) < limit; i++) {
        if (x->element[i]->type != REDIS_REPLY_STRING)
            continue;
        err_t err = {0};
        json_object *ev = json_parse_lossy(x->element[i]->str, x->element[i]->len, &err);
        json_object *entry = ev ? e2b_log_entry(ev) : NULL;
        json_object_put(ev);
        if (!entry)
            continue;
        if (e2b_log_level_rank(json_get_str(entry, "level", "")) < min_level ||
            (search[0] && !strstr(json_get_str(entry, "message", ""), search)))
            json_object_put(entry);
        else
            json_object_array_add(arr, entry);
    }
    freeReplyObject(x);
    return arr;
}

/* The session behind sid as r may see it, running or ended (its log outlives it): true, or
 * false after the 404 (or 503) reply. */
static bool
visible(api_req_t *r, const char *sid)
{
    api_err_t e;
    json_object *s = api_session_load(r, sid, &e);
    if (!s) {
        if (e.code == ERR_NOT_FOUND)
            e2b_not_found(r, sid);
        else
            api_fail(r, &e);
        return false;
    }
    json_object_put(s);
    return true;
}

void
api_e2b_logs(api_req_t *r, char **params)
{
    if (e2b_auth(r, false) < 0)
        return;
    bool ok;
    long long start = api_query_int(r, "start", -1, 0, 1LL << 50, &ok);
    long long limit = ok ? api_query_int(r, "limit", LOGS_LIMIT_MAX, 0, LOGS_LIMIT_MAX, &ok) : 0;
    if (!ok || !visible(r, params[0]))
        return;
    api_err_t e;
    json_object *entries = read_entries(r, params[0], 'f', start, limit, 0, "", &e);
    if (!entries) {
        api_fail(r, &e);
        return;
    }
    json_object *lines = json_object_new_array(), *o = json_object_new_object();
    for (size_t i = 0; i < json_object_array_length(entries); i++) {
        json_object *en = json_object_array_get_idx(entries, i), *l = json_object_new_object();
        json_set(l, "timestamp", json_object_get(json_get(en, "timestamp")));
        json_set(l, "line", e2b_log_line(en));
        json_object_array_add(lines, l);
    }
    json_set(o, "logs", lines);
    json_set(o, "logEntries", entries);
    api_reply_json(r, 200, o);
}

void
api_e2b_logs_v2(api_req_t *r, char **params)
{
    if (e2b_auth(r, false) < 0)
        return;
    bool ok;
    long long cursor = api_query_int(r, "cursor", -1, 0, 1LL << 50, &ok);
    long long limit = ok ? api_query_int(r, "limit", LOGS_LIMIT_MAX, 0, LOGS_LIMIT_MAX, &ok) : 0;
    if (!ok)
        return;
    char direction[16] = "", level[16] = "", search[LOGS_SEARCH_MAX] = "";
    if (api_query(r, "direction", direction, sizeof direction) == -2 ||
        (direction[0] && strcmp(direction, "forward") && strcmp(direction, "backward"))) {
        api_failf(r, ERR_BAD_REQ, "direction must be forward or backward");
        return;
    }
    if (api_query(r, "level", level, sizeof level) == -2 ||
        (level[0] && e2b_log_level_rank(level) < 0)) {
        api_failf(r, ERR_BAD_REQ, "level must be debug, info, warn or error");
        return;
    }
    if (api_query(r, "search", search, sizeof search) == -2) {
        api_failf(r, ERR_BAD_REQ, "search is at most %d bytes", LOGS_SEARCH_MAX - 1);
        return;
    }
    if (!visible(r, params[0]))
        return;
    api_err_t e;
    json_object *entries =
        read_entries(r, params[0], strcmp(direction, "backward") ? 'f' : 'b', cursor, limit,
                     level[0] ? e2b_log_level_rank(level) : 0, search, &e);
    if (!entries) {
        api_fail(r, &e);
        return;
    }
    json_object *o = json_object_new_object();
    json_set(o, "logs", entries);
    api_reply_json(r, 200, o);
}
