/* gateway_client.h — requests from an API worker to a gateway through its Redis inbox
 * (redis/README.md, "Requests to a gateway"). Failures are api_err_t (errors.h): the gateway's
 * own error (its code and message), or one on the way there, with the REST API's messages:
 * ERR_TIMEOUT "the gateway did not answer in time", ERR_UNAVAILABLE "Redis is not reachable",
 * ERR_GATEWAY_DOWN "the session's gateway is not running". */
#ifndef SP_API_GATEWAY_CLIENT_H
#define SP_API_GATEWAY_CLIENT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "errors.h"
#include "http.h"

/* Is gateway gw alive (its heartbeat key exists)? -1 on Redis failure. */
int api_gateway_alive(api_req_t *r, const char *gw);

#define API_GW_ID_LEN    25              /* 24 hex digits and the NUL */
#define API_GW_REPLY_FMT "sp:reply:{%s}" /* braces: the transfer lists' hash slot */

/* A fresh random request id into id. 0, or -1 when OpenSSL has no randomness. */
int api_gw_new_id(char id[API_GW_ID_LEN]);
/* Fills req's (borrowed) "id" (= id), "reply", "owner", "role", "viewer_session" (r's token)
 * and XADDs it to the inbox of gateway gw. 0, or -ERR_UNAVAILABLE with e. The answer is pushed
 * to the list named by API_GW_REPLY_FMT and id. */
int api_gw_send(api_req_t *r, const char *gw, json_object *req, const char *id, api_err_t *e);
/* api_gw_send on behalf of owner/role (not r's token), the answer pushed to reply
 * ("sp:reply:<id>"): for requests the API makes for a runtime's owner (the OpenHands Remote
 * Runtime API). 0, or -ERR_UNAVAILABLE. */
int api_gw_send_as(api_req_t *r, const char *gw, json_object *req, const char *reply,
                   const char *owner, const char *role);
/* One answer pushed by a gateway: its result (new ref), or NULL with e (the gateway's error;
 * ERR_UNAVAILABLE when the answer is not JSON). */
json_object *api_gw_parse_reply(const char *text, size_t len, api_err_t *e);

/* ERR_TIMEOUT "the gateway did not answer in time" into e; returns -ERR_TIMEOUT. */
int api_gw_no_answer(api_err_t *e);

/* A request and how to wait for its answer (api_gw_call). */
typedef struct {
    const char *gw;      /* the gateway */
    json_object *req;    /* borrowed; "id", "reply", "owner", "role", "viewer_session" filled in */
    int timeout_s;       /* how long its (first) answer may take */
    int second_s;        /* > 0: the op is answered twice (an action with "wait"): the second
                          * answer is awaited this much longer, in the same round trip */
    bool check_alive;    /* check the gateway's heartbeat in that same round trip */
    json_object *second; /* out: the second answer's result (new ref), NULL when it did not
                          * come in time (the first answer holds: no error) */
} api_gw_call_t;

/* Sends c->req to gateway c->gw and waits for the answer: its result (new ref), or NULL with e
 * (the gateway's error, in either answer; ERR_GATEWAY_DOWN with check_alive; ERR_TIMEOUT;
 * ERR_UNAVAILABLE). */
json_object *api_gw_call(api_req_t *r, api_gw_call_t *c, api_err_t *e);
/* api_gw_call of req to gw, answered once within timeout_s. */
json_object *api_gw_ask(api_req_t *r, const char *gw, json_object *req, int timeout_s,
                        api_err_t *e);
/* Did a failed call fail in the gateway (it answered with an error) rather than on the way? */
bool api_gw_refused(const api_err_t *e);
/* api_gw_ask with the default timeout, then its result as a 200 or the failure as r's error.
 * req stays the caller's. */
void api_gw_relay(api_req_t *r, const char *gw, json_object *req);

#endif
