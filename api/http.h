/* http.h — one FastCGI request as the API sees it, and the replies it can get.
 *
 * api_req_read parses method, raw path (from REQUEST_URI, so %2F in a segment stays a segment
 * character), query and the announced body length out of an accepted FCGX_Request. The body is
 * read later, by the route: whole (api_req_body, limited; what most routes get before their
 * handler runs) or streamed in pieces (api_body_read, for uploads of any size).
 * Strings in api_req_t point into FastCGI's environment or into the request's own buffers,
 * valid until api_req_free. Error replies are errors.h's: their body's shape is the flavour of
 * the API the request is answered as. */
#ifndef SP_API_HTTP_H
#define SP_API_HTTP_H

#include <fcgiapp.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "jwt.h"

#define API_JSON_BODY_MAX (1024u * 1024) /* JSON bodies: actions, sessions, tokens */

typedef struct redisContext redisContext;

/* The API a request is answered as, which shapes its error bodies (errors.h). */
typedef enum {
    API_REST = 0,         /* /api/v1/, /metrics: {"error": {"code", "message"}} */
    API_OH_ACTION_SERVER, /* /runtime/{id}/ (what nginx could not route to a gateway): FastAPI's
                             {"detail": message} */
    API_OH_RUNTIME_API, /* /openhands/ (runtime_api.c): {"detail", "error": {"code", "message"}} */
    API_E2B,            /* /e2b/ (api/e2b/): E2B's {"code": HTTP status, "message"} */
} api_flavour_t;

typedef struct {
    FCGX_Request *fcgi;
    const char *method; /* "GET", "POST", ... */
    char *path;         /* raw path, without the query */
    const char *query;  /* raw query string, "" when none */
    char *body;         /* NUL-terminated copy of the body (may hold NULs), NULL when none */
    size_t body_len;
    bool body_too_big;             /* the body is over the limit: not read (or not all of it) */
    long long content_len;         /* CONTENT_LENGTH, -1 when not announced (chunked, streamed) */
    unsigned long long body_taken; /* bytes read from FastCGI's stdin so far */
    bool body_end;                 /* the whole body was read */
    bool body_broken;              /* the body ended early: the client went away */
    bool authed;                   /* claims hold a verified token */
    jwt_claims_t claims;
    redisContext *rc;      /* the worker's connection (borrowed), NULL until api_redis_get */
    int status;            /* the status replied, 0 before the reply */
    api_flavour_t flavour; /* the route's (routes.c), API_REST until routed */
} api_req_t;

/* Fills r from an accepted request; reads no body. */
void api_req_read(api_req_t *r, FCGX_Request *fcgi);
/* Reads the whole body into r->body / r->body_len when it is at most max bytes; else sets
 * r->body_too_big and reads nothing more. Returns 0, or -1 when too big or broken. */
int api_req_body(api_req_t *r, size_t max);
/* Streams the body: fills buf[0..cap) as far as the body goes. Returns > 0 bytes (cap unless
 * the body ends), 0 at its end, -1 when it broke off (client gone, shorter than announced). */
long api_body_read(api_req_t *r, char *buf, size_t cap);
void api_req_free(api_req_t *r);

/* A request header by its CGI name ("HTTP_X_SESSION_API_KEY", "CONTENT_TYPE"), or NULL. */
const char *api_param(const api_req_t *r, const char *cgi_name);

/* Query parameter name, percent-decoded (and '+' as space) into out[0..cap). Returns the
 * length, -1 when absent, -2 when it does not fit or is malformed. */
int api_query(const api_req_t *r, const char *name, char *out, size_t cap);
/* Query integer in [lo, hi]: def when absent; -1 and a bad_request reply when malformed or out
 * of range (then *ok is false). */
long long api_query_int(api_req_t *r, const char *name, long long def, long long lo, long long hi,
                        bool *ok);
/* Query boolean ("true"/"1"/"false"/"0"); def when absent. */
bool api_query_bool(const api_req_t *r, const char *name, bool def);

/* The body parsed as a JSON object; on failure replies bad_request/too_large and returns NULL.
 * New reference. */
json_object *api_body_object(api_req_t *r);

/* Replies. Each sends status, headers and body; a second reply on one request is ignored. */
void api_reply_raw(api_req_t *r, int status, const char *content_type, const char *body,
                   size_t len);
void api_reply_json(api_req_t *r, int status, json_object *body); /* takes ownership */
/* The same with more header lines (each "Name: value\r\n"; NULL: none). */
void api_reply_raw_with(api_req_t *r, int status, const char *content_type, const char *headers,
                        const char *body, size_t len);
void api_reply_json_with(api_req_t *r, int status, const char *headers, json_object *body);

const char *api_status_text(int status);

#endif
