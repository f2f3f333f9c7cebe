/* http_rt_download.h — the action server's GET /runtime/{id}/download_files?path= on the
 * session's own gateway: a zip of the files under path (names relative to it), as upstream
 * 0.62.0 answers ActionExecutionClient.copy_from. */
#ifndef SP_HTTP_RT_DOWNLOAD_H
#define SP_HTTP_RT_DOWNLOAD_H

#include "http_server.h"

void http_rt_download_files(http_req_t *h, const char *id);

#endif
