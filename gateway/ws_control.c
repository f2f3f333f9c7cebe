/* ws_control.c — session management over the control WebSocket. The same operations reach
 * the gateway from the REST API through Redis; both end in session.c. */
#include "ws_control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "pool.h"
#include "redis_client.h"
#include "session.h"
#include "ws_server.h"
#include "xalloc.h"

typedef struct {
    uint64_t conn;
    json_object *id;
} pending_t;

static json_object *
result_msg(json_object *id, json_object *result)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "type", "result");
    if (id)
        json_set(o, "id", json_object_get(id));
    json_set(o, "result", result);
    return o;
}

static json_object *
error_msg(json_object *id, const char *code, const char *message)
{
    return ws_error_msg(code, message, id);
}

static void
on_created(void *ud, gw_session_t *s, int code, const char *msg)
{
    pending_t *pd = ud;
    struct lws *wsi = ws_lookup(pd->conn);
    if (wsi) {
        if (s)
            ws_reply(wsi, result_msg(pd->id, session_describe(s)));
        else
            ws_reply(wsi, error_msg(pd->id, err_name(code), msg ? msg : "session could not start"));
    }
    json_object_put(pd->id);
    free(pd);
}

static bool
can_see(const jwt_claims_t *who, gw_session_t *s)
{
    if (!strcmp(who->role, "admin"))
        return true;
    if (!strcmp(who->role, "viewer"))
        return !strcmp(who->session, session_id(s));
    return !strcmp(who->sub, session_owner(s));
}

void
ws_control_handle(struct lws *wsi, const jwt_claims_t *who, json_object *msg)
{
    json_object *id = json_get(msg, "id");
    const char *method = json_get_str(msg, "method", "");
    json_object *params = json_get(msg, "params");
    if (params && !json_object_is_type(params, json_type_object)) {
        ws_reply(wsi, error_msg(id, "bad_request", "\"params\" must be an object"));
        return;
    }
    bool viewer = !strcmp(who->role, "viewer");
    if (!strcmp(method, "session.create")) {
        if (viewer) {
            ws_reply(wsi, error_msg(id, "forbidden", "viewers cannot create sessions"));
            return;
        }
        pending_t *pd = xmalloc(sizeof *pd);
        pd->conn = ws_conn_id(wsi);
        pd->id = id ? json_object_get(id) : NULL;
        session_create(params, who->sub, on_created, pd);
        return;
    }
    if (!strcmp(method, "session.list")) {
        json_object *arr = json_object_new_array();
        for (gw_session_t *s = g_gw.sessions; s; s = session_next(s))
            if (can_see(who, s))
                json_object_array_add(arr, session_describe(s));
        json_object *r = json_object_new_object();
        json_set(r, "sessions", arr);
        ws_reply(wsi, result_msg(id, r));
        return;
    }
    if (!strcmp(method, "pool")) {
        ws_reply(wsi, result_msg(id, pool_describe()));
        return;
    }
    if (!strcmp(method, "health")) {
        json_object *r = json_object_new_object();
        json_set_bool(r, "redis", redis_client_connected());
        json_set_str(r, "gateway", g_gw.cfg.id);
        json_set_str(r, "version", GW_VERSION);
        json_set_int(r, "sessions", sessions_count());
        json_set_int(r, "connections", (int64_t)ws_connections());
        json_set(r, "pool", pool_describe());
        ws_reply(wsi, result_msg(id, r));
        return;
    }
    if (!strcmp(method, "session.get") || !strcmp(method, "session.delete")) {
        const char *sid = json_get_str(params, "session", "");
        gw_session_t *s = session_find(sid);
        if (!s || !can_see(who, s)) {
            ws_reply(wsi, error_msg(id, "not_found", "no such session on this gateway"));
            return;
        }
        if (!strcmp(method, "session.get")) {
            ws_reply(wsi, result_msg(id, session_describe(s)));
            return;
        }
        if (viewer) {
            ws_reply(wsi, error_msg(id, "forbidden", "viewers cannot delete sessions"));
            return;
        }
        json_object *r = session_describe(s);
        session_delete(s, "deleted by client");
        json_set_str(r, "status", session_status_text(SESSION_STOPPED));
        ws_reply(wsi, result_msg(id, r));
        return;
    }
    if (!strcmp(method, "session.pause") || !strcmp(method, "session.resume")) {
        gw_session_t *s = session_find(json_get_str(params, "session", ""));
        if (!s || !can_see(who, s)) {
            ws_reply(wsi, error_msg(id, "not_found", "no such session on this gateway"));
            return;
        }
        if (viewer) {
            ws_reply(wsi, error_msg(id, "forbidden", "viewers cannot pause or resume sessions"));
            return;
        }
        err_t err = {0};
        int rc = !strcmp(method, "session.pause") ? session_pause(s, "paused by client", &err)
                                                  : session_resume(s, &err);
        ws_reply(wsi, rc < 0 ? error_msg(id, err_name(err.code), err.msg)
                             : result_msg(id, session_describe(s)));
        return;
    }
    char m[160];
    snprintf(m, sizeof m, "unknown method \"%.80s\"", method);
    ws_reply(wsi, error_msg(id, "bad_request", m));
}
