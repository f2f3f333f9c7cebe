/* routes.c — the API's route table (routes.h) and the per-request pipeline: route match
 * (method + path pattern with {captures}), body (read whole up to --max-body, or left to a
 * streaming handler), authentication, handler, metrics. */
#include "routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "auth.h"
#include "e2b/e2b.h"
#include "pct_decode.h"
#include "redis.h"

#define NONE   API_ROUTE_AUTH_NONE
#define ANY    API_ROUTE_AUTH_ANY
#define ADMIN  API_ROUTE_AUTH_ADMIN
#define STREAM API_ROUTE_BODY_STREAM

static const api_route_t routes[] = {
    {"GET", "/api/v1/health", api_health, NONE, API_REST},
    {"GET", "/api/v1/pool", api_pool, ANY, API_REST},
    {"GET", "/metrics", api_metrics, ADMIN, API_REST},
    {"GET", "/api/v1/metrics/history", api_metrics_history, ADMIN, API_REST},
    {"POST", "/api/v1/tokens", api_tokens_create, ADMIN, API_REST},
    {"POST", "/api/v1/sessions", api_sessions_create, ANY, API_REST},
    {"GET", "/api/v1/sessions", api_sessions_list, ANY, API_REST},
    {"GET", "/api/v1/sessions/{}", api_sessions_get, ANY, API_REST},
    {"DELETE", "/api/v1/sessions/{}", api_sessions_delete, ANY, API_REST},
    {"POST", "/api/v1/sessions/{}/pause", api_sessions_pause, ANY, API_REST},
    {"POST", "/api/v1/sessions/{}/resume", api_sessions_resume, ANY, API_REST},
    {"POST", "/api/v1/sessions/{}/actions", api_actions_submit, ANY, API_REST},
    {"POST", "/api/v1/sessions/{}/signal", api_signal_send, ANY, API_REST},
    {"GET", "/api/v1/sessions/{}/events", api_events_list, ANY, API_REST},
    {"GET", "/api/v1/sessions/{}/files", api_files_list, ANY, API_REST},
    {"GET", "/api/v1/sessions/{}/files/stat", api_files_stat, ANY, API_REST},
    {"GET", "/api/v1/sessions/{}/files/content", api_files_read, ANY, API_REST},
    {"PUT", "/api/v1/sessions/{}/files/content", api_files_put, ANY | STREAM, API_REST},
    {"GET", "/api/v1/sessions/{}/files/download", api_files_download, ANY, API_REST},
    {"POST", "/api/v1/sessions/{}/files/content", api_files_write, ANY, API_REST},
    {"DELETE", "/api/v1/sessions/{}/files", api_files_remove, ANY, API_REST},
    {"POST", "/api/v1/sessions/{}/files/mkdir", api_files_mkdir, ANY, API_REST},
    {"POST", "/api/v1/sessions/{}/files/move", api_files_move, ANY, API_REST},
    /* (the OpenHands action server, /runtime/{id}/… and /rt-…/…, is served by the session's own
     * gateway behind nginx: gateway/http_rt.h; a /runtime/ path that comes here is unknown) */
    /* OpenHands Runtime API (provisioning): own auth (X-API-Key), errors with "detail". */
    {"POST", "/openhands/start", api_oh_start, NONE, API_OH_RUNTIME_API},
    {"GET", "/openhands/sessions/batch", api_oh_batch, NONE, API_OH_RUNTIME_API},
    {"GET", "/openhands/sessions/{}", api_oh_sessions_get, NONE, API_OH_RUNTIME_API},
    {"GET", "/openhands/runtime/{}", api_oh_runtime_get, NONE, API_OH_RUNTIME_API},
    {"POST", "/openhands/pause", api_oh_pause, NONE, API_OH_RUNTIME_API},
    {"POST", "/openhands/resume", api_oh_resume, NONE, API_OH_RUNTIME_API},
    {"POST", "/openhands/stop", api_oh_stop, NONE, API_OH_RUNTIME_API},
    {"GET", "/openhands/list", api_oh_list, NONE, API_OH_RUNTIME_API},
    {"GET", "/openhands/registry_prefix", api_oh_registry_prefix, NONE, API_OH_RUNTIME_API},
    {"GET", "/openhands/image_exists", api_oh_image_exists, NONE, API_OH_RUNTIME_API},
    {"POST", "/openhands/build", api_oh_build, NONE | STREAM, API_OH_RUNTIME_API}, /* form read */
    {"GET", "/openhands/build_status", api_oh_build_status, NONE, API_OH_RUNTIME_API},
    /* E2B's control API (api/e2b/): own auth (X-API-Key), E2B's error bodies; the v1 paths are
     * older SDKs' and the Python SDK's (docs/e2b-wire.md 2.6). */
    {"POST", "/e2b/sandboxes", api_e2b_create, NONE, API_E2B},
    {"POST", "/e2b/v2/sandboxes", api_e2b_create, NONE, API_E2B},
    {"GET", "/e2b/sandboxes", api_e2b_list, NONE, API_E2B},
    {"GET", "/e2b/v2/sandboxes", api_e2b_list, NONE, API_E2B},
    {"GET", "/e2b/sandboxes/{}", api_e2b_get, NONE, API_E2B},
    {"DELETE", "/e2b/sandboxes/{}", api_e2b_kill, NONE, API_E2B},
    {"POST", "/e2b/sandboxes/{}/timeout", api_e2b_set_timeout, NONE, API_E2B},
    {"POST", "/e2b/sandboxes/{}/pause", api_e2b_pause, NONE, API_E2B},
    {"POST", "/e2b/sandboxes/{}/connect", api_e2b_connect, NONE, API_E2B},
    {"POST", "/e2b/v2/sandboxes/{}/connect", api_e2b_connect, NONE, API_E2B},
    {"POST", "/e2b/sandboxes/{}/resume", api_e2b_resume, NONE, API_E2B},
    {"POST", "/e2b/sandboxes/{}/refreshes", api_e2b_refresh, NONE, API_E2B},
    {"PUT", "/e2b/sandboxes/{}/network", api_e2b_update_network, NONE, API_E2B},
    {"GET", "/e2b/sandboxes/{}/metrics", api_e2b_metrics, NONE, API_E2B},
    {"GET", "/e2b/sandboxes/{}/logs", api_e2b_logs, NONE, API_E2B},
    {"GET", "/e2b/v2/sandboxes/{}/logs", api_e2b_logs_v2, NONE, API_E2B},
    {"POST", "/e2b/sandboxes/{}/snapshots", api_e2b_snapshot_create, NONE, API_E2B},
    {"GET", "/e2b/snapshots", api_e2b_snapshots, NONE, API_E2B},
    {"POST", "/e2b/sandboxes/{}/fork", api_e2b_fork, NONE, API_E2B},
    {"GET", "/e2b/templates", api_e2b_templates, NONE, API_E2B},
    {"GET", "/e2b/templates/aliases/{}", api_e2b_template_alias, NONE, API_E2B},
    {"POST", "/e2b/v3/templates", api_e2b_template_build, NONE, API_E2B},
    {"POST", "/e2b/v2/templates", api_e2b_template_build, NONE, API_E2B},
    {"POST", "/e2b/templates", api_e2b_template_build, NONE, API_E2B},
    {"DELETE", "/e2b/templates/{}", api_e2b_template_delete, NONE, API_E2B},
};

