/* http_control.h — the API's control requests to this gateway over HTTP (POST /_sp/op,
 * docs/protocol.md "Control requests"): session create/delete/pause/resume and the other ops
 * sandpipe-api asks a session's gateway (ops.c, OPS_API), one request per HTTP request, the
 * answer its body. Only a control token (common/ctl_token.h) is accepted; nginx never sends
 * anything under /_sp/op (nginx/sandpipe.conf.template). */
#ifndef SP_HTTP_CONTROL_H
#define SP_HTTP_CONTROL_H

#include "http_server.h"

/* POST /_sp/op?to=<gateway id> with a ctl_msg.h request body. */
void http_control(http_req_t *h, const char *id);

#endif
