/* http_runtime.h — the OpenHands action server's small routes on the session's own gateway
 * (behind nginx: docs/api.md, "nginx"), with sandpipe-api's texts and statuses ({id}: a session,
 * or a runtime id rt-<16 hex>). The file transfers: http_rt_download.h, http_rt_upload.h; VS
 * Code: http_rt_vscode.h. */
#ifndef SP_HTTP_RUNTIME_H
#define SP_HTTP_RUNTIME_H

#include "http_server.h"

/* GET /runtime/{id}/alive: {"status": "ok" | "not initialized"}, no key. */
void http_rt_alive(http_req_t *h, const char *id);
/* GET /runtime/{id}/health, …/ready: the agent-server's probes, no key. */
void http_rt_health(http_req_t *h, const char *id);
void http_rt_ready(http_req_t *h, const char *id);
/* GET /runtime/{id}/server_info: uptime, idle_time, resources (oh_stats.h), no key. */
void http_rt_server_info(http_req_t *h, const char *id);
/* POST /runtime/{id}/list_files {"path": …}: the executor's oh.list_files. */
void http_rt_list_files(http_req_t *h, const char *id);

#endif