/* Matches path against pattern; captures go to m (decoded). Returns 1 on a match, 0 on none,
 * -1 when a captured segment is malformed (bad escape, too long). */
static int
match(const char *pattern, const char *path, api_route_match_t *m)
{
    m->nparams = 0;
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
            if (m->nparams >= API_ROUTE_PARAMS_MAX)
                return -1;
            char *param = m->params[m->nparams];
            if (pct_decode(s, slen, param, API_ROUTE_PARAM_MAX) < 0 || strchr(param, '/'))
                return -1;
            m->nparams++;
        } else if (plen != slen || strncmp(p, s, plen) != 0) {
            return 0;
        }
        p = pe;
        s = se;
    }
    /* A single trailing slash on the path is tolerated. */
    return !*p && (!*s || !strcmp(s, "/"));
}

int
api_route_find(const char *method, const char *path, api_route_match_t *m)
{
    bool path_matched = false, bad_segment = false;
    m->route = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        int k = match(routes[i].pattern, path, m);
        if (k < 0)
            bad_segment = true;
        if (k <= 0)
            continue;
        path_matched = true;
        if (!strcmp(routes[i].method, method)) {
            m->route = &routes[i];
            return API_ROUTE_FOUND;
        }
    }
    m->nparams = 0;
    return path_matched  ? API_ROUTE_NO_METHOD
           : bad_segment ? API_ROUTE_BAD_SEGMENT
                         : API_ROUTE_NO_PATH;
}

