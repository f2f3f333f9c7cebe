/* files.c — /api/v1/sessions/{id}/files… when nginx could not send them to the session's own
 * gateway, which serves them (gateway/http_relay.c, http_upload.c, http_files.c; docs/api.md,
 * "nginx"). What reaches the API is the error path: a session that does not exist or is not the
 * caller's, a stopped one, one whose gateway is gone, Redis down. The request is checked first as
 * the gateway checks it (common/file_req.c, so a malformed one gets the same 400), then the
 * session; one found live after all (its state changed since nginx's lookup) is told to try
 * again. No body is read past a JSON one (an upload's bytes are never taken). */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "auth.h"
#include "file_req.h"
#include "json_util.h"
#include "session_record.h"

/* The request's query for file_req.h: decoded values in rotating buffers (a builder holds a
 * few at once). */
typedef struct {
    char val[6][FILE_REQ_PATH_MAX + 8];
    int next;
} query_vals_t;

typedef struct {
    api_req_t *r;
    query_vals_t *vals;
} query_src_t;

static const char *
query_get(const void *src, const char *name)
{
    const query_src_t *q = src;
    char *out = q->vals->val[q->vals->next++ % 6];
    int k = api_query(q->r, name, out, sizeof q->vals->val[0]);
    if (k == -1)
        return NULL;
    if (k < 0)
        out[0] = '\0'; /* malformed: refused as an empty value is */
    return out;
}

/* The session's refusal (404, 403, 409, 503), or try again. */
static void
unrouted(api_req_t *r, const char *sid, bool write)
{
    api_err_t e;
    char gw[128];
    json_object *s = write ? api_session_for_write(r, sid, &e) : api_session_load(r, sid, &e);
    if (s && api_session_live(r, s, gw, sizeof gw, &e) == 0)
        api_err_set(&e, ERR_UNAVAILABLE,
                    "the session's gateway %.100s serves this route; it changed hands or state "
                    "as the request came: try again",
                    gw);
    json_object_put(s);
    api_fail(r, &e);
}

static void
by_query(api_req_t *r, char **params, bool write,
         json_object *(*build)(const file_req_query_t *q, err_t *err))
{
    static query_vals_t vals; /* one request at a time per worker */
    query_src_t src = {r, &vals};
    file_req_query_t q = {query_get, &src};
    err_t err = {0};
    json_object *op = build(&q, &err);
    if (!op) {
        api_failf(r, err.code, "%s", err.msg);
        return;
    }
    json_object_put(op);
    unrouted(r, params[0], write);
}

static void
by_body(api_req_t *r, char **params, json_object *(*build)(json_object *body, err_t *err))
{
    json_object *body = api_body_object(r);
    if (!body)
        return;
    err_t err = {0};
    json_object *op = build(body, &err);
    json_object_put(body);
    if (!op) {
        api_failf(r, err.code, "%s", err.msg);
        return;
    }
    json_object_put(op);
    unrouted(r, params[0], true);
}

void
api_files_list(api_req_t *r, char **params)
{
    by_query(r, params, false, file_req_list);
}

void
api_files_stat(api_req_t *r, char **params)
{
    by_query(r, params, false, file_req_stat);
}

void
api_files_read(api_req_t *r, char **params)
{
    by_query(r, params, false, file_req_read);
}

void
api_files_download(api_req_t *r, char **params)
{
    by_query(r, params, false, file_req_download);
}

void
api_files_remove(api_req_t *r, char **params)
{
    by_query(r, params, true, file_req_remove);
}

void
api_files_write(api_req_t *r, char **params)
{
    by_body(r, params, file_req_write);
}

void
api_files_mkdir(api_req_t *r, char **params)
{
    by_body(r, params, file_req_mkdir);
}

void
api_files_move(api_req_t *r, char **params)
{
    by_body(r, params, file_req_move);
}

/* PUT: the body stays unread (nginx does not hold it: fastcgi_request_buffering off); a length
 * over the limit is refused first, as the gateway does. */
void
api_files_put(api_req_t *r, char **params)
{
    static query_vals_t vals;
    query_src_t src = {r, &vals};
    file_req_query_t q = {query_get, &src};
    err_t err = {0};
    bool append = false;
    json_object *op = file_req_upload(&q, g_api.upload_max, &append, &err);
    if (!op) {
        api_failf(r, err.code, "%s", err.msg);
        return;
    }
    long long max = append ? FILE_REQ_WRITE_MAX : json_get_int(op, "max_bytes", 0);
    json_object_put(op);
    if (r->content_len > max) {
        if (append)
            api_failf(r, ERR_TOO_BIG, "append bodies are limited to %u bytes",
                      (unsigned)FILE_REQ_WRITE_MAX);
        else
            api_failf(r, ERR_TOO_BIG, "the file is over %lld bytes", max);
        return;
    }
    unrouted(r, params[0], true);
}
