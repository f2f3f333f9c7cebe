/* errors.c — the API's errors: their HTTP status (common/err_http.c's table) and the error
 * bodies of its three APIs. See errors.h. */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err_http.h"
#include "json_util.h"
#include "redis.h"

static int __attribute__((format(printf, 3, 0)))
err_vset(api_err_t *e, int code, const char *fmt, va_list ap)
{
    if (code < 0)
        code = -code;
    if (e) {
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    }
    return -code;
}

int
api_err_set(api_err_t *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = err_vset(e, code, fmt, ap);
    va_end(ap);
    return rc;
}

int
api_err_redis(api_err_t *e)
{
    return api_err_set(e, ERR_UNAVAILABLE, "%s", api_redis_unavailable_why());
}

int
api_err_from_gateway(api_err_t *e, json_object *error)
{
    int code = err_from_gateway_name(json_get_str(error, "code", "internal"));
    return api_err_set(e, code, "%s", json_get_str(error, "message", "the gateway failed"));
}

int
api_err_status(api_flavour_t f, int code)
{
    return err_http_status(code, f == API_OH_ACTION_SERVER);
}

static json_object *
body(api_flavour_t f, int code, const char *text)
{
    json_object *o = json_object_new_object();
    if (f == API_OH_ACTION_SERVER) {
        json_set_str(o, "detail", text);
        return o;
    }
    char msg[API_ERR_REST_MSG_MAX];
    size_t n = strnlen(text, sizeof msg - 1);
    memcpy(msg, text, n);
    msg[n] = '\0';
    if (f == API_E2B) { /* the SDK reads "code" (the status) for its not-found cases */
        json_set_int(o, "code", api_err_status(f, code));
        json_set_str(o, "message", msg);
        return o;
    }
    if (f == API_OH_RUNTIME_API)
        json_set_str(o, "detail", msg);
    json_object *err = json_object_new_object();
    json_set_str(err, "code", err_name(code));
    json_set_str(err, "message", msg);
    json_set(o, "error", err);
    return o;
}

json_object *
api_err_body(api_flavour_t f, const api_err_t *e)
{
    return body(f, e->code, e->msg);
}

void
api_reply_error(api_req_t *r, api_flavour_t f, const api_err_t *e)
{
    api_reply_json(r, api_err_status(f, e->code), api_err_body(f, e));
}

void
api_fail(api_req_t *r, const api_err_t *e)
{
    api_reply_error(r, r->flavour, e);
}

void
api_failf(api_req_t *r, int code, const char *fmt, ...)
{
    api_err_t e;
    va_list ap;
    va_start(ap, fmt);
    err_vset(&e, code, fmt, ap);
    va_end(ap);
    api_fail(r, &e);
}

void
api_fail_text(api_req_t *r, int code, const char *text)
{
    if (code < 0)
        code = -code;
    api_reply_json(r, api_err_status(r->flavour, code), body(r->flavour, code, text));
}
