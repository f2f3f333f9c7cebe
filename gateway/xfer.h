/* xfer.h — streamed file transfers for the REST API: the gateway side of the inbox ops
 * file.upload and file.download (redis/README.md, "Streamed transfers"). */
#ifndef SP_XFER_H
#define SP_XFER_H

#include <json-c/json.h>
#include <stdbool.h>

#include "err.h"
#include "session.h"

/* Starts a transfer for inbox request r (borrowed: "reply", "data", "ack" and the op's
 * fields) on session s. Returns 0 (the transfer answers on r's reply key when it ends), or
 * -1 with err when it cannot start (the caller replies the error). */
int xfer_start(gw_session_t *s, json_object *r, bool upload, err_t *err);

#endif
