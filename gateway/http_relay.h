/* http_relay.h — REST routes that are one request to the session's gateway and its answer as
 * the body, served by that gateway itself (behind nginx: docs/api.md, "nginx"). Texts and
 * statuses are sandpipe-api's (api/actions.c api_signal_send, api/files.c). */
#ifndef SP_HTTP_RELAY_H
#define SP_HTTP_RELAY_H

#include "http_server.h"

/* POST /api/v1/sessions/{id}/signal {"signal":"INT"} */
void http_signal(http_req_t *h, const char *id);
/* GET /api/v1/sessions/{id}/files?path=&hidden= */
void http_files_list(http_req_t *h, const char *id);
/* GET /api/v1/sessions/{id}/files/stat?path= */
void http_files_stat(http_req_t *h, const char *id);

#endif
