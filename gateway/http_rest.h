/* http_rest.h — what the gateway's REST routes share with sandpipe-api's (api/auth.c, api/http.c,
 * api/errors.c: the reference for every text): the error body, the bearer token, who may see or
 * change a session, query flags. */
#ifndef SP_HTTP_REST_H
#define SP_HTTP_REST_H

#include <json-c/json.h>
#include <stdbool.h>

#include "file_req.h"
#include "http_server.h"
#include "jwt.h"
#include "ops.h"
#include "route.h"
#include "session.h"

#define HTTP_REST_MSG_MAX  512            /* API_ERR_REST_MSG_MAX */
#define HTTP_JSON_BODY_MAX (1024u * 1024) /* API_JSON_BODY_MAX */

/* {"error":{"code":err_name(code),"message":...}} with code's REST status. */
void http_rest_fail(http_req_t *h, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Authorization: Bearer into c; false when it answered 401. */
bool http_rest_auth(http_req_t *h, jwt_claims_t *c);
/* The API's rules: admin all, user its own, viewer sees its one session and changes nothing. */
bool http_may_see(const jwt_claims_t *c, const route_t *r);
bool http_may_write(const jwt_claims_t *c, const route_t *r);
/* The body as api/http.c's api_body_object reads it (a JSON object, new ref); NULL when it
 * answered 400/413. */
json_object *http_rest_body(http_req_t *h);
/* A query flag as api_query_bool reads it ("", true, 1, yes / false, 0, no; def otherwise). */
bool http_arg_bool(const http_req_t *h, const char *name, bool def);

/* The session r names when it lives on this gateway and c may use it (write: change it), as
 * the API decides: NULL when it answered h (503 Redis, 404 unknown or not c's, 403 read-only,
 * 410 stopped, 503 its gateway down or elsewhere). id names it in the 404's text. */
gw_session_t *http_rest_session(http_req_t *h, const route_t *r, const jwt_claims_t *c,
                                const char *id, bool write);
/* The executor's or an op's error object ({"code","message"}) as h's REST error; what is the
 * message when it has none. */
void http_rest_fail_with(http_req_t *h, json_object *error, const char *what);

/* The ops_t of an HTTP transport for what its routes never dispatch (a bug, answered as one). */
extern const ops_t http_unknown_op;

/* h's query for file_req.h (borrowed from h). */
file_req_query_t http_rest_query(const http_req_t *h);

#endif
