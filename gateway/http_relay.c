/* http_relay.c — one op of ops.c on the session's own gateway, its result the HTTP body
 * (http_relay.h). Who may: checked here with the API's texts, then by ops_dispatch. */
#include "http_relay.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err_http.h"
#include "gw.h"
#include "file_req.h"
#include "http_rest.h"
#include "json_util.h"
#include "ops.h"
#include "route.h"
#include "session.h"
#include "xalloc.h"

typedef struct {
    jwt_claims_t claims;
    json_object *op; /* the op's fields, "op" included (owned) */
    bool write;
    char id[128];
} relay_t;

static void
relay_free(void *ud)
{
    relay_t *r = ud;
    json_object_put(r->op);
    free(r);
}

static void
answer_ok(const ops_reply_t *to, json_object *result)
{
    http_req_t *h = http_find(to->conn);
    if (h)
        http_answer_json(h, 200, result);
    else
        json_object_put(result);
}

static void
answer_fail(const ops_reply_t *to, json_object *error)
{
    http_req_t *h = http_find(to->conn);
    if (h)
        http_rest_fail_with(h, error, "the gateway failed");
    json_object_put(error);
}

static const ops_transport_t relay_transport = {
    .via = OPS_HTTP,
    .ok = answer_ok,
    .fail = answer_fail,
    .observed = NULL,
    .forbidden = "forbidden",
    .hides_refusals = false,
    .actor = "over HTTP",
    .unknown = &http_unknown_op,
};

static void
on_route(void *ud, const route_t *r)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    relay_t *x = h->ud;
    gw_session_t *s = http_rest_session(h, r, &x->claims, x->id, x->write);
    if (!s)
        return;
    json_set_str(x->op, "session", session_id(s));
    ops_reply_t to = {.via = &relay_transport, .conn = h->id};
    ops_call_t c = {
        .op = json_get_str(x->op, "op", ""),
        .args = x->op,
        .who = {.sub = x->claims.sub, .role = x->claims.role, .session = x->claims.session},
        .reply = &to};
    ops_dispatch(&c);
}

/* The request's relay (op taken), once its token is checked; NULL when it answered. */
static relay_t *
relay_new(http_req_t *h, const char *id, bool write)
{
    relay_t *x = xcalloc(1, sizeof *x);
    x->write = write;
    snprintf(x->id, sizeof x->id, "%s", id);
    h->ud = x;
    h->free_ud = relay_free;
    return http_rest_auth(h, &x->claims) ? x : NULL;
}

static void
relay_go(http_req_t *h, relay_t *x, json_object *op)
{
    x->op = op;
    route_resolve(x->id, on_route, (void *)(uintptr_t)h->id);
}

/* A files route whose op its query gives (file_req.h). */
static void
query_op(http_req_t *h, const char *id, bool write,
         json_object *(*build)(const file_req_query_t *q, err_t *err))
{
    relay_t *x = relay_new(h, id, write);
    if (!x)
        return;
    err_t err = {0};
    file_req_query_t q = http_rest_query(h);
    json_object *op = build(&q, &err);
    if (!op)
        http_rest_fail(h, err.code, "%s", err.msg);
    else
        relay_go(h, x, op);
}

/* A files route whose op its JSON body gives (file_req.h); they all change files. */
static void
body_op(http_req_t *h, const char *id, json_object *(*build)(json_object *body, err_t *err))
{
    relay_t *x = relay_new(h, id, true);
    json_object *body = x ? http_rest_body(h) : NULL;
    if (!body)
        return;
    err_t err = {0};
    json_object *op = build(body, &err);
    json_object_put(body);
    if (!op)
        http_rest_fail(h, err.code, "%s", err.msg);
    else
        relay_go(h, x, op);
}

void
http_files_list(http_req_t *h, const char *id)
{
    query_op(h, id, false, file_req_list);
}

void
http_files_stat(http_req_t *h, const char *id)
{
    query_op(h, id, false, file_req_stat);
}

void
http_files_read(http_req_t *h, const char *id)
{
    query_op(h, id, false, file_req_read);
}

void
http_files_remove(http_req_t *h, const char *id)
{
    query_op(h, id, true, file_req_remove);
}

void
http_files_write(http_req_t *h, const char *id)
{
    body_op(h, id, file_req_write);
}

void
http_files_mkdir(http_req_t *h, const char *id)
{
    body_op(h, id, file_req_mkdir);
}

void
http_files_move(http_req_t *h, const char *id)
{
    body_op(h, id, file_req_move);
}

void
http_signal(http_req_t *h, const char *id)
{
    relay_t *x = relay_new(h, id, true);
    if (!x)
        return;
    json_object *body = http_rest_body(h);
    if (!body)
        return;
    json_object *sig = json_get(body, "signal");
    if (!sig || !json_object_is_type(sig, json_type_string)) {
        json_object_put(body);
        http_rest_fail(h, ERR_BAD_REQ, "signal must be a string such as \"INT\"");
        return;
    }
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "signal");
    json_set_str(op, "signal", json_object_get_string(sig));
    json_object_put(body);
    relay_go(h, x, op);
}

void
http_files_append(http_req_t *h, const char *id)
{
    relay_t *x = relay_new(h, id, true);
    if (!x)
        return;
    err_t err = {0};
    bool append = true;
    file_req_query_t q = http_rest_query(h);
    json_object *op = file_req_upload(&q, g_gw.cfg.upload_max, &append, &err);
    if (!op) {
        http_rest_fail(h, err.code, "%s", err.msg);
        return;
    }
    if (h->body_too_big || h->body_len > FILE_REQ_WRITE_MAX) {
        json_object_put(op);
        http_rest_fail(h, ERR_TOO_BIG, "append bodies are limited to %u bytes",
                       (unsigned)FILE_REQ_WRITE_MAX);
        return;
    }
    relay_go(h, x, file_req_append(op, h->body, h->body_len));
}
