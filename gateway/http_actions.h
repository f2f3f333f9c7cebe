/* http_actions.h — running an action over HTTP on the session's own gateway: the OpenHands
 * action server's execute_action and the REST API's actions route, with the texts and statuses
 * sandpipe-api gave them (the API's former api/openhands/action_server.c, api/actions.c: the
 * reference), through the gateway's one way of submitting work (ops.c's "action"). */
#ifndef SP_HTTP_ACTIONS_H
#define SP_HTTP_ACTIONS_H

#include "http_server.h"

/* POST /runtime/{id}/execute_action ({id}: a session, or a runtime id rt-<16 hex>). */
void http_rt_execute_action(http_req_t *h, const char *id);
/* POST /api/v1/sessions/{id}/actions */
void http_rest_actions(http_req_t *h, const char *id);

#endif
