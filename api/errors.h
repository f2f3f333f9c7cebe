/* errors.h — the API's one error path. A failure is an api_err_t (a code from common/err.h and
 * a message); one table (common/err_http.c) gives each code its HTTP status, and the reply's body
 * has the shape of the API the request is answered as (r->flavour): REST {"error": {"code": name,
 * "message": message}} OpenHands action server      {"detail": message} (FastAPI's) OpenHands
 * Remote Runtime API {"detail": message, "error": {"code": name, "message": message}} E2B's
 * control API {"code": HTTP status, "message": message}; name is err_name(code). Functions that
 * fail without replying return -code and fill an api_err_t (crun's style); the handler, or a helper
 * documented as replying, sends it once. */
#ifndef SP_API_ERRORS_H
#define SP_API_ERRORS_H

#include <json-c/json.h>
#include <stdbool.h>

#include "err.h"
#include "http.h"

/* Room for the longest message a reply carries (a file name or path with its context, a
 * gateway's message with what failed). err_t's 256 bytes are the executor's and gateway's own
 * limit; a REST body's message stays cut at API_ERR_REST_MSG_MAX - 1 bytes, as it always was. */
#define API_ERR_MSG_MAX      1024
#define API_ERR_REST_MSG_MAX 512

typedef struct {
    int code; /* errno value or ERR_* (positive) */
    char msg[API_ERR_MSG_MAX];
} api_err_t;

/* Sets e (if not NULL) and returns -code, as err_set. */
int api_err_set(api_err_t *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* e's message "Redis is not reachable" (or that Redis refused the API's credentials:
 * api_redis_unavailable_why) with code ERR_UNAVAILABLE; returns -ERR_UNAVAILABLE. */
int api_err_redis(api_err_t *e);
/* A gateway's error object {"code": name, "message"} (borrowed, may be NULL) as e: the code
 * whose name it is among those a gateway sends (ERR_INTERNAL for a name it never sends), the
 * message ("the gateway failed" when none). Returns -e->code. */
int api_err_from_gateway(api_err_t *e, json_object *error);

/* The HTTP status of code in flavour f (500 for a code the table does not know). */
int api_err_status(api_flavour_t f, int code);
/* The error body of e in flavour f (new ref). */
json_object *api_err_body(api_flavour_t f, const api_err_t *e);

/* Replies e as flavour f (its status and body). */
void api_reply_error(api_req_t *r, api_flavour_t f, const api_err_t *e);
/* Replies e as r's API. */
void api_fail(api_req_t *r, const api_err_t *e);
/* api_err_set then api_fail. */
void api_failf(api_req_t *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* api_fail with a message of any length: the action server's detail carries it whole (upstream's
 * exception texts quote the request, which has no bound); the other bodies cut it as usual. */
void api_fail_text(api_req_t *r, int code, const char *text);

#endif
