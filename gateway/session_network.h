/* session_network.h — a session's network (docs/operations.md, "Network"). Its policy is
 * normalised when the session is created (checked against the caller's role and the
 * operator's default) and kept in its params as "network"; once its executor answers, netd
 * gives the sandbox a link into its own network namespace under that policy (a pooled sandbox
 * gets it at claim time the same way); it is detached with the session. What netd refuses
 * becomes a "network" event in the session's stream, and GET /api/v1/sessions/{id}/network
 * answers the policy, the counters and the last refusals. */
#ifndef SP_SESSION_NETWORK_H
#define SP_SESSION_NETWORK_H

#include <json-c/json.h>

#include "err.h"
#include "http_server.h"
#include "session.h"

/* Replaces params' "network" with its normalised policy ({"mode", "allow"?, "deny"?}), the
 * operator's default where it is absent. -ERR_BAD_REQ (a malformed value) or -ERR_FORBIDDEN
 * (a mode wider than role may ask for) or -ERR_UNAVAILABLE (no netd) with err set. */
int session_network_policy(json_object *params, const char *role, err_t *err);

/* Attaches s's sandbox when its policy wants a network and it is not attached yet (netd takes
 * an attached one back as it is: a restart or a takeover). 0 or < 0 with err set. */
int session_network_attach(gw_session_t *s, err_t *err);
void session_network_detach(gw_session_t *s);

/* Replaces the network policy of running (or paused) s by network (borrowed; a session's
 * "network" value, checked against role as at create): netd attaches its sandbox or changes
 * the attached one's policy in place (connections already open keep going; new ones, names
 * resolved and pins follow the new policy), or detaches it for "none"; then the record keeps
 * it and a {"type":"network","event":"policy","policy","origin":by} event says so. 0, or < 0
 * with err: what session_network_policy refuses, netd's refusal, ERR_BUSY while starting. */
int session_network_set(gw_session_t *s, json_object *network, const char *role, const char *by,
                        err_t *err);

/* At start: netd's events (refusals) into the sessions' streams. */
void session_network_start(void);
void session_network_stop(void);

/* GET /api/v1/sessions/{id}/network */
void http_session_network(http_req_t *h, const char *id);

#endif
