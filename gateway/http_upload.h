/* http_upload.h — file uploads over HTTP on the session's own gateway (behind nginx:
 * docs/api.md, "nginx"): PUT /api/v1/sessions/{id}/files/content, the body streamed from the
 * connection into the executor's file.upload channel. */
#ifndef SP_HTTP_UPLOAD_H
#define SP_HTTP_UPLOAD_H

#include <stdbool.h>

#include "http_server.h"

/* PUT …/files/content?path=&mode=&parents=&max_bytes= (or ?append=true: a small write). */
void http_files_put(http_req_t *h, const char *id);
/* Whether h's body is streamed (an upload) rather than read whole (an append). */
bool http_upload_streams(const http_req_t *h);

#endif
