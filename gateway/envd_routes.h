/* envd_routes.h — E2B's envd, a sandbox's own API, served by the sandbox's gateway under
 * /envd/{session}/ (nginx maps E2B_SANDBOX_URL's paths and the E2b-Sandbox-Id header there;
 * docs/api.md "E2B API"; the wire: docs/e2b-wire.md section 3). */
#ifndef SP_ENVD_ROUTES_H
#define SP_ENVD_ROUTES_H

#include "http_server.h"

/* POST /envd/{id}/process.Process/{method} (envd_process.c) */
void envd_process_rpc(http_req_t *h, const char *sid);
/* GET /envd/{id}/health: 204 while the sandbox runs, 502 when it does not (E2B's isRunning) */
void envd_health(http_req_t *h, const char *sid);

#endif
