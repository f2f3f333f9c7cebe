/* ws_control.h — requests on /ws/control: {"id":N,"method":"...","params":{...}} answered by
 * {"id":N,"type":"result","result":{...}} or {"id":N,"type":"error","error":{...}}. */
#ifndef SP_WS_CONTROL_H
#define SP_WS_CONTROL_H

#include <json-c/json.h>

#include "jwt.h"

struct lws;

void ws_control_handle(struct lws *wsi, const jwt_claims_t *who, json_object *msg);

#endif
