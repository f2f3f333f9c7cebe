/* http_rest.c — the REST routes' shared pieces (http_rest.h). */
#include "http_rest.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "err_http.h"
#include "gw.h"
#include "json_util.h"
#include "jwt_cache.h"

void
http_rest_fail(http_req_t *h, int code, const char *fmt, ...)
{
    char msg[HTTP_REST_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_object *o = json_object_new_object(), *e = json_object_new_object();
    json_set_str(e, "code", err_name(code));
    json_set_str(e, "message", msg);
    json_set(o, "error", e);
    http_answer_json(h, err_http_status(code, false), o);
}

gw_session_t *
http_rest_session(http_req_t *h, const route_t *r, const jwt_claims_t *c, const char *id,
                  bool write)
{
    if (!r) {
        http_rest_fail(h, ERR_UNAVAILABLE, "Redis is not reachable");
        return NULL;
    }
    if (!r->found || !http_may_see(c, r)) {
        http_rest_fail(h, ERR_NOT_FOUND, "no session %.100s", id);
        return NULL;
    }
    if (write && !http_may_write(c, r)) {
        http_rest_fail(h, ERR_FORBIDDEN, "this token is read-only");
        return NULL;
    }
    if (!strcmp(r->status, "STOPPED")) {
        http_rest_fail(h, ERR_SESSION_ENDED, "the session has stopped");
        return NULL;
    }
    gw_session_t *s = session_find(r->sid);
    if (!s && !r->gw_alive)
        http_rest_fail(h, ERR_GATEWAY_DOWN, "the session's gateway %.100s is not running", r->gw);
    else if (!s)
        http_rest_fail(h, ERR_UNAVAILABLE, "the session is on gateway %.100s, not this one", r->gw);
    return s;
}

void
http_rest_fail_with(http_req_t *h, json_object *error, const char *what)
{
    http_rest_fail(h, err_from_gateway_name(json_get_str(error, "code", "internal")), "%s",
                   json_get_str(error, "message", what));
}

static void
unknown_op(const ops_call_t *c)
{
    ops_fail(c->reply, "internal", "not an op of the HTTP routes");
}

const ops_t http_unknown_op = {NULL, true, true, OPS_HTTP, NULL, unknown_op};

bool
http_may_see(const jwt_claims_t *c, const route_t *r)
{
    if (!strcmp(c->role, "admin"))
        return true;
    if (!strcmp(c->role, "viewer"))
        return !strcmp(c->session, r->sid);
    return !strcmp(c->role, "user") && !strcmp(c->sub, r->owner);
}

bool
http_may_write(const jwt_claims_t *c, const route_t *r)
{
    return http_may_see(c, r) && strcmp(c->role, "viewer") != 0;
}

/* Authorization: Bearer, as api/auth.c's api_auth_bearer answers it. */
bool
http_rest_auth(http_req_t *h, jwt_claims_t *c)
{
    const char *token = NULL;
    int rc = jwt_bearer_from_header(h->authorization[0] ? h->authorization : NULL, &token);
    if (rc == -ERR_NOT_FOUND) {
        http_rest_fail(h, ERR_AUTH, "an Authorization: Bearer token is required");
        return false;
    }
    if (rc < 0) {
        http_rest_fail(h, ERR_AUTH, "the Authorization header must be \"Bearer <token>\"");
        return false;
    }
    err_t err = {0};
    rc = jwt_cache_verify(token, (int64_t)gw_wall(), c, &err);
    if (rc == -ERR_AUTH_EXPIRED)
        http_rest_fail(h, ERR_AUTH_EXPIRED, "the token has expired");
    else if (rc < 0)
        http_rest_fail(h, ERR_AUTH, "invalid token: %s", err.msg);
    return rc == 0;
}

/* A query flag as api_query_bool reads it. */
bool
http_arg_bool(const http_req_t *h, const char *name, bool def)
{
    file_req_query_t q = http_rest_query(h);
    return file_req_bool(&q, name, def);
}

static const char *
query_get(const void *src, const char *name)
{
    return http_arg(src, name);
}

file_req_query_t
http_rest_query(const http_req_t *h)
{
    return (file_req_query_t){query_get, h};
}

/* The body as api/http.c's api_body_object reads it; NULL when it answered. */
json_object *
http_rest_body(http_req_t *h)
{
    if (h->body_too_big || h->body_len > HTTP_JSON_BODY_MAX) {
        http_rest_fail(h, ERR_TOO_BIG, "request body over %u bytes", (unsigned)HTTP_JSON_BODY_MAX);
        return NULL;
    }
    if (!h->body_len) {
        http_rest_fail(h, ERR_BAD_REQ, "a JSON object body is required");
        return NULL;
    }
    err_t err = {0};
    json_object *o = json_parse(h->body, h->body_len, &err);
    if (!o) {
        http_rest_fail(h, ERR_BAD_REQ, "%s%s",
                       err.code == EILSEQ ? "the body is " : "malformed JSON: ", err.msg);
        return NULL;
    }
    if (!json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        http_rest_fail(h, ERR_BAD_REQ, "the body must be a JSON object");
        return NULL;
    }
    return o;
}
