/* http_relay.h — REST routes that are one request to the session's gateway and its answer as
 * the body, served by that gateway itself (behind nginx: docs/api.md, "nginx"). Texts and
 * statuses are sandpipe-api's (api/actions.c api_signal_send; the files routes' checks are
 * common/file_req.c). */
#ifndef SP_HTTP_RELAY_H
#define SP_HTTP_RELAY_H

#include "http_server.h"

/* POST /api/v1/sessions/{id}/signal {"signal":"INT"} */
void http_signal(http_req_t *h, const char *id);
/* GET /api/v1/sessions/{id}/files?path=&hidden= */
void http_files_list(http_req_t *h, const char *id);
/* GET …/files/stat?path= */
void http_files_stat(http_req_t *h, const char *id);
/* GET …/files/content?path=&start_line=&end_line=&max_bytes= (text, line ranges) */
void http_files_read(http_req_t *h, const char *id);
/* POST …/files/content {"path","content","encoding","mode","append"} (small writes) */
void http_files_write(http_req_t *h, const char *id);
/* DELETE …/files?path=&recursive= */
void http_files_remove(http_req_t *h, const char *id);
/* POST …/files/mkdir {"path","parents","mode"} */
void http_files_mkdir(http_req_t *h, const char *id);
/* POST …/files/move {"from","to","overwrite"} */
void http_files_move(http_req_t *h, const char *id);
/* PUT …/files/content?path=&append=true: the body (at most FILE_REQ_WRITE_MAX, read whole)
 * appended by a file.write (http_upload.c hands it here) */
void http_files_append(http_req_t *h, const char *id);

#endif
