/* envd_routes.h — E2B's envd, a sandbox's own API, served by the sandbox's gateway under
 * /envd/{session}/ (nginx maps E2B_SANDBOX_URL's paths and the E2b-Sandbox-Id header there;
 * docs/api.md "E2B API"; the wire: docs/e2b-wire.md section 3). */
#ifndef SP_ENVD_ROUTES_H
#define SP_ENVD_ROUTES_H

#include "http_server.h"

/* POST /envd/{id}/process.Process/{method} (envd_process.c) */
void envd_process_rpc(http_req_t *h, const char *sid);
/* POST /envd/{id}/filesystem.Filesystem/{method} (envd_fs.c, envd_watch.c) */
void envd_filesystem_rpc(http_req_t *h, const char *sid);
/* GET /envd/{id}/files: a file's bytes, streamed (envd_files.c) */
void envd_files_get(http_req_t *h, const char *sid);
/* POST /envd/{id}/files: files written from a multipart form or a raw body, streamed
 * (envd_upload.c) */
void envd_files_post(http_req_t *h, const char *sid);
bool envd_files_post_streams(const http_req_t *h);
/* The polling watchers of a session that ends (envd_watch.c; their channels closed already). */
typedef struct gw_session gw_session_t;
void envd_watchers_free(gw_session_t *s);
/* GET /envd/{id}/health: 204 while the sandbox runs, 502 when it does not (E2B's isRunning) */
void envd_health(http_req_t *h, const char *sid);

#endif
