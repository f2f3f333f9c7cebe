/* routes.c — the REST API's route table and the per-request pipeline: route match (method
 * + path pattern with {captures}), body (read whole up to --max-body, or left to a streaming
 * handler), authentication, handler, metrics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "auth.h"
#include "redis.h"

#define MAX_PARAMS 4
#define PARAM_MAX  256

/* A route's flags: one AUTH_ value, plus BODY_STREAM for handlers that read the body
 * themselves with api_body_read (uploads of any size). Other handlers get it whole in r->body. */
enum { AUTH_NONE = 0, AUTH_ANY = 1, AUTH_ADMIN = 2, AUTH_MASK = 3, BODY_STREAM = 4 };

typedef struct {
    const char *method;
    const char *pattern;
    api_handler_fn fn;
    int flags;
} route_t;

static const route_t routes[] = {
    {"GET", "/api/v1/health", api_health, AUTH_NONE},
    {"GET", "/api/v1/pool", api_pool, AUTH_ANY},
    {"GET", "/metrics", api_metrics, AUTH_ADMIN},
    {"POST", "/api/v1/tokens", api_tokens_create, AUTH_ADMIN},
    {"POST", "/api/v1/sessions", api_sessions_create, AUTH_ANY},
    {"GET", "/api/v1/sessions", api_sessions_list, AUTH_ANY},
    {"GET", "/api/v1/sessions/{}", api_sessions_get, AUTH_ANY},
    {"DELETE", "/api/v1/sessions/{}", api_sessions_delete, AUTH_ANY},
    {"POST", "/api/v1/sessions/{}/pause", api_sessions_pause, AUTH_ANY},
    {"POST", "/api/v1/sessions/{}/resume", api_sessions_resume, AUTH_ANY},
    {"POST", "/api/v1/sessions/{}/actions", api_actions_submit, AUTH_ANY},
    {"POST", "/api/v1/sessions/{}/signal", api_signal_send, AUTH_ANY},
    {"GET", "/api/v1/sessions/{}/events", api_events_list, AUTH_ANY},
    {"GET", "/api/v1/sessions/{}/files", api_files_list, AUTH_ANY},
    {"GET", "/api/v1/sessions/{}/files/stat", api_files_stat, AUTH_ANY},
    {"GET", "/api/v1/sessions/{}/files/content", api_files_read, AUTH_ANY},
    {"PUT", "/api/v1/sessions/{}/files/content", api_files_put, AUTH_ANY | BODY_STREAM},
    {"GET", "/api/v1/sessions/{}/files/download", api_files_download, AUTH_ANY},
    {"POST", "/api/v1/sessions/{}/files/content", api_files_write, AUTH_ANY},
    /* OpenHands action-execution server: own auth (X-Session-API-Key), own error bodies. */
    {"GET", "/runtime/{}/alive", api_rt_alive, AUTH_NONE},
    {"GET", "/runtime/{}/server_info", api_rt_server_info, AUTH_NONE},
    {"POST", "/runtime/{}/execute_action", api_rt_execute_action, AUTH_NONE},
    {"POST", "/runtime/{}/list_files", api_rt_list_files, AUTH_NONE},
    {"GET", "/runtime/{}/vscode/connection_token", api_rt_vscode_token, AUTH_NONE},
    {"POST", "/runtime/{}/upload_file", api_rt_upload_file, AUTH_NONE | BODY_STREAM},
    {"GET", "/runtime/{}/download_files", api_rt_download_files, AUTH_NONE},
    {"GET", "/runtime/{}/health", api_oh_health, AUTH_NONE},
    {"GET", "/runtime/{}/ready", api_oh_ready, AUTH_NONE},
    /* OpenHands Runtime API (provisioning): own auth (X-API-Key), errors with "detail". */
    {"POST", "/openhands/start", api_oh_start, AUTH_NONE},
    {"GET", "/openhands/sessions/batch", api_oh_batch, AUTH_NONE},
    {"GET", "/openhands/sessions/{}", api_oh_sessions_get, AUTH_NONE},
    {"GET", "/openhands/runtime/{}", api_oh_runtime_get, AUTH_NONE},
    {"POST", "/openhands/pause", api_oh_pause, AUTH_NONE},
    {"POST", "/openhands/resume", api_oh_resume, AUTH_NONE},
    {"POST", "/openhands/stop", api_oh_stop, AUTH_NONE},
    {"GET", "/openhands/list", api_oh_list, AUTH_NONE},
    {"GET", "/openhands/registry_prefix", api_oh_registry_prefix, AUTH_NONE},
    {"GET", "/openhands/image_exists", api_oh_image_exists, AUTH_NONE},
    {"POST", "/openhands/build", api_oh_build, AUTH_NONE | BODY_STREAM}, /* 501, unread */
    {"GET", "/openhands/build_status", api_oh_build_status, AUTH_NONE},
};

