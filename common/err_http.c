/* err_http.c — error codes to HTTP statuses (err_http.h). */
#include "err_http.h"

#include <string.h>

#include "err.h"

/* Every code the HTTP APIs reply with. action_server: the OpenHands action server's status when it
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
err_http_status(int code, bool action_server)
{
    int i = row(code);
    if (i < 0)
        return 500;
    if (action_server && table[i].action_server)
        return table[i].action_server;
    return table[i].status;
}

int
err_from_gateway_name(const char *name)
{
    for (size_t i = 0; name && i < TABLE_LEN; i++)
        if (table[i].from_gateway && !strcmp(err_name(table[i].code), name))
            return table[i].code;
    return ERR_INTERNAL;
}
