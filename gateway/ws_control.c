/* ws_control.c — session management over the control WebSocket: the WebSocket transport of
 * the request table (ops.c), which the REST API reaches over HTTP (http_control.c). */
#include "ws_control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "ops.h"
#include "ws_server.h"

/* ---- answers: {"type":"result"|"error","id",...} queued on the connection, if it lives ---- */

static void
answer(const ops_reply_t *to, const char *type, const char *field, json_object *value)
{
    struct lws *wsi = ws_lookup(to->conn);
    if (!wsi) {
        json_object_put(value);
        return;
    }
    json_object *o = json_object_new_object();
    json_set_str(o, "type", type);
    if (to->id)
        json_set(o, "id", json_object_get(to->id));
    json_set(o, field, value);
    ws_reply(wsi, o);
}

static void
answer_ok(const ops_reply_t *to, json_object *result)
{
    answer(to, "result", "result", result);
}

static void
answer_fail(const ops_reply_t *to, json_object *error)
{
    answer(to, "error", "error", error);
}

/* An op the gateway does not know: said at once. */
static void
unknown_method(const ops_call_t *c)
{
    char m[160];
    snprintf(m, sizeof m, "unknown method \"%.80s\"", c->op);
    ops_fail(c->reply, "bad_request", m);
}

static const ops_t ws_unknown = {NULL, false, false, OPS_WS, NULL, unknown_method};

static const ops_transport_t ws_transport = {
    .via = OPS_WS,
    .ok = answer_ok,
    .fail = answer_fail,
    .observed = NULL,
    .forbidden = "forbidden",
    .hides_refusals = false,
    .actor = "by client",
    .unknown = &ws_unknown,
};

void
ws_control_handle(struct lws *wsi, const jwt_claims_t *who, json_object *msg)
{
    json_object *id = json_get(msg, "id");
    json_object *params = json_get(msg, "params");
    if (params && !json_object_is_type(params, json_type_object)) {
        ws_reply(wsi, ws_error_msg("bad_request", "\"params\" must be an object", id));
        return;
    }
    ops_reply_t to = {.via = &ws_transport, .conn = ws_conn_id(wsi), .id = id};
    ops_call_t c = {
        .op = json_get_str(msg, "method", ""),
        .args = params,
        .params = params,
        .who = {.sub = who->sub, .role = who->role, .session = who->session},
        .reply = &to,
    };
    ops_dispatch(&c);
}
