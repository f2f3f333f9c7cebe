/* action_server.h — helpers shared by the OpenHands routes (action_server.c, and the file
 * routes: action_server_upload.c upload_file, action_server_download.c download_files). Header
 * only, internal to those. */
#ifndef SP_API_RUNTIME_FILES_H
#define SP_API_RUNTIME_FILES_H

#include <stdio.h>
#include <string.h>

#include "api.h"
#include "gateway_client.h"
#include "redis.h"
#include "json_util.h"

#define RT_PATH_MAX 4096

/* {"detail":"Invalid request parameters","errors":[{type, loc:[where, field], msg}]}, as
 * FastAPI's validation errors (every /runtime route uses it; field may be NULL). */
static inline void
rt_invalid(api_req_t *r, const char *type, const char *where, const char *field, const char *msg)
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
    api_reply_json(r, 422, o);
}

/* dir + "/" + name into out ("" dir: name alone). 0, or -1 when it does not fit. */
static inline int
rt_join(char *out, size_t cap, const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    const char *sep = !dl || dir[dl - 1] == '/' || !*name ? "" : "/";
    int n = snprintf(out, cap, "%s%s%s", dir, sep, name);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* A failed gateway call (e, as api_gw_call's) as upstream reports an exception: 500 with the
 * gateway's message; 504/503 "Runtime did not answer" when it did not answer. */
static inline void
rt_gw_failure(api_req_t *r, const api_err_t *e)
{
    if (api_gw_refused(e))
        api_failf(r, ERR_INTERNAL, "%s", e->msg);
    else
        api_failf(r, e->code == ERR_TIMEOUT ? ERR_TIMEOUT : ERR_UNAVAILABLE,
                  "Runtime did not answer");
}

/* op (taken) to session sid's executor through its gateway: the result (new ref), or NULL with
 * e (as api_gw_call). */
static inline json_object *
rt_call(api_req_t *r, const char *gw, const char *sid, json_object *op, api_err_t *e)
{
    json_set_str(op, "session", sid);
    json_object *res = api_gw_ask(r, gw, op, g_api.gw_timeout, e);
    json_object_put(op);
    return res;
}

#endif
