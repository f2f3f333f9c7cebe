/* redis.h — the API worker's Redis: one synchronous hiredis connection per worker, reconnected
 * on demand. Session records are in session_record.h, requests to a gateway in
 * gateway_client.h. */
#ifndef SP_API_REDIS_H
#define SP_API_REDIS_H

#include <hiredis/hiredis.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "http.h"

/* The worker's connection, (re)connected (and authenticated: g_api.redis_auth) when needed and
 * stored in r->rc; one Redis has closed (a restart) is replaced before it is used. NULL when Redis
 * is unreachable or refused the credentials; then, if reply is true, a 503 saying which has been
 * sent. */
redisContext *api_redis_get(api_req_t *r, bool reply);
/* Why the last api_redis_get failed, for a 503's message: "Redis is not reachable", or that
 * Redis refused the API's credentials. */
const char *api_redis_unavailable_why(void);
/* Runs a command (argv form) with a read timeout of timeout_ms (0: the default 5 s). Returns
 * the reply (caller frees with freeReplyObject) or NULL: the connection is dropped, so the
 * next api_redis_get reconnects. A read (GET, HGETALL, XRANGE, ...; not inside WATCH/MULTI)
 * whose connection broke under it is sent once more on a new connection first; anything else
 * is never sent twice. */
redisReply *api_redis_cmd(api_req_t *r, int timeout_ms, int argc, const char **argv);
/* printf-style variant (hiredis format; %s arguments are binary-safe with %b). */
redisReply *api_redis_cmdf(api_req_t *r, const char *fmt, ...);
#define API_REDIS_TIMEOUT_MS 5000 /* a command's read timeout unless said otherwise */

/* Sets the read timeout of c (a blocking call's own timeout, then back to the default). */
void api_redis_set_timeout(redisContext *c, int ms);
/* Drops the worker's connection (after a protocol error or a timeout). */
void api_redis_drop(api_req_t *r);
/* Posts a command whose answer does not matter (a counter, a timestamp): queued on the
 * connection, written with the next command or at the end of the request, its reply read and
 * discarded before the next command's. Never connects. */
void api_redis_post(api_req_t *r, const char *fmt, ...);
/* Writes out posted commands (the request is over; replies are read with the next one). */
void api_redis_end_request(api_req_t *r);

/* Increments the API counter field in the hash sp:metrics (best effort). */
void api_metric_incr(api_req_t *r, const char *field, long long by);

#endif
