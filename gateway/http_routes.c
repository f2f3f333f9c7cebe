/* http_routes.c — the gateway's HTTP routes (a table: method, path, handler, whether its body
 * streams) and the 404/405 for what is not one of them.
 *
 * Routes (docs/api.md, "nginx"):
 *   GET  /_sp/route                        where nginx sends a session's request (route.c)
 *   POST /_sp/op                           the API's control requests (http_control.c; never
 *                                          from nginx)
 *   POST /runtime/{id}/execute_action      the OpenHands action server's (http_actions.c);
 *                                          /rt-<16 hex>/… is /runtime/rt-<16 hex>/…
 *   POST /api/v1/sessions/{id}/actions     REST (http_actions.c)
 *   GET  /api/v1/sessions/{id}/files/download   REST, streamed (http_files.c)
 *   POST /api/v1/sessions/{id}/signal, GET/DELETE …/files, GET …/files/stat,
 *        GET/POST …/files/content, POST …/files/mkdir, …/files/move   REST (http_relay.c)
 *   PUT  /api/v1/sessions/{id}/files/content   REST, the body streamed (http_upload.c)
 *   GET  /runtime/{id}/alive, health, ready, server_info,
 *   POST /runtime/{id}/list_files          the action server's small routes (http_runtime.c)
 *   GET  /runtime/{id}/vscode/connection_token, GET /runtime/{id}/vscode
 *                                          VS Code (http_rt_vscode.c)
 *   GET  /runtime/{id}/download_files      a zip, streamed chunked (http_rt_download.c)
 *   GET  /runtime/{id}/view                the file viewer's page, streamed (http_rt_view.c)
 *   POST /runtime/{id}/upload_file         a multipart body, streamed (http_rt_upload.c)
 *   GET  /api/v1/sessions/{id}/ports, POST …/ports/{port}/token|link, PUT …/ports/{port}
 *                                          ports and preview links (http_ports.c)
 *   POST /envd/{id}/process.Process/{method}, POST /envd/{id}/filesystem.Filesystem/{method},
 *   GET  /envd/{id}/health, GET /envd/{id}/files, POST /envd/{id}/files (the body streamed)
 *                                          E2B's envd (envd_routes.h) */

#include <stdio.h>
#include <string.h>

#include "envd_routes.h"
#include "http_actions.h"
#include "http_control.h"
#include "http_files.h"
#include "http_ports.h"
#include "http_relay.h"
#include "http_rest.h"
#include "http_rt_download.h"
#include "http_rt_upload.h"
#include "http_rt_view.h"
#include "http_rt_vscode.h"
#include "http_runtime.h"
#include "http_server.h"
#include "http_upload.h"
#include "json_util.h"
#include "route.h"
#include "session_network.h"

typedef void (*http_fn)(http_req_t *h, const char *id);

static bool match(const char *path, const char *prefix, const char *suffix, bool tail, char *id,
                  size_t cap);

static const struct {
    const char *method, *prefix, *suffix; /* prefix {id} suffix, or prefix alone (no id) */
    http_fn fn;
    bool (*streams)(const http_req_t *h); /* reads its body as it comes (NULL: read whole) */
    bool tail; /* the path goes on after suffix ("/…"): the handler reads the rest */
} routes[] = {
    {"GET", "/_sp/route", NULL, route_http, NULL, false},
    {"POST", "/_sp/op", NULL, http_control, NULL, false},
    {"POST", "/runtime/", "/execute_action", http_rt_execute_action, NULL, false},
    {"GET", "/runtime/", "/alive", http_rt_alive, NULL, false},
    {"GET", "/runtime/", "/health", http_rt_health, NULL, false},
    {"GET", "/runtime/", "/ready", http_rt_ready, NULL, false},
    {"GET", "/runtime/", "/server_info", http_rt_server_info, NULL, false},
    {"POST", "/runtime/", "/list_files", http_rt_list_files, NULL, false},
    {"GET", "/runtime/", "/vscode/connection_token", http_rt_vscode_token, NULL, false},
    {"GET", "/runtime/", "/vscode", http_rt_vscode_open, NULL, false},
    {"GET", "/runtime/", "/download_files", http_rt_download_files, NULL, false},
    {"GET", "/runtime/", "/view", http_rt_view, NULL, false},
    {"POST", "/runtime/", "/upload_file", http_rt_upload_file, http_rt_upload_streams, false},
    {"POST", "/api/v1/sessions/", "/actions", http_rest_actions, NULL, false},
    {"GET", "/api/v1/sessions/", "/files/download", http_files_download, NULL, false},
    {"POST", "/api/v1/sessions/", "/signal", http_signal, NULL, false},
    {"GET", "/api/v1/sessions/", "/network", http_session_network, NULL, false},
    {"GET", "/api/v1/sessions/", "/files", http_files_list, NULL, false},
    {"GET", "/api/v1/sessions/", "/files/stat", http_files_stat, NULL, false},
    {"GET", "/api/v1/sessions/", "/files/content", http_files_read, NULL, false},
    {"POST", "/api/v1/sessions/", "/files/content", http_files_write, NULL, false},
    {"DELETE", "/api/v1/sessions/", "/files", http_files_remove, NULL, false},
    {"POST", "/api/v1/sessions/", "/files/mkdir", http_files_mkdir, NULL, false},
    {"POST", "/api/v1/sessions/", "/files/move", http_files_move, NULL, false},
    {"PUT", "/api/v1/sessions/", "/files/content", http_files_put, http_upload_streams, false},
    {"GET", "/api/v1/sessions/", "/ports", http_ports_list, NULL, false},
    {"POST", "/api/v1/sessions/", "/ports", http_ports_post, NULL, true},
    {"PUT", "/api/v1/sessions/", "/ports", http_ports_put, NULL, true},
    {"POST", "/envd/", "/process.Process", envd_process_rpc, NULL, true},
    {"GET", "/envd/", "/health", envd_health, NULL, false},
    {"POST", "/envd/", "/filesystem.Filesystem", envd_filesystem_rpc, NULL, true},
    {"GET", "/envd/", "/files", envd_files_get, NULL, false},
    {"POST", "/envd/", "/files", envd_files_post, envd_files_post_streams, false},
};

