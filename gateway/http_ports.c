/* http_ports.c — ports and preview links over REST (http_ports.h). */
#include "http_ports.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "http_rest.h"
#include "json_util.h"
#include "preview_listen.h"
#include "preview_token.h"
#include "preview_url.h"
#include "route.h"
#include "session.h"
#include "session_ports.h"
#include "xalloc.h"

typedef enum { PORTS_LIST, PORTS_TOKEN, PORTS_LINK, PORTS_PUBLIC } ports_op_t;

typedef struct {
    jwt_claims_t claims;
    ports_op_t op;
    unsigned port;
    char id[128];
    json_object *body;
} ports_req_t;

static void
req_free(void *ud)
{
    ports_req_t *x = ud;
    json_object_put(x->body);
    free(x);
}

/* The URLs of port of s: "path" (relative to the origin) and, with a wildcard domain, "host". */
static void
add_urls(json_object *o, const http_req_t *h, const char *sid, unsigned port, const char *tok,
         bool query)
{
    char path[400], host[400];
    if (!tok)
        snprintf(path, sizeof path, "/preview/%s/%u/", sid, port);
    else if (query)
        snprintf(path, sizeof path, "/preview/%s/%u/?sp_token=%s", sid, port, tok);
    else
        snprintf(path, sizeof path, "/preview/%s/%u/~%s/", sid, port, tok);
    json_set_str(o, "path_url", path);
    preview_host_url(h->preview_origin, sid, port, host, sizeof host);
    if (host[0]) {
        char full[480];
        snprintf(full, sizeof full, "%s%s%s", host, tok ? "?sp_token=" : "", tok ? tok : "");
        json_set_str(o, "host_url", full);
    }
}

static void
on_list(void *ud, json_object *res)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    ports_req_t *x = h->ud;
    json_object *err = json_get(res, "error");
    if (err) {
        http_rest_fail_with(h, err, "the sandbox's ports could not be read");
        return;
    }
    gw_session_t *s = session_find(x->id);
    json_object *out = json_object_new_object(), *arr = json_object_new_array();
    json_object *ports = json_get(res, "ports");
    for (size_t i = 0; ports && i < json_object_array_length(ports); i++) {
        json_object *p = json_object_get(json_object_array_get_idx(ports, i));
        unsigned port = (unsigned)json_get_int(p, "port", 0);
        json_set_bool(p, "public", s && session_port_public(s, port));
        add_urls(p, h, x->id, port, NULL, false);
        json_object_array_add(arr, p);
    }
    json_set(out, "ports", arr);
    json_set_bool(out, "public_allowed", preview_public_allowed());
    http_answer_json(h, 200, out);
}

static void
mint(http_req_t *h, ports_req_t *x, gw_session_t *s)
{
    (void)s;
    bool once = x->op == PORTS_LINK;
    int64_t ttl = once ? PREVIEW_LINK_TTL : PREVIEW_SHARE_TTL_DEFAULT;
    json_object *t = x->body ? json_get(x->body, "ttl") : NULL;
    if (!once && t) {
        if (!json_object_is_type(t, json_type_int) || json_object_get_int64(t) < 1 ||
            json_object_get_int64(t) > PREVIEW_SHARE_TTL_MAX) {
            http_rest_fail(h, ERR_BAD_REQ, "\"ttl\" is whole seconds from 1 to %d",
                           PREVIEW_SHARE_TTL_MAX);
            return;
        }
        ttl = json_object_get_int64(t);
    }
    int64_t exp = (int64_t)gw_wall() + ttl;
    char tok[PREVIEW_TOKEN_MAX];
    if (preview_token_mint(preview_key(), x->id, once ? PREVIEW_KIND_ONCE : PREVIEW_KIND_SHARE,
                           x->port, exp, tok, sizeof tok) < 0) {
        http_rest_fail(h, ERR_UNAVAILABLE, "no token could be made");
        return;
    }
    json_object *o = json_object_new_object();
    json_set_int(o, "port", x->port);
    json_set_str(o, "kind", once ? "link" : "token");
    json_set_int(o, "expires_at", exp);
    if (!once)
        json_set_str(o, "token", tok);
    /* a one-time link is opened by its query (the gateway takes it, then redirects); a shared
     * token also works in the path, where a sandboxed page's requests carry it */
    add_urls(o, h, x->id, x->port, tok, once);
    http_answer_json(h, 200, o);
}

