/* xfer.h — streamed file transfers between an API request and a sandbox, through the
 * owning gateway's inbox and two Redis lists per transfer (redis/README.md, "Streamed
 * transfers"). The bytes are never held whole: at most a window of chunks is in Redis. */
#ifndef SP_API_XFER_H
#define SP_API_XFER_H

#include <json-c/json.h>
#include <sys/types.h>

#include "gateway_client.h"
#include "http.h"

#define API_XFER_CHUNK  (256u * 1024) /* bytes per D item */
#define API_XFER_WINDOW 8             /* D items not yet acknowledged */

/* Where an upload's bytes come from: fills buf[0..cap), returns > 0 bytes, 0 at the end, < 0
 * when the source failed (client gone, body shorter than announced). */
typedef ssize_t (*api_xfer_read_fn)(void *ud, char *buf, size_t cap);
/* Where a download's bytes go: returns 0, or < 0 when the sink failed (client gone). */
typedef int (*api_xfer_write_fn)(void *ud, const char *p, size_t n);
/* Called once before the first byte with the executor's {"event":"size","size","bytes"}
 * (borrowed): the place to send headers (Content-Length). Returns 0, or < 0 to abort. */
typedef int (*api_xfer_header_fn)(void *ud, json_object *header);

/* Where an upload's bytes come from, where a download's go. */
typedef struct {
    api_xfer_read_fn read;
    void *ud;
} api_xfer_source_t;
typedef struct {
    api_xfer_header_fn header;
    api_xfer_write_fn write;
    void *ud;
} api_xfer_sink_t;

/* Uploads to session sid on gateway gw. op (borrowed) holds the file.upload fields ("path",
 * "mode", "parents", "max_bytes"); "op", "session", "data", "ack" and the request fields of
 * api_gw_send are filled in. src is read until it returns 0: it should enforce the size limit
 * itself (max_bytes is the executor's own check). Blocks the worker for the whole transfer;
 * on any failure an A is pushed, the gateway removes the temp file, and both lists are
 * deleted. Returns the result {"path","size"} (new ref), or NULL with e: the gateway's error,
 * ERR_ABORTED (the source failed), ERR_TIMEOUT or ERR_UNAVAILABLE, as api_gw_call. */
json_object *api_xfer_upload(api_req_t *r, const char *gw, const char *sid, json_object *op,
                             const api_xfer_source_t *src, api_err_t *e);

/* Downloads from session sid on gateway gw. op (borrowed) holds the file.download fields
 * ("path", "offset", "length"), filled in as for an upload. dst's header is called once before
 * the first write (not at all when the gateway fails first: then reply the error); after it, a
 * failure can only cut the response short. Returns as api_xfer_upload (the result
 * {"path","bytes"}); a sink failure aborts the transfer: ERR_ABORTED. */
json_object *api_xfer_download(api_req_t *r, const char *gw, const char *sid, json_object *op,
                               const api_xfer_sink_t *dst, api_err_t *e);

#endif
