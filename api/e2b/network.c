/* network.c — E2B's egress rules on sandpipe's network policy (docs/api.md "Network"), both
 * ways, and PUT /sandboxes/{id}/network (updateNetwork: the gateway's session.set_network).
 *
 * E2B's rules: allowOut (destinations let through whatever denyOut says), denyOut (refused;
 * "0.0.0.0/0" is everything), allow_internet_access (false: as denyOut ["0.0.0.0/0"]). sandpipe's
 * modes: none, egress less a deny-list, allowlist (only what allow names, less deny). So an
 * allowOut is an allow-list (a "0.0.0.0/0" in denyOut is what that means anyway); a denyOut of
 * everything is none; another denyOut egress with that deny-list; allow_internet_access alone
 * egress or none. See e2b.h. */
#include <stdio.h>
#include <string.h>

#include "e2b.h"
#include "json_util.h"

#define ALL_TRAFFIC "0.0.0.0/0" /* E2B's name for every destination */

/* Field f of o as a list of strings: NULL when absent or null; -1 with e when not a list of
 * strings. */
static int
string_list(json_object *o, const char *f, json_object **out, api_err_t *e)
{
    json_object *v = json_get(o, f);
    *out = NULL;
    if (!v || json_object_is_type(v, json_type_null))
        return 0;
    if (!json_object_is_type(v, json_type_array))
        return api_err_set(e, ERR_BAD_REQ, "network %s must be a list of strings", f);
    for (size_t i = 0; i < json_object_array_length(v); i++)
        if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
            return api_err_set(e, ERR_BAD_REQ, "network %s must be a list of strings", f);
    *out = v;
    return 0;
}

static bool
holds_all(json_object *list)
{
    for (size_t i = 0; list && i < json_object_array_length(list); i++)
        if (!strcmp(json_object_get_string(json_object_array_get_idx(list, i)), ALL_TRAFFIC))
            return true;
    return false;
}

/* list less "0.0.0.0/0" (new ref). */
static json_object *
without_all(json_object *list)
{
    json_object *o = json_object_new_array();
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *v = json_object_array_get_idx(list, i);
        if (strcmp(json_object_get_string(v), ALL_TRAFFIC) != 0)
            json_object_array_add(o, json_object_get(v));
    }
    return o;
}

int
e2b_network_policy(json_object *rules, json_object *internet, bool update, json_object **out,
                   api_err_t *e)
{
    *out = NULL;
    json_object *allow, *deny;
    if (rules && !json_object_is_type(rules, json_type_object) &&
        !json_object_is_type(rules, json_type_null))
        return api_err_set(e, ERR_BAD_REQ, "network must be an object");
    if (internet && !json_object_is_type(internet, json_type_boolean) &&
        !json_object_is_type(internet, json_type_null))
        return api_err_set(e, ERR_BAD_REQ, "allow_internet_access must be true or false");
    if (string_list(rules, "allowOut", &allow, e) < 0 ||
        string_list(rules, "denyOut", &deny, e) < 0)
        return -e->code;
    /* what sandpipe cannot do is refused, not dropped: a caller counting on it would be fooled */
    json_object *transforms = json_get(rules, "rules");
    if (transforms && !json_object_is_type(transforms, json_type_null) &&
        !(json_object_is_type(transforms, json_type_object) &&
          json_object_object_length(transforms) == 0))
        return api_err_set(e, ERR_NOT_IMPLEMENTED,
                           "network rules (header transforms on egress requests) are not "
                           "supported by sandpipe: name the hosts in allowOut");
    json_object *proxy = json_get(rules, "egressProxy");
    if (proxy && !json_object_is_type(proxy, json_type_null))
        return api_err_set(e, ERR_NOT_IMPLEMENTED,
                           "network egressProxy is not supported by sandpipe: a sandbox's traffic "
                           "goes out through its host's network service");
    json_object *p = json_object_new_object();
    if (allow && json_object_array_length(allow) > 0) {
        json_set_str(p, "mode", "allowlist");
        json_set(p, "allow", json_object_get(allow));
        json_set(p, "deny", without_all(deny));
    } else if (deny && json_object_array_length(deny) > 0) {
        json_set_str(p, "mode", holds_all(deny) ? "none" : "egress");
        if (!holds_all(deny))
            json_set(p, "deny", json_object_get(deny));
    } else if (internet && json_object_is_type(internet, json_type_boolean)) {
        json_set_str(p, "mode", json_object_get_boolean(internet) ? "egress" : "none");
    } else if (update) {
        json_set_str(p, "mode", "egress"); /* an update replaces every rule: none left */
    } else {
        json_object_put(p); /* nothing asked: the operator's default */
        return 0;
    }
    *out = p;
    return 0;
}

void
e2b_network_describe(json_object *policy, json_object *detail)
{
    const char *mode = json_get_str(policy, "mode", "none");
    json_object *allow = json_get(policy, "allow"), *deny = json_get(policy, "deny");
    json_object *net = json_object_new_object(), *out = json_object_new_array(),
                *in = json_object_new_array();
    for (size_t i = 0; allow && i < json_object_array_length(allow); i++)
        json_object_array_add(out, json_object_get(json_object_array_get_idx(allow, i)));
    if (strcmp(mode, "egress") != 0) /* none and allowlist refuse what they do not name */
        json_object_array_add(in, json_object_new_string(ALL_TRAFFIC));
    for (size_t i = 0; deny && i < json_object_array_length(deny); i++)
        json_object_array_add(in, json_object_get(json_object_array_get_idx(deny, i)));
    json_set(net, "allowOut", out);
    json_set(net, "denyOut", in);
    json_set_bool(detail, "allowInternetAccess", !strcmp(mode, "egress"));
    json_set(detail, "network", net);
}

void
api_e2b_update_network(api_req_t *r, char **params)
{
    if (e2b_auth(r, true) < 0)
        return;
    json_object *body = r->body_len ? api_body_object(r) : json_object_new_object(), *policy;
    if (!body)
        return;
    api_err_t e;
    int rc = e2b_network_policy(body, json_get(body, "allow_internet_access"), true, &policy, &e);
    json_object_put(body);
    if (rc < 0) {
        api_fail(r, &e);
        return;
    }
    json_object *req = json_object_new_object();
    json_set(req, "network", policy);
    json_object *res = e2b_gateway_op(r, params[0], "session.set_network", req, NULL);
    if (!res)
        return;
    json_object_put(res);
    api_reply_raw(r, 204, "application/json", "", 0);
}