static void
set_public(http_req_t *h, ports_req_t *x, gw_session_t *s)
{
    json_object *v = x->body ? json_get(x->body, "public") : NULL;
    if (!v || !json_object_is_type(v, json_type_boolean)) {
        http_rest_fail(h, ERR_BAD_REQ, "the body is {\"public\": true|false}");
        return;
    }
    bool on = json_object_get_boolean(v);
    if (on && !preview_public_allowed()) {
        http_rest_fail(h, ERR_FORBIDDEN,
                       "this deployment does not allow public ports (sandpipe-gateway "
                       "--preview-public on)");
        return;
    }
    err_t err = {0};
    if (session_port_set_public(s, x->port, on, &err) < 0) {
        http_rest_fail(h, err.code, "%s", err.msg);
        return;
    }
    json_object *o = json_object_new_object();
    json_set_int(o, "port", x->port);
    json_set_bool(o, "public", on);
    add_urls(o, h, x->id, x->port, NULL, false);
    http_answer_json(h, 200, o);
}

static void
on_route(void *ud, const route_t *r)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    ports_req_t *x = h->ud;
    gw_session_t *s = http_rest_session(h, r, &x->claims, x->id, x->op != PORTS_LIST);
    if (!s)
        return;
    if (x->op == PORTS_LIST) {
        json_object *req = json_object_new_object();
        json_set_str(req, "op", "port.list");
        err_t err = {0};
        if (session_probe_op(s, req, on_list, (void *)(uintptr_t)h->id, &err) < 0)
            http_rest_fail(h, err.code, "%s", err.msg);
        json_object_put(req);
    } else if (x->op == PORTS_PUBLIC) {
        set_public(h, x, s);
    } else {
        mint(h, x, s);
    }
}

/* …/ports/{port}[/token|/link]: op and port from the path's tail. */
static bool
parse_tail(http_req_t *h, const char *id, ports_req_t *x)
{
    char pre[200];
    snprintf(pre, sizeof pre, "/api/v1/sessions/%s/ports/", id);
    size_t pl = strlen(pre);
    const char *t = h->path + pl;
    char *end;
    long port = strncmp(h->path, pre, pl) ? -1 : strtol(t, &end, 10);
    if (port < 1 || port > 65535 || end == t || *t == '0') {
        http_rest_fail(h, ERR_NOT_FOUND, "no such route: a port is 1 to 65535");
        return false;
    }
    x->port = (unsigned)port;
    if (!strcmp(h->method, "PUT") && (!*end || !strcmp(end, "/")))
        x->op = PORTS_PUBLIC;
    else if (!strcmp(h->method, "POST") && (!strcmp(end, "/token") || !strcmp(end, "/token/")))
        x->op = PORTS_TOKEN;
    else if (!strcmp(h->method, "POST") && (!strcmp(end, "/link") || !strcmp(end, "/link/")))
        x->op = PORTS_LINK;
    else {
        http_rest_fail(h, ERR_NOT_FOUND, "no such route under …/ports/%ld", port);
        return false;
    }
    return true;
}

static void
start(http_req_t *h, const char *id, bool tail)
{
    ports_req_t *x = xcalloc(1, sizeof *x);
    snprintf(x->id, sizeof x->id, "%s", id);
    h->ud = x;
    h->free_ud = req_free;
    if (!http_rest_auth(h, &x->claims))
        return;
    if (tail && !parse_tail(h, id, x))
        return;
    if (tail && h->body_len > 0 && !(x->body = http_rest_body(h)))
        return;
    route_resolve(x->id, on_route, (void *)(uintptr_t)h->id);
}

void
http_ports_list(http_req_t *h, const char *id)
{
    start(h, id, false);
}

void
http_ports_post(http_req_t *h, const char *id)
{
    start(h, id, true);
}

void
http_ports_put(http_req_t *h, const char *id)
{
    start(h, id, true);
}
