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

/* Uploads to session sid on gateway gw. op (borrowed) holds the file.upload fields ("path",
 * "mode", "parents", "max_bytes"); "op", "session", "data", "ack" and the request fields of
 * api_gw_send are filled in. rd is read until it returns 0: it should enforce the size limit
 * itself (max_bytes is the executor's own check). Blocks the worker for the whole transfer;
 * on any failure an A is pushed, the gateway removes the temp file, and both lists are
 * deleted. Returns API_GW_OK (*res: {"path","size"}, new ref),
 * API_GW_ERROR (*err: {"code","message"}, new ref; a source failure is code "aborted"),
 * API_GW_TIMEOUT or API_GW_REDIS, like api_gw_call. */
int api_xfer_upload(api_req_t *r, const char *gw, const char *sid, json_object *op,
                    api_xfer_read_fn rd, void *ud, json_object **res, json_object **err);

/* Downloads from session sid on gateway gw. op (borrowed) holds the file.download fields
 * ("path", "offset", "length"), filled in as for an upload. hdr is called once before the first
 * wr (not at all when the gateway fails first: then reply the JSON error); after hdr, a failure
 * can only cut the response short. Returns as api_xfer_upload
 * (*res: {"path","bytes"}); a sink failure aborts the transfer and returns API_GW_ERROR with
 * code "aborted". */
int api_xfer_download(api_req_t *r, const char *gw, const char *sid, json_object *op,
                      api_xfer_header_fn hdr, api_xfer_write_fn wr, void *ud, json_object **res,
                      json_object **err);

#endif