/* Routes r: the body (read whole unless the route streams it), authentication, the handler.
 * Until the handler runs, errors are REST's, /runtime/'s FastAPI's. */
static void
dispatch(api_req_t *r)
{
    bool runtime = !strncmp(r->path, "/runtime/", 9);
    /* E2B's SDK reads its own error bodies ("code"), also for a path it got wrong */
    r->flavour = runtime                         ? API_OH_ACTION_SERVER
                 : !strncmp(r->path, "/e2b/", 5) ? API_E2B
                                                 : API_REST;
    api_route_match_t m;
    int found = api_route_find(r->method, r->path, &m);
    if (found == API_ROUTE_NO_METHOD) {
        if (runtime)
            api_failf(r, ERR_METHOD, "Method Not Allowed");
        else
            api_failf(r, ERR_METHOD, "%s is not allowed on %.200s", r->method, r->path);
        return;
    }
    if (found == API_ROUTE_BAD_SEGMENT && !runtime) { /* FastAPI's is a 404 */
        api_failf(r, ERR_BAD_REQ, "malformed path segment");
        return;
    }
    if (found != API_ROUTE_FOUND) {
        if (runtime)
            api_failf(r, ERR_NOT_FOUND, "Not Found");
        else
            api_failf(r, ERR_NOT_FOUND, "no route for %s %.200s", r->method, r->path);
        return;
    }
    const api_route_t *route = m.route;
    int auth = route->flags & API_ROUTE_AUTH_MASK;
    if (!(route->flags & API_ROUTE_BODY_STREAM) && api_req_body(r, g_api.body_max) < 0) {
        api_err_t e;
        if (r->body_broken) {
            api_err_set(&e, ERR_BAD_REQ, "the request body was cut short");
            api_reply_error(r, API_REST, &e); /* REST's body, whatever the route */
        } else if (runtime) {
            api_failf(r, ERR_TOO_BIG, "Request body too large");
        } else {
            api_failf(r, ERR_TOO_BIG, "request body over %zu bytes", g_api.body_max);
        }
        return;
    }
    if (auth != API_ROUTE_AUTH_NONE && api_auth_bearer(r) < 0)
        return;
    if (auth == API_ROUTE_AUTH_ADMIN && !api_is_admin(r)) {
        api_failf(r, ERR_FORBIDDEN, "this route needs an admin token");
        return;
    }
    char *pp[API_ROUTE_PARAMS_MAX];
    for (int k = 0; k < m.nparams; k++)
        pp[k] = m.params[k];
    r->flavour = route->flavour;
    route->fn(r, pp);
}

void
api_handle(api_req_t *r)
{
    api_oh_path_form(r); /* /rt-…/x (a runtime's own URL) is /runtime/rt-…/x */
    dispatch(r);
    if (!r->status) {
        api_err_t e;
        api_err_set(&e, ERR_INTERNAL, "the handler sent no reply");
        api_reply_error(r, API_REST, &e);
    }
    char field[32];
    snprintf(field, sizeof field, "http_%dxx", r->status / 100);
    api_metric_incr(r, field, 1);
    if (r->status >= 500)
        api_metric_incr(r, "errors", 1);
    api_redis_end_request(r);
}
