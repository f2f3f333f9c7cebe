/* gateway_client.h — requests from an API worker to a gateway through its Redis inbox, and the
 * REST shape of their failures (redis/README.md, "Requests to a gateway"). */
#ifndef SP_API_GATEWAY_CLIENT_H
#define SP_API_GATEWAY_CLIENT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "http.h"

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

#endif
