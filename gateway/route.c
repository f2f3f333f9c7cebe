/* route.c — session → owning gateway → its address, cached; nginx's route lookup. See route.h.
 *
 * The cache is two direct-mapped tables (bounded: a colliding id replaces the older entry), each
 * entry good for ROUTE_TTL_MS: a session that moved (takeover, docs/operations.md) is routed to
 * its new owner within that. A miss costs one or two Redis round trips on the shared connection
 * (a runtime id one more); a session of this gateway costs none. */
#include "route.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "jwt.h"
#include "jwt_cache.h"
#include "preview_listen.h"
#include "redis_client.h"
#include "route_uri.h"
#include "session.h"
#include "xalloc.h"

#define SESSION_SLOTS 1024
#define GATEWAY_SLOTS 64

typedef struct {
    char key[128];
    route_t r;
    double at; /* gw_now() when filled; 0: empty */
} route_slot_t;

typedef struct {
    char id[64];
    char addr[192];
    char preview[192];
    bool alive;
    double at;
} gw_slot_t;

static route_slot_t routes[SESSION_SLOTS];
static gw_slot_t gateways[GATEWAY_SLOTS];

static unsigned
hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static bool
fresh(double at)
{
    return at > 0 && (gw_now() - at) * 1000.0 < ROUTE_TTL_MS;
}

/* A session id as the API accepts one (api/session_record.c), or a runtime id. */
static bool
id_ok(const char *id)
{
    size_t n = strlen(id);
    return n > 0 && n <= 100 && !strpbrk(id, "{}\r\n %");
}

