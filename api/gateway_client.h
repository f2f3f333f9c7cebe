/* gateway_client.h — requests from an API worker to a gateway: control requests over HTTP
 * (gateway_http.c; docs/protocol.md "Control requests"). Failures are api_err_t (errors.h): the
 * gateway's own error (its code and message), or one on the way there, with the REST API's
 * messages: ERR_TIMEOUT "the gateway did not answer in time", ERR_UNAVAILABLE "Redis is not
 * reachable", ERR_GATEWAY_DOWN "the session's gateway is not running". */
#ifndef SP_API_GATEWAY_CLIENT_H
#define SP_API_GATEWAY_CLIENT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "errors.h"
#include "http.h"

/* Is gateway gw alive (its heartbeat key exists)? -1 on Redis failure. */
int api_gateway_alive(api_req_t *r, const char *gw);

/* ERR_TIMEOUT "the gateway did not answer in time" into e; returns -ERR_TIMEOUT. */
int api_gw_no_answer(api_err_t *e);

/* A request to a gateway and how long its answer may take (api_gw_call). */
typedef struct {
    const char *gw;           /* the gateway */
    json_object *req;         /* borrowed; "owner", "role", "viewer_session" filled in */
    int timeout_s;            /* how long its answer may take */
    const char *owner, *role; /* on whose behalf (the OpenHands Runtime API asks for a
                               * runtime's owner); NULL: r's token */
    bool unsent;              /* out: it failed before anything reached the gateway (not
                               * running, not accepting): safe to ask another one */
    bool unanswered;          /* out: it reached the gateway, which gave no HTTP answer (went
                               * away, or the timeout): whether it ran is unknown */
} api_gw_call_t;

/* Sends c->req to gateway c->gw (its advertised address, its heartbeat checked in the same
 * Redis round trip) and waits for the answer on a kept connection: its result (new ref), or
 * NULL with e (may be NULL): the gateway's own error; ERR_GATEWAY_DOWN "the gateway X is not
 * running" (no heartbeat, connection refused, went away mid-request); ERR_TIMEOUT "the gateway
 * did not answer in time"; ERR_UNAVAILABLE (Redis, or the gateway refused the API's control
 * token). */
json_object *api_gw_call(api_req_t *r, api_gw_call_t *c, api_err_t *e);
/* api_gw_call of req to gw, answered within timeout_s, on behalf of r's token. */
json_object *api_gw_ask(api_req_t *r, const char *gw, json_object *req, int timeout_s,
                        api_err_t *e);
/* Did a failed call fail in the gateway (it answered with an error) rather than on the way? */
bool api_gw_refused(const api_err_t *e);
/* api_gw_ask with the default timeout, then its result as a 200 or the failure as r's error.
 * req stays the caller's. */
void api_gw_relay(api_req_t *r, const char *gw, json_object *req);

#endif
