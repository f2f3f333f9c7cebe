/* http_rt.c — the action server routes' shared checks and answers (http_rt.h). */
#include "http_rt.h"

#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err_http.h"
#include "gw.h"
#include "http_rest.h"
#include "json_util.h"
#include "jwt_cache.h"

void
http_rt_fail(http_req_t *h, int code, const char *detail)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "detail", detail);
    http_answer_json(h, err_http_status(code, true), o);
}

void
http_rt_failf(http_req_t *h, int code, const char *fmt, ...)
{
    char d[HTTP_REST_MSG_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d, sizeof d, fmt, ap);
    va_end(ap);
    http_rt_fail(h, code, d);
}

void
http_rt_invalid(http_req_t *h, const char *type, const char *where, const char *field,
                const char *msg)
{
    json_object *o = json_object_new_object(), *errs = json_object_new_array(),
                *e = json_object_new_object(), *loc = json_object_new_array();
    json_object_array_add(loc, json_object_new_string(where));
    if (field)
        json_object_array_add(loc, json_object_new_string(field));
    json_set_str(e, "type", type);
    json_set(e, "loc", loc);
    json_set_str(e, "msg", msg);
    json_object_array_add(errs, e);
    json_set_str(o, "detail", "Invalid request parameters");
    json_set(o, "errors", errs);
    http_answer_json(h, 422, o);
}

bool
http_rt_live(http_req_t *h, const route_t *r)
{
    if (!r) {
        http_rt_fail(h, ERR_UNAVAILABLE, "Service Unavailable: Redis is not reachable");
        return false;
    }
    if (r->starting) {
        http_rt_fail(h, ERR_UNAVAILABLE, "Runtime is starting");
        return false;
    }
    if (!r->found || !strcmp(r->status, "STOPPED")) {
        http_rt_fail(h, ERR_NOT_FOUND, "Not Found");
        return false;
    }
    if (!strcmp(r->status, "PAUSED")) {
        http_rt_fail(h, ERR_UNAVAILABLE, "Runtime is paused");
        return false;
    }
    if (!strncmp(r->status, "ERROR", 5)) {
        http_rt_fail(h, ERR_GATEWAY_DOWN, "Runtime disconnected");
        return false;
    }
    return true;
}

gw_session_t *
http_rt_here(http_req_t *h, const route_t *r)
{
    gw_session_t *s = session_find(r->sid);
    if (!s)
        http_rt_fail(h, ERR_GATEWAY_DOWN,
                     r->gw_alive ? "Runtime disconnected: its gateway is not this one"
                                 : "Runtime disconnected: its gateway is not running");
    return s;
}

bool
http_rt_authed(http_req_t *h, const route_t *r, bool write, jwt_claims_t *c)
{
    memset(c, 0, sizeof *c);
    bool ok = false;
    size_t kl = strlen(r->rt_key);
    if (kl && strlen(h->api_key) == kl && CRYPTO_memcmp(h->api_key, r->rt_key, kl) == 0) {
        snprintf(c->sub, sizeof c->sub, "%s", r->rt_owner);
        snprintf(c->role, sizeof c->role, "user");
        ok = true;
    } else if (h->api_key[0]) {
        err_t err = {0};
        ok = jwt_cache_verify(h->api_key, (int64_t)gw_wall(), c, &err) == 0 &&
             (write ? http_may_write(c, r) : http_may_see(c, r));
    }
    if (!ok)
        http_rt_fail(h, ERR_FORBIDDEN, "Invalid API Key");
    return ok;
}

int
http_rt_join(char *out, size_t cap, const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    const char *sep = !dl || dir[dl - 1] == '/' || !*name ? "" : "/";
    int n = snprintf(out, cap, "%s%s%s", dir, sep, name);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}
