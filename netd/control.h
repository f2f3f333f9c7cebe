/* control.h — the gateways' unix socket (SOCK_SEQPACKET, 0600, root's): one JSON request per
 * message, one JSON answer per request, a sandbox's network namespace passed as an fd
 * (SCM_RIGHTS) with "attach". Requests (docs/operations.md, "Network"):
 *   {"op":"attach","id","session","policy"} + fd -> {"ok":true,"address","resolver",...}
 *   {"op":"detach","id"}                          -> {"ok":true}
 *   {"op":"info","id"}                            -> {"ok":true,"info":{...}}
 *   {"op":"subscribe"}                            -> {"ok":true}, then events on that socket:
 *       {"ev":"refused","id","session","seq","proto","dest"?,"name"?,"rule"[,"dropped"]}
 * An error is {"ok":false,"error":{"code","message"}}. A subscriber too slow to read loses
 * events; the next one it gets says how many ("dropped"). */
#ifndef SP_NETD_CONTROL_H
#define SP_NETD_CONTROL_H

#include <json-c/json.h>

#include "err.h"

int control_listen(err_t *err);
void control_broadcast(json_object *ev);

#endif