bool
http_serves(const char *method, const char *uri)
{
    char path[512], id[128];
    snprintf(path, sizeof path, "%s%.500s", !strncmp(uri, "/rt-", 4) ? "/runtime" : "", uri);
    path[strcspn(path, "?#")] = '\0';
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (strncmp(routes[i].prefix, "/_sp/", 5) != 0 && /* the gateway's own, never routed */
            (!method || !strcmp(method, routes[i].method)) &&
            match(path, routes[i].prefix, routes[i].suffix, routes[i].tail, id, sizeof id))
            return true;
    return false;
}

/* path is prefix + one segment + suffix (a trailing slash tolerated; with tail, more path after
 * a slash): the segment into id. */
static bool
match(const char *path, const char *prefix, const char *suffix, bool tail, char *id, size_t cap)
{
    size_t pl = strlen(prefix);
    if (strncmp(path, prefix, pl) != 0)
        return false;
    if (!suffix)
        return !path[pl] || !strcmp(path + pl, "/");
    const char *seg = path + pl, *slash = strchr(seg, '/');
    if (!slash || slash == seg || (size_t)(slash - seg) >= cap)
        return false;
    size_t sl = strlen(suffix);
    if (strncmp(slash, suffix, sl) != 0)
        return false;
    if (tail ? slash[sl] != '/' || !slash[sl + 1] : slash[sl] && strcmp(slash + sl, "/") != 0)
        return false;
    memcpy(id, seg, (size_t)(slash - seg));
    id[slash - seg] = '\0';
    return true;
}

/* The route of h (its method and path), or -1: -2 when the path is one, not with this method. */
static int
route_of(const http_req_t *h, char *id, size_t cap)
{
    int rc = -1;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (!match(h->path, routes[i].prefix, routes[i].suffix, routes[i].tail, id, cap))
            continue;
        if (!strcmp(h->method, routes[i].method))
            return (int)i;
        rc = -2;
    }
    return rc;
}

bool
http_route_streams(const http_req_t *h)
{
    char id[128];
    int r = route_of(h, id, sizeof id);
    return r >= 0 && routes[r].streams && routes[r].streams(h);
}

void
http_dispatch(http_req_t *h)
{
    char id[128];
    int i = route_of(h, id, sizeof id);
    if (i >= 0) {
        routes[i].fn(h, routes[i].suffix ? id : NULL);
        return;
    }
    bool path_known = i == -2;
    bool rt = !strncmp(h->path, "/runtime/", 9);
    char m[320];
    json_object *o = json_object_new_object(), *e = json_object_new_object();
    int status = path_known ? 405 : 404;
    if (rt) {
        json_set_str(o, "detail", path_known ? "Method Not Allowed" : "Not Found");
    } else {
        snprintf(m, sizeof m,
                 "%s %.200s is not served here: a gateway serves the routes nginx sends it "
                 "(use nginx's address)",
                 h->method, h->path);
        json_set_str(e, "code", path_known ? "method_not_allowed" : "not_found");
        json_set_str(e, "message", m);
        json_set(o, "error", json_object_get(e));
    }
    json_object_put(e);
    http_answer_json(h, status, o);
}
