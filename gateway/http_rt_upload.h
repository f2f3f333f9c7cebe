/* http_rt_upload.h — the action server's POST /runtime/{id}/upload_file?destination=&recursive=
 * on the session's own gateway, as upstream 0.62.0 answers ActionExecutionClient.copy_to. */
#ifndef SP_HTTP_RT_UPLOAD_H
#define SP_HTTP_RT_UPLOAD_H

#include "http_server.h"

void http_rt_upload_file(http_req_t *h, const char *id);
/* Its route's body streams (http_server.c's table): always. */
bool http_rt_upload_streams(const http_req_t *h);

#endif