/* Matches path against pattern; captures go to params (decoded). Returns 1 on a match, 0 on
 * none, -1 when a captured segment is malformed (bad escape, too long). */
static int
match(const char *pattern, const char *path, char params[MAX_PARAMS][PARAM_MAX], int *nparams)
{
    *nparams = 0;
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (*p != '/' || *s != '/')
            return 0;
        p++;
        s++;
        const char *pe = strchrnul(p, '/'), *se = strchrnul(s, '/');
        size_t plen = (size_t)(pe - p), slen = (size_t)(se - s);
        if (plen == 2 && !strncmp(p, "{}", 2)) {
            if (slen == 0)
                return 0;
            if (*nparams >= MAX_PARAMS || api_pct_decode(s, slen, params[*nparams], PARAM_MAX) < 0)
                return -1;
            if (strchr(params[*nparams], '/'))
                return -1;
            (*nparams)++;
        } else if (plen != slen || strncmp(p, s, plen) != 0) {
            return 0;
        }
        p = pe;
        s = se;
    }
    /* A single trailing slash on the path is tolerated. */
    return !*p && (!*s || !strcmp(s, "/"));
}

static void
not_found(api_req_t *r, bool runtime)
{
    if (runtime)
        api_detail(r, 404, "Not Found");
    else
        api_error(r, 404, "not_found", "no route for %s %.200s", r->method, r->path);
}

static void
dispatch(api_req_t *r)
{
    bool runtime = !strncmp(r->path, "/runtime/", 9);
    char params[MAX_PARAMS][PARAM_MAX];
    char *pp[MAX_PARAMS];
    bool path_matched = false, bad_segment = false;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        int n;
        int m = match(routes[i].pattern, r->path, params, &n);
        if (m < 0) {
            bad_segment = true;
            continue;
        }
        if (!m)
            continue;
        path_matched = true;
        if (strcmp(routes[i].method, r->method) != 0)
            continue;
        int auth = routes[i].flags & AUTH_MASK;
        if (!(routes[i].flags & BODY_STREAM) && api_req_body(r, g_api.body_max) < 0) {
            if (r->body_broken)
                api_error(r, 400, "bad_request", "the request body was cut short");
            else if (runtime)
                api_detail(r, 413, "Request body too large");
            else
                api_error(r, 413, "too_large", "request body over %zu bytes", g_api.body_max);
            return;
        }
        if (auth != AUTH_NONE && api_auth_bearer(r) < 0)
            return;
        if (auth == AUTH_ADMIN && !api_is_admin(r)) {
            api_error(r, 403, "forbidden", "this route needs an admin token");
            return;
        }
        for (int k = 0; k < n; k++)
            pp[k] = params[k];
        routes[i].fn(r, pp);
        return;
    }
    if (path_matched) {
        if (runtime)
            api_detail(r, 405, "Method Not Allowed");
        else
            api_error(r, 405, "method_not_allowed", "%s is not allowed on %.200s", r->method,
                      r->path);
    } else if (bad_segment && !runtime) {
        api_error(r, 400, "bad_request", "malformed path segment");
    } else {
        not_found(r, runtime);
    }
}

void
api_handle(api_req_t *r)
{
    api_oh_path_form(r); /* /rt-…/x (a runtime's own URL) is /runtime/rt-…/x */
    dispatch(r);
    if (!r->status)
        api_error(r, 500, "internal", "the handler sent no reply");
    char field[32];
    snprintf(field, sizeof field, "http_%dxx", r->status / 100);
    api_metric_incr(r, field, 1);
    if (r->status >= 500)
        api_metric_incr(r, "errors", 1);
    api_redis_end_request(r);
}
