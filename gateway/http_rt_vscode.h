/* http_rt_vscode.h — VS Code through the OpenHands action server's routes (docs/api.md,
 * "VS Code"), as upstream's V0 client opens it: the token from connection_token, then the
 * runtime's URL + "/vscode?tkn=<token>&folder=/workspace" in a browser. code-server runs in the
 * sandbox (the executor's vscode.start, executor/vscode.h) and is reached on its own origin,
 * the session's host-form preview of its port (60001-S.<domain>): it needs its origin's storage
 * and service workers, which the path form's sandboxed pages do not have. */
#ifndef SP_HTTP_RT_VSCODE_H
#define SP_HTTP_RT_VSCODE_H

#include "http_server.h"

/* What the preview token of a VS Code opening is good for. */
#define VSCODE_PREVIEW_TTL (12 * 3600)

/* GET /runtime/{id}/vscode/connection_token: {"token": the runtime's session API key} when VS
 * Code can be opened (code-server in the sandbox, a preview domain, a runtime's key, a caller
 * who may change the session), else {"token": null}, which upstream's client takes as "no VS
 * Code". */
void http_rt_vscode_token(http_req_t *h, const char *id);
/* GET /runtime/{id}/vscode?tkn=<key>[&folder=<dir>]: tkn must be the runtime's session API key
 * (403 {"detail":"Invalid API Key"} otherwise); code-server is started if it is not running,
 * then 302 to its preview with a shared preview token (VSCODE_PREVIEW_TTL) and the folder:
 * http://60001-S.<domain>/?sp_token=…&folder=… (the preview's own redirect then sets its
 * cookie). 501 when the deployment has no preview domain or the sandbox no code-server. */
void http_rt_vscode_open(http_req_t *h, const char *id);

#endif
