/* session_network.c — see session_network.h. */
#include "session_network.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw.h"
#include "http_rest.h"
#include "json_util.h"
#include "metrics.h"
#include "net_policy.h"
#include "netd_client.h"
#include "redis_client.h"
#include "route.h"
#include "session_int.h"
#include "xalloc.h"

static int
role_max(const char *role)
{
    if (role && strcmp(role, "admin") == 0)
        return g_gw.cfg.network_max_admin;
    if (role && strcmp(role, "user") == 0)
        return g_gw.cfg.network_max_user;
    return NET_NONE;
}

int
session_network_policy(json_object *params, const char *role, err_t *err)
{
    net_policy_t p;
    int max = role_max(role);
    /* asking nothing is the operator's default, as far as the caller's role reaches */
    int def = g_gw.cfg.network_default < max ? g_gw.cfg.network_default : max;
    if (def == NET_ALLOWLIST) /* a default is none or egress: never an empty allow-list */
        def = NET_NONE;
    int e = net_policy_parse(json_get(params, "network"), (net_mode_t)def, &p, err);
    if (e < 0)
        return e;
    if ((int)p.mode > max)
        e = err_set(err, ERR_FORBIDDEN,
                    "a %s may ask for network modes up to \"%s\" here, not \"%s\" (the "
                    "operator's --network-roles)",
                    role ? role : "caller", net_mode_name((net_mode_t)max), net_mode_name(p.mode));
    else if (p.mode != NET_NONE &&
             !strcmp(json_get_str(params, "provider", g_gw.cfg.provider), "local"))
        e = err_set(err, ERR_BAD_REQ,
                    "the local provider isolates nothing (its sandboxes share the host's network): "
                    "no network modes there");
    else if (p.mode != NET_NONE && !g_gw.cfg.netd)
        e = err_set(err, ERR_UNAVAILABLE,
                    "network mode \"%s\": this gateway has no network service (sandpipe-netd, "
                    "--netd)",
                    net_mode_name(p.mode));
    if (e == 0)
        json_set(params, "network", net_policy_to_json(&p));
    net_policy_free(&p);
    return e;
}

static bool
wants_network(const gw_session_t *s)
{
    const char *mode = json_get_str(json_get(s->params, "network"), "mode", "none");
    return strcmp(mode, "none") != 0;
}

/* netd's detach of s's sandbox: 0 (also when it was not attached) or -1 with err set. */
static int
netd_detach(gw_session_t *s, err_t *err)
{
    s->net_attached = false;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "detach");
    json_set_str(req, "id", s->sb.id);
    json_object *r = netd_request(req, -1, err);
    json_object_put(req);
    if (!r && err->code != ERR_NOT_FOUND)
        return -1;
    json_object_put(r);
    return 0;
}

void
session_network_detach(gw_session_t *s)
{
    if (!s->net_attached && !wants_network(s)) /* not known after a restart: ask netd */
        return;
    err_t err = {0};
    if (netd_detach(s, &err) < 0)
        GW_LOG("session %s: network detach: %s", s->id, err.msg);
}

/* netd's attach of s's sandbox under policy (borrowed): a link made, or, for an attached one,
 * its policy replaced. 0 or -1 with err set. */
static int
netd_attach(gw_session_t *s, json_object *policy, err_t *err)
{
    int ns = s->prov && s->prov->netns_open ? s->prov->netns_open(&s->sb, err)
                                            : provider_netns_open(&s->sb, err);
    if (ns < 0)
        return ns;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "attach");
    json_set_str(req, "id", s->sb.id);
    json_set_str(req, "session", s->id);
    json_set(req, "policy", json_object_get(policy));
    json_object *info = netd_request(req, ns, err);
    json_object_put(req);
    close(ns);
    if (!info)
        return -1;
    s->net_attached = true;
    GW_LOG("session %s: network %s at %s", s->id,
           json_get_str(json_get(info, "policy"), "mode", "?"), json_get_str(info, "address", "?"));
    json_object_put(info);
    return 0;
}

int
session_network_attach(gw_session_t *s, err_t *err)
{
    if (s->net_attached || !wants_network(s))
        return 0;
    return netd_attach(s, json_get(s->params, "network"), err);
}

