/* errors.c — the API's errors: the one table from code to HTTP status, and the error bodies of
 * its three APIs. See errors.h. */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_util.h"

/* Every code the API replies with. action_server: the OpenHands action server's status when it
 * differs (0: the same); the Remote Runtime API answers with REST's. from_gateway: a gateway
 * sends this code's name (api_err_from_gateway maps names back through these rows only, so a
 * gateway's "unauthorized", a role refused after the API verified the token, is ERR_AUTH_ROLE). */
static const struct {
    int code;
    int status;
    int action_server;
    bool from_gateway;
} table[] = {
    {ERR_BAD_REQ, 400, 0, true},
    {ERR_PROTO, 400, 0, true},
    {EINVAL, 400, 0, true},
    {EISDIR, 400, 0, true},
    {ENOTDIR, 400, 0, true},
    {ERR_AUTH, 401, 0, false},
    {ERR_AUTH_EXPIRED, 401, 0, true},
    {ERR_AUTH_ROLE, 403, 0, true},
    {ERR_FORBIDDEN, 403, 0, true},
    {ERR_ESCAPE, 403, 0, true},
    {EACCES, 403, 0, true},
    {ERR_NOT_FOUND, 404, 0, true},
    {ERR_METHOD, 405, 0, false},
    {ERR_BUSY, 409, 0, true},
    {EEXIST, 409, 0, true},
    {ENOTEMPTY, 409, 0, true},
    {ERR_SESSION_ENDED, 409, 0, true},
    {ERR_CONFLICT, 409, 0, false},
    {ERR_FAILED, 409, 0, false},
    {ERR_TOO_BIG, 413, 0, true},
    {ERR_AT_CAPACITY, 429, 0, false},
    {ERR_INTERNAL, 500, 0, true},
    {ERR_ABORTED, 500, 0, false},
    {ENOTSUP, 501, 0, true},
    {ERR_NOT_IMPLEMENTED, 501, 0, false},
    /* OpenHands' client reads a 502 as "runtime disconnected" */
    {ERR_GATEWAY_DOWN, 503, 502, false},
    {ERR_NO_GATEWAY, 503, 0, false},
    {ERR_UNAVAILABLE, 503, 0, false},
    {ERR_TIMEOUT, 504, 0, false},
    {ENOSPC, 507, 0, true},
};
#define TABLE_LEN (sizeof table / sizeof table[0])

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
    return api_err_set(e, ERR_UNAVAILABLE, "Redis is not reachable");
}

int
api_err_from_gateway(api_err_t *e, json_object *error)
{
    const char *name = json_get_str(error, "code", "internal");
    int code = ERR_INTERNAL;
    for (size_t i = 0; i < TABLE_LEN; i++)
        if (table[i].from_gateway && !strcmp(err_name(table[i].code), name)) {
            code = table[i].code;
            break;
        }
    return api_err_set(e, code, "%s", json_get_str(error, "message", "the gateway failed"));
}

/* The row of code: its own, else the first with its name (ENOENT is ERR_NOT_FOUND's). */
static int
row(int code)
{
    if (code < 0)
        code = -code;
    for (size_t i = 0; i < TABLE_LEN; i++)
        if (table[i].code == code)
            return (int)i;
    const char *name = err_name(code);
    for (size_t i = 0; i < TABLE_LEN; i++)
        if (!strcmp(err_name(table[i].code), name))
            return (int)i;
    return -1;
}

int
api_err_status(api_flavour_t f, int code)
{
    int i = row(code);
    if (i < 0)
        return 500;
    if (f == API_OH_ACTION_SERVER && table[i].action_server)
        return table[i].action_server;
    return table[i].status;
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
