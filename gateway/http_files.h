/* http_files.h — a session's files over HTTP on its own gateway (behind nginx: docs/api.md,
 * "nginx"). */
#ifndef SP_HTTP_FILES_H
#define SP_HTTP_FILES_H

#include "http_server.h"

/* GET /api/v1/sessions/{id}/files/download?path=&offset=&length= : the raw bytes, streamed. */
void http_files_download(http_req_t *h, const char *id);

#endif
