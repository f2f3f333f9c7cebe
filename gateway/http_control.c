/* http_control.c — control requests from sandpipe-api (http_control.h). The answer is 200 with
 * ctl_msg.h's {"ok":...} whatever the op's outcome; any other status is about the request
 * itself (401 not the API's, 400 malformed, 421 meant for another gateway), so the API can tell
 * a gateway's refusal from a failure on the way. Who asks comes in the body: the API copied it
 * from the token it verified, and ops_dispatch checks the rights again. */
#include "http_control.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_msg.h"
#include "ctl_token.h"
#include "gw.h"
#include "jwt.h"
#include "json_util.h"
#include "ops.h"

static void
answer_text(const ops_reply_t *to, char *text, size_t len)
{
    http_req_t *h = http_find(to->conn);
    if (h)
        http_answer(h, 200, NULL, text, len);
    free(text);
}

static void
answer_ok(const ops_reply_t *to, json_object *result)
{
    size_t len;
    char *t = ctl_answer_ok(result, &len);
    answer_text(to, t, len);
}

static void
answer_fail(const ops_reply_t *to, json_object *error)
{
    size_t len;
    char *t = ctl_answer_fail(error, &len);
    answer_text(to, t, len);
}

/* An op the gateway does not know: after the session check, as any op that writes. */
static void
unknown_op(const ops_call_t *c)
{
    char m[128];
    snprintf(m, sizeof m, "unknown op \"%.60s\"", c->op);
    ops_fail(c->reply, "bad_request", m);
}

static const ops_t control_unknown = {NULL, true, true, OPS_API, NULL, unknown_op};

/* The API's ops: a viewer refused on its session learns nothing about it (the API refuses a
 * viewer's writes itself). */
static const ops_transport_t control_transport = {
    .via = OPS_API,
    .ok = answer_ok,
    .fail = answer_fail,
    .observed = NULL, /* an action's observation: the API reads the event stream */
    .forbidden = "unauthorized",
    .hides_refusals = true,
    .actor = "through the API",
    .unknown = &control_unknown,
};

/* A refusal of the request itself: status and {"ok":false,"error":{code,message}}. */
static void
refuse(http_req_t *h, int status, const char *code, const char *msg)
{
    json_object *e = json_object_new_object();
    json_set_str(e, "code", code);
    json_set_str(e, "message", msg);
    size_t len;
    char *t = ctl_answer_fail(e, &len);
    http_answer(h, status, NULL, t, len);
    free(t);
}

void
http_control(http_req_t *h, const char *id)
{
    (void)id;
    const char *token = NULL;
    err_t err = {0};
    if (jwt_bearer_from_header(h->authorization[0] ? h->authorization : NULL, &token) < 0 ||
        ctl_token_verify(g_gw.secret, g_gw.secret_len, token, (int64_t)gw_wall(), &err) < 0) {
        char m[320];
        snprintf(m, sizeof m, "control requests take the API's control token%s%.255s",
                 err.msg[0] ? ": " : "", err.msg);
        refuse(h, 401, "unauthorized", m);
        return;
    }
    const char *to = http_arg(h, "to");
    if (to && strcmp(to, g_gw.cfg.id) != 0) {
        char m[300];
        snprintf(m, sizeof m, "this is gateway %.100s, not %.100s", g_gw.cfg.id, to);
        refuse(h, 421, "gateway_down", m);
        return;
    }
    if (h->body_too_big) {
        refuse(h, 413, "too_large", "control request body over the limit");
        return;
    }
    ctl_request_t q;
    json_object *req = ctl_request_decode(h->body ? h->body : "", h->body_len, &q, &err);
    if (!req) {
        refuse(h, 400, "bad_request", err.msg);
        return;
    }
    ops_reply_t reply = {.via = &control_transport, .conn = h->id};
    ops_call_t c = {
        .op = q.op,
        .args = req,
        .params = json_get(req, "params"),
        .who = {.sub = q.owner, .role = q.role, .session = q.viewer_session},
        .reply = &reply,
    };
    ops_dispatch(&c);
    json_object_put(req);
}