int
session_network_set(gw_session_t *s, json_object *network, const char *role, const char *by,
                    err_t *err)
{
    if (s->status != SESSION_READY && s->status != SESSION_PAUSED)
        return err_set(err, ERR_BUSY, "the session is %s: its network changes once it is READY",
                       session_status_text(s->status));
    if (!network || json_object_is_type(network, json_type_null))
        return err_set(err, ERR_BAD_REQ, "\"network\" is required (docs/api.md \"Network\")");
    json_object *params = json_object_new_object();
    json_set(params, "network", json_object_get(network));
    json_set_str(params, "provider", s->prov ? s->prov->name : g_gw.cfg.provider);
    int e = session_network_policy(params, role, err);
    json_object *policy = json_get(params, "network");
    if (e == 0 && strcmp(json_get_str(policy, "mode", "none"), "none") != 0)
        e = netd_attach(s, policy, err); /* made, or its policy replaced in place */
    else if (e == 0 && (s->net_attached || wants_network(s)))
        e = netd_detach(s, err); /* lo only from now on */
    if (e < 0) {
        json_object_put(params);
        return err->code ? -err->code : -ERR_INTERNAL;
    }
    if (!s->params)
        s->params = json_object_new_object();
    json_object_object_add(s->params, "network", json_object_get(policy));
    session_save_field(s, "network",
                       json_object_to_json_string_ext(policy, JSON_C_TO_STRING_PLAIN |
                                                                  JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object *ev = session_event_new("network");
    json_set_str(ev, "event", "policy");
    json_set(ev, "policy", json_object_get(policy));
    json_set_str(ev, "origin", by ? by : "");
    event_log_append(s->log, ev);
    GW_LOG("session %s: network policy now %s (by %s)", s->id, json_get_str(policy, "mode", "?"),
           by ? by : "?");
    json_object_put(params);
    return 0;
}

/* A refusal netd reports: an event of the session's stream, when the session is ours. */
static void
on_event(json_object *ev)
{
    gw_session_t *s = session_find(json_get_str(ev, "session", ""));
    if (!s || strcmp(json_get_str(ev, "ev", ""), "refused") != 0 ||
        strcmp(s->sb.id, json_get_str(ev, "id", "")) != 0)
        return;
    json_object *e = session_event_new("network");
    json_set_str(e, "verdict", "refused");
    static const char *const fields[] = {"proto", "dest", "name", "rule", "dropped", "unreported"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (json_get(ev, fields[i]))
            json_set(e, fields[i], json_object_get(json_get(ev, fields[i])));
    json_set(e, "refusal", json_object_get(json_get(ev, "seq")));
    event_log_append(s->log, e);
    bool dns = !strcmp(json_get_str(ev, "proto", ""), "dns");
    metrics_network_refused(dns, 1 + (uint64_t)json_get_int(ev, "unreported", 0));
    /* the session's own count, in its record: netd's numbering of its sandbox's refusals, so
     * exact also when some were not reported one by one */
    redis_client_cmd(NULL, NULL, "HSET sp:session:{%s} net_refused %lld", s->id,
                     (long long)json_get_int(ev, "seq", 0));
}

void
session_network_start(void)
{
    netd_subscribe(on_event);
}

void
session_network_stop(void)
{
    netd_unsubscribe();
}

/* ---- GET /api/v1/sessions/{id}/network ---- */

typedef struct {
    jwt_claims_t claims;
    char id[64];
} net_req_t;

static void
on_route(void *ud, const route_t *r)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    net_req_t *q = h->ud;
    gw_session_t *s = http_rest_session(h, r, &q->claims, q->id, false);
    if (!s)
        return;
    json_object *o = json_object_new_object(), *info = NULL;
    json_set_str(o, "session", s->id);
    json_set(o, "policy", json_object_get(json_get(s->params, "network")));
    json_set_bool(o, "attached", s->net_attached);
    if (s->net_attached) {
        json_object *req = json_object_new_object();
        json_set_str(req, "op", "info");
        json_set_str(req, "id", s->sb.id);
        err_t err = {0};
        info = netd_request(req, -1, &err);
        json_object_put(req);
        if (!info) {
            json_object_put(o);
            http_rest_fail(h, err.code, "%s", err.msg);
            return;
        }
        static const char *const fields[] = {"address", "resolver", "counters", "refusals",
                                             "refusals_total"};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            if (json_get(info, fields[i]))
                json_set(o, fields[i], json_object_get(json_get(info, fields[i])));
        json_object_put(info);
    }
    size_t len;
    const char *t = json_text(o, &len);
    http_answer(h, 200, NULL, t, len);
    json_object_put(o);
}

void
http_session_network(http_req_t *h, const char *id)
{
    net_req_t *q = xcalloc(1, sizeof *q);
    h->ud = q;
    h->free_ud = free;
    snprintf(q->id, sizeof q->id, "%s", id);
    if (!http_rest_auth(h, &q->claims))
        return;
    route_resolve(id, on_route, (void *)(uintptr_t)h->id);
}