static bool
is_rid(const char *id)
{
    if (strncmp(id, "rt-", 3) != 0 || strlen(id) != 19)
        return false;
    for (const char *p = id + 3; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

/* ---- resolving ---- */

typedef struct {
    char id[128];
    route_t r;
    route_cb cb;
    void *ud;
} job_t;

/* What this gateway knows of its own session sid, into r. */
static bool
local(const char *sid, route_t *r)
{
    gw_session_t *s = session_find(sid);
    if (!s)
        return false;
    r->found = true;
    snprintf(r->owner, sizeof r->owner, "%s", session_owner(s));
    snprintf(r->status, sizeof r->status, "%s", session_status_text(session_status(s)));
    snprintf(r->gw, sizeof r->gw, "%s", g_gw.cfg.id);
    snprintf(r->addr, sizeof r->addr, "%s", g_gw.cfg.advertise);
    snprintf(r->preview, sizeof r->preview, "%s", preview_listen_addr());
    r->gw_alive = true;
    return true;
}

static void
finish(job_t *j, bool ok)
{
    if (ok) {
        route_slot_t *s = &routes[hash(j->id) % SESSION_SLOTS];
        snprintf(s->key, sizeof s->key, "%s", j->id);
        s->r = j->r;
        s->at = gw_now();
    }
    j->cb(j->ud, ok ? &j->r : NULL);
    free(j);
}

static void
on_gw_alive(redisReply *x, void *ud)
{
    job_t *j = ud;
    if (!x || x->type != REDIS_REPLY_INTEGER) {
        finish(j, false);
        return;
    }
    j->r.gw_alive = x->integer > 0;
    gw_slot_t *g = &gateways[hash(j->r.gw) % GATEWAY_SLOTS];
    snprintf(g->id, sizeof g->id, "%s", j->r.gw);
    snprintf(g->addr, sizeof g->addr, "%s", j->r.addr);
    snprintf(g->preview, sizeof g->preview, "%s", j->r.preview);
    g->alive = j->r.gw_alive;
    g->at = gw_now();
    finish(j, true);
}

static void
on_gw_addr(redisReply *x, void *ud)
{
    job_t *j = ud;
    if (!x || x->type != REDIS_REPLY_ARRAY || x->elements != 2)
        return;
    if (x->element[0]->type == REDIS_REPLY_STRING)
        snprintf(j->r.addr, sizeof j->r.addr, "%s", x->element[0]->str);
    if (x->element[1]->type == REDIS_REPLY_STRING)
        snprintf(j->r.preview, sizeof j->r.preview, "%s", x->element[1]->str);
}

/* The session's gateway: its address and whether it lives. */
static void
gateway_step(job_t *j)
{
    if (!strcmp(j->r.gw, g_gw.cfg.id)) {
        snprintf(j->r.addr, sizeof j->r.addr, "%s", g_gw.cfg.advertise);
        snprintf(j->r.preview, sizeof j->r.preview, "%s", preview_listen_addr());
        j->r.gw_alive = true;
        finish(j, true);
        return;
    }
    gw_slot_t *g = &gateways[hash(j->r.gw) % GATEWAY_SLOTS];
    if (fresh(g->at) && !strcmp(g->id, j->r.gw)) {
        snprintf(j->r.addr, sizeof j->r.addr, "%s", g->addr);
        snprintf(j->r.preview, sizeof j->r.preview, "%s", g->preview);
        j->r.gw_alive = g->alive;
        finish(j, true);
        return;
    }
    /* both on the one connection, answered in order: one round trip */
    if (redis_client_cmd(on_gw_addr, j, "HMGET sp:gateway:%s:info addr preview", j->r.gw) < 0) {
        finish(j, false); /* not connected (on_gw_addr had NULL and did nothing) */
        return;
    }
    redis_client_cmd(on_gw_alive, j, "EXISTS sp:gateway:%s", j->r.gw);
}

static void
on_session(redisReply *x, void *ud)
{
    job_t *j = ud;
    if (!x || x->type != REDIS_REPLY_ARRAY || x->elements != 3) {
        finish(j, false);
        return;
    }
    const char *f[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++)
        if (x->element[i]->type == REDIS_REPLY_STRING)
            f[i] = x->element[i]->str;
    if (!f[0] || !f[1]) { /* no such session (or one without an owner: never routed) */
        finish(j, true);
        return;
    }
    j->r.found = true;
    snprintf(j->r.gw, sizeof j->r.gw, "%s", f[0]);
    snprintf(j->r.owner, sizeof j->r.owner, "%s", f[1]);
    snprintf(j->r.status, sizeof j->r.status, "%s", f[2] ? f[2] : "");
    gateway_step(j);
}

static void
session_step(job_t *j)
{
    if (local(j->r.sid, &j->r)) {
        finish(j, true);
        return;
    }
    redis_client_cmd(on_session, j, "HMGET sp:session:{%s} gateway owner status", j->r.sid);
}

/* sp:oh:session:{SID}: runtime_id session key owner stopped error */
static void
on_runtime(redisReply *x, void *ud)
{
    job_t *j = ud;
    if (!x || x->type != REDIS_REPLY_ARRAY || x->elements != 6) {
        finish(j, false);
        return;
    }
    const char *f[6];
    for (int i = 0; i < 6; i++)
        f[i] = x->element[i]->type == REDIS_REPLY_STRING ? x->element[i]->str : "";
    bool stopped = *f[4] && strcmp(f[4], "0") != 0;
    if (strcmp(f[0], j->id) != 0 || stopped) { /* an earlier runtime of that SID, or stopped */
        finish(j, true);
        return;
    }
    snprintf(j->r.rt_key, sizeof j->r.rt_key, "%s", f[2]);
    snprintf(j->r.rt_owner, sizeof j->r.rt_owner, "%s", f[3]);
    if (!*f[1] || !id_ok(f[1])) {
        j->r.starting = !*f[1] && !*f[5];
        finish(j, true);
        return;
    }
    snprintf(j->r.sid, sizeof j->r.sid, "%s", f[1]);
    session_step(j);
}

static void
on_rid(redisReply *x, void *ud)
{
    job_t *j = ud;
    if (!x || (x->type != REDIS_REPLY_STRING && x->type != REDIS_REPLY_NIL)) {
        finish(j, false);
        return;
    }
    if (x->type == REDIS_REPLY_NIL || x->len == 0 || x->len > 100 || strpbrk(x->str, "{}")) {
        finish(j, true);
        return;
    }
    redis_client_cmd(on_runtime, j,
                     "HMGET sp:oh:session:{%s} runtime_id session key owner stopped error", x->str);
}

void
route_resolve(const char *id, route_cb cb, void *ud)
{
    route_t r = {0};
    if (!id_ok(id)) {
        cb(ud, &r);
        return;
    }
    route_slot_t *s = &routes[hash(id) % SESSION_SLOTS];
    if (fresh(s->at) && !strcmp(s->key, id)) {
        r = s->r;
        /* this gateway's own sessions from memory; one that left it is looked up again */
        if (!r.found || local(r.sid, &r) || strcmp(r.gw, g_gw.cfg.id) != 0) {
            cb(ud, &r);
            return;
        }
    }
    job_t *j = xcalloc(1, sizeof *j);
    snprintf(j->id, sizeof j->id, "%s", id);
    j->cb = cb;
    j->ud = ud;
    if (is_rid(id)) {
        redis_client_cmd(on_rid, j, "GET sp:oh:runtime:{%s}", id);
        return;
    }
    snprintf(j->r.sid, sizeof j->r.sid, "%s", id);
    session_step(j);
}

/* ---- the lookup nginx asks (auth_request) ---- */

typedef struct {
    uint64_t req;
    route_uri_kind_t kind;
    bool write;
    bool files; /* a /api/v1/sessions/{id}/files… route */
    jwt_claims_t claims;
    bool authed;
    int auth_code; /* why not (ERR_AUTH, ERR_AUTH_EXPIRED) */
    char api_key[JWT_BUF_LEN];
} lookup_t;

static void
refuse(http_req_t *h, int status, int code, const char *message)
{
    json_object *o = json_object_new_object(), *e = json_object_new_object();
    json_set_str(e, "code", err_name(code));
    json_set_str(e, "message", message);
    json_set(o, "error", e);
    size_t len;
    const char *t = json_text(o, &len);
    snprintf(h->extra, sizeof h->extra, "x-sp-status: %d\r\nx-sp-error: %.*s\r\n", status,
             (int)(len < 400 ? len : 400), t);
    json_object_put(o);
    http_answer(h, 404, "text/plain", "", 0);
}

/* The token's rights on session r (api/auth.c's rules, the gateway's ops_access). */
static bool
may_use(const jwt_claims_t *c, const route_t *r, bool write)
{
    if (!strcmp(c->role, "admin"))
        return true;
    if (!strcmp(c->role, "viewer"))
        return !write && !strcmp(c->session, r->sid);
    return !strcmp(c->role, "user") && !strcmp(c->sub, r->owner);
}

static void
on_route(void *ud, const route_t *r)
{
    lookup_t *l = ud;
    http_req_t *h = http_find(l->req);
    if (!h) {
        free(l);
        return;
    }
    char m[200];
    bool ok = false;
    if (l->kind == ROUTE_URI_PREVIEW) {
        /* as the action server's: the owner's preview listener, else this gateway's, which says
         * why not (no such session, its gateway gone) on a page (preview_conn.c) */
        bool owner = r && r->found && r->gw_alive && r->preview[0];
        snprintf(h->extra, sizeof h->extra, "x-sp-preview: %s\r\n",
                 owner ? r->preview : preview_listen_addr());
        http_answer(h, owner ? 200 : 204, "text/plain", "", 0);
        free(l);
        return;
    }
    if (l->kind == ROUTE_URI_RUNTIME || l->kind == ROUTE_URI_ENVD) {
        /* The action server's and envd's requests are all answered by a gateway: the owner
         * while it lives (it knows the session's state), else this one, which says why in the
         * API's own words (unknown, stopped, starting, its gateway gone: http_rt.c, envd's
         * "not running"). Only the owner's answer is kept by nginx (a 204 is not). */
        bool owner = r && r->found && r->gw_alive && r->addr[0];
        snprintf(h->extra, sizeof h->extra, "x-sp-gateway: %s\r\n",
                 owner ? r->addr : g_gw.cfg.advertise);
        http_answer(h, owner ? 200 : 204, "text/plain", "", 0);
        free(l);
        return;
    }
    if (!r) {
        refuse(h, 503, ERR_UNAVAILABLE, "Redis is not reachable");
    } else if (!r->found) {
        refuse(h, 404, ERR_NOT_FOUND, "no such session");
    } else if (l->kind == ROUTE_URI_RUNTIME && r->rt_key[0] &&
               strlen(l->api_key) == strlen(r->rt_key) &&
               CRYPTO_memcmp(l->api_key, r->rt_key, strlen(r->rt_key)) == 0) {
        ok = true; /* the runtime's own key: its owner */
    } else if (l->kind != ROUTE_URI_WS) {
        /* The HTTP routes: the owner checks the token itself (with the API's texts), so the
         * answer depends on the session alone and nginx caches it for a second per URI, keeping
         * tokens out of its cache (docs/api.md, "nginx"). */
        ok = true;
    } else if (!l->authed) {
        refuse(h, 401, l->auth_code, "the token is missing or not valid");
    } else if (!may_use(&l->claims, r, l->write)) {
        refuse(h, 404, ERR_NOT_FOUND, "no such session");
    } else {
        ok = true;
    }
    if (ok && (!r->gw_alive || !r->addr[0])) {
        snprintf(m, sizeof m, "the session's gateway %.100s is not running", r->gw);
        refuse(h, 503, ERR_GATEWAY_DOWN, m);
    } else if (ok && l->kind != ROUTE_URI_WS &&
               (!strcmp(r->status, "STOPPED") ||
                (!l->files && (!strcmp(r->status, "PAUSED") || !strncmp(r->status, "ERROR", 5))))) {
        /* the API words it (docs/api.md); a paused or failed session's file routes its gateway
         * answers itself (the session is not reachable: resume it first) */
        refuse(h, 409, ERR_SESSION_ENDED, r->status);
    } else if (ok) {
        snprintf(h->extra, sizeof h->extra, "x-sp-gateway: %s\r\n", r->addr);
        http_answer(h, 200, "text/plain", "", 0);
    }
    free(l);
}

static const char NO_ROUTE_KEY[] =
    "{\"error\":{\"code\":\"unauthorized\",\"message\":\"route lookups are nginx's and carry "
    "its " ROUTE_KEY_HEADER " (nginx/render.sh --secret-file)\"}}";

/* Whether uri is /api/v1/sessions/{id}/files… */
static bool
is_files(const char *uri, const char *id)
{
    static const char pre[] = "/api/v1/sessions/";
    size_t n = strlen(id);
    if (strncmp(uri, pre, sizeof pre - 1) != 0 || strncmp(uri + sizeof pre - 1, id, n) != 0)
        return false;
    const char *rest = uri + sizeof pre - 1 + n;
    return !strncmp(rest, "/files", 6) && strchr("/?", rest[6]);
}

void
route_http(http_req_t *h, const char *unused)
{
    (void)unused;
    if (!route_key_matches(g_gw.route_key, h->route_key)) {
        /* nginx's question alone: anyone else learns nothing, not even whether the session
         * exists or where its gateway is */
        http_answer(h, 401, NULL, NO_ROUTE_KEY, sizeof NO_ROUTE_KEY - 1);
        return;
    }
    lookup_t *l = xcalloc(1, sizeof *l);
    l->req = h->id;
    route_uri_t u;
    int named = route_uri_parse(h->uri, &u);
    l->kind = u.kind;
    l->write = u.write;
    if (u.kind == ROUTE_URI_REST && !strcmp(h->uri_method, "GET"))
        l->write = false; /* a download: a viewer may read */
    l->files = u.kind == ROUTE_URI_REST && is_files(h->uri, u.id);
    /* the token: Authorization (nginx moved a browser's subprotocol token there), a WebSocket's
     * ?token=, or a runtime's X-Session-API-Key */
    char tok[JWT_BUF_LEN] = "";
    const char *bearer = NULL;
    if (l->kind == ROUTE_URI_RUNTIME)
        snprintf(tok, sizeof tok, "%s", h->api_key);
    else if (jwt_bearer_from_header(h->authorization, &bearer) == 0)
        snprintf(tok, sizeof tok, "%s", bearer);
    else if (l->kind == ROUTE_URI_WS)
        route_uri_arg(h->uri, "token", tok, sizeof tok);
    snprintf(l->api_key, sizeof l->api_key, "%s", h->api_key);
    err_t err = {0};
    l->auth_code = ERR_AUTH;
    if (tok[0]) {
        int rc = jwt_cache_verify(tok, (int64_t)gw_wall(), &l->claims, &err);
        l->authed = rc == 0;
        if (rc < 0)
            l->auth_code = -rc;
    }
    if (named < 0) {
        refuse(h, 404, ERR_NOT_FOUND, "not a session's path");
        free(l);
        return;
    }
    if (u.kind != ROUTE_URI_WS && u.kind != ROUTE_URI_PREVIEW &&
        !http_serves(u.kind == ROUTE_URI_RUNTIME || u.kind == ROUTE_URI_ENVD ? NULL : h->uri_method,
                     h->uri)) {
        /* a route of the session the gateways do not serve (e.g. DELETE …/files beside GET
         * …/files): the API answers it */
        refuse(h, 404, ERR_NOT_FOUND, "not a route the gateway serves");
        free(l);
        return;
    }
    route_resolve(u.id, on_route, l);
}
