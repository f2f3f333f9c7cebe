/* api_redis.h — the API worker's Redis: one synchronous hiredis connection per worker
 * (reconnected on demand), session records, live gateways, and requests to a gateway's inbox
 * (redis/README.md, "Requests to a gateway"). */
#ifndef SP_API_REDIS_H
#define SP_API_REDIS_H

#include <hiredis/hiredis.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "api_http.h"

/* The worker's connection, (re)connected when needed and stored in r->rc. NULL when Redis is
 * unreachable; then, if reply is true, a 503 has been sent. */
redisContext *api_redis_get(api_req_t *r, bool reply);
/* Runs a command (argv form) with a read timeout of timeout_ms (0: the default 5 s). Returns
 * the reply (caller frees with freeReplyObject) or NULL: the connection is dropped, so the
 * next api_redis_get reconnects. */
redisReply *api_redis_cmd(api_req_t *r, int timeout_ms, int argc, const char **argv);
/* printf-style variant (hiredis format; %s arguments are binary-safe with %b). */
redisReply *api_redis_cmdf(api_req_t *r, const char *fmt, ...);
/* Drops the worker's connection (after a protocol error or a timeout). */
void api_redis_drop(api_req_t *r);
/* Posts a command whose answer does not matter (a counter, a timestamp): queued on the
 * connection, written with the next command or at the end of the request, its reply read and
 * discarded before the next command's. Never connects. */
void api_redis_post(api_req_t *r, const char *fmt, ...);
/* Writes out posted commands (the request is over; replies are read with the next one). */
void api_redis_end_request(api_req_t *r);

/* Loads sp:session:{sid} into a new JSON session object (the WebSocket API's shape plus
 * "ended"), or NULL. *found is false when the session does not exist (or r may not see it,
 * which is reported the same way: no existence leak). Replies 503 itself on Redis failure
 * (then *found is true and NULL returned). */
json_object *api_session_load(api_req_t *r, const char *sid, bool *found);
/* Turns an HGETALL reply into the session object (new ref). last_seq is filled by the caller. */
json_object *api_session_from_hash(const redisReply *h);

/* Is gateway gw alive (its heartbeat key exists)? -1 on Redis failure. */
int api_gateway_alive(api_req_t *r, const char *gw);

/* Results of api_gw_call. */
enum { API_GW_OK = 0, API_GW_ERROR = 1, API_GW_TIMEOUT = -1, API_GW_REDIS = -2, API_GW_DEAD = -3 };

#define API_GW_ID_LEN    25              /* 24 hex digits and the NUL */
#define API_GW_REPLY_FMT "sp:reply:{%s}" /* braces: the transfer lists' hash slot */

/* A fresh random request id into id. 0, or -1 when OpenSSL has no randomness. */
int api_gw_new_id(char id[API_GW_ID_LEN]);
/* Fills req's (borrowed) "id" (= id), "reply", "owner", "role", "viewer_session" and XADDs it
 * to the inbox of gateway gw. API_GW_OK or API_GW_REDIS. The answer is pushed to the list
 * named by API_GW_REPLY_FMT and id. */
int api_gw_send(api_req_t *r, const char *gw, json_object *req, const char *id);
/* api_gw_send on behalf of owner/role (not r's token) with the reply key given: for requests
 * the API makes for a runtime's owner (the OpenHands Remote Runtime API). */
int api_gw_send_as(api_req_t *r, const char *gw, json_object *req, const char *id,
                   const char *reply, const char *owner, const char *role);
/* Parses one answer pushed by a gateway: API_GW_OK with *result, API_GW_ERROR with *error (new
 * refs), API_GW_REDIS when it is not JSON. */
int api_gw_parse_reply(const char *text, size_t len, json_object **result, json_object **error);

/* Sends req (borrowed; "id", "reply", "owner", "role", "viewer_session" are filled in) to the
 * inbox of gateway gw and waits up to timeout_s for the answer. API_GW_OK: *result is the
 * result (new ref). API_GW_ERROR: *error is the gateway's {"code","message"} (new ref).
 * Timeout and Redis failures return their codes with nothing set. */
int api_gw_call(api_req_t *r, const char *gw, json_object *req, int timeout_s, json_object **result,
                json_object **error);
/* api_gw_call for ops answered twice on their reply key (an action with "wait"): the second
 * answer is awaited up to second_s more seconds, in the same round trip. *second is NULL when
 * it did not come in time (API_GW_OK still: the first answer holds). check_alive: the
 * gateway's heartbeat is checked in that same round trip; API_GW_DEAD when it is gone. */
int api_gw_call2(api_req_t *r, const char *gw, bool check_alive, json_object *req, int timeout_s,
                 int second_s, json_object **result, json_object **second, json_object **error);

/* HTTP status for a gateway error code name ("not_found" → 404, "busy" → 409, ...). */
int api_gw_status(const char *code);
/* Replies a gateway call failure in the REST error shape. rc is api_gw_call's result. */
void api_gw_reply_failure(api_req_t *r, int rc, json_object *error);
/* api_gw_call with the default timeout, then its result as a 200 or the failure as
 * api_gw_reply_failure does. req stays the caller's. */
void api_gw_relay(api_req_t *r, const char *gw, json_object *req);

/* Increments the API counter field in the hash sp:metrics (best effort). */
void api_metric_incr(api_req_t *r, const char *field, long long by);

#endif
