/* net_policy.c — see net_policy.h. */
#include "net_policy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "xalloc.h"

static const char *const mode_names[] = {"none", "allowlist", "egress"};

const char *
net_mode_name(net_mode_t m)
{
    return m >= NET_NONE && m <= NET_EGRESS ? mode_names[m] : "?";
}

int
net_mode_parse(const char *s)
{
    for (int i = 0; s && i <= NET_EGRESS; i++)
        if (strcmp(s, mode_names[i]) == 0)
            return i;
    return -1;
}

int
net_cidr_parse(const char *s, net_cidr_t *c)
{
    char ip[16];
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : strlen(s);
    if (n == 0 || n >= sizeof ip)
        return -1;
    memcpy(ip, s, n);
    ip[n] = '\0';
    struct in_addr a;
    if (inet_pton(AF_INET, ip, &a) != 1)
        return -1;
    int bits = 32;
    if (slash) {
        char *end;
        long b = strtol(slash + 1, &end, 10);
        if (!slash[1] || *end || b < 0 || b > 32 || !isdigit((unsigned char)slash[1]))
            return -1;
        bits = (int)b;
    }
    c->bits = bits;
    c->mask = bits == 0 ? 0 : 0xffffffffu << (32 - bits);
    c->addr = ntohl(a.s_addr);
    if (c->addr & ~c->mask)
        return -1; /* host bits set: say what is meant */
    return 0;
}

bool
net_cidr_has(const net_cidr_t *c, struct in_addr a)
{
    return (ntohl(a.s_addr) & c->mask) == c->addr;
}

void
net_cidr_format(const net_cidr_t *c, char *out, size_t n)
{
    struct in_addr a = {.s_addr = htonl(c->addr)};
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a, ip, sizeof ip);
    snprintf(out, n, "%s/%d", ip, c->bits);
}

bool
net_domain_valid(const char *s)
{
    size_t len = strlen(s), label = 0;
    if (len == 0 || len > NET_DOMAIN_MAX)
        return false;
    for (size_t i = 0; i <= len; i++) {
        char ch = s[i];
        if (ch == '.' || ch == '\0') {
            if (label == 0 || label > 63)
                return false;
            label = 0;
        } else if (isalnum((unsigned char)ch) || ch == '-' || ch == '_') {
            label++;
        } else {
            return false;
        }
    }
    return true;
}

const net_cidr_t *
net_list_cidr(const net_list_t *l, struct in_addr a)
{
    for (int i = 0; i < l->ncidr; i++)
        if (net_cidr_has(&l->cidr[i], a))
            return &l->cidr[i];
    return NULL;
}

const char *
net_list_domain(const net_list_t *l, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < l->ndomain; i++) {
        const char *r = l->domain[i];
        if (r[0] == '*' && r[1] == '.') {
            size_t suffix = strlen(r + 1); /* ".example.com" */
            if (n > suffix && strcmp(name + n - suffix, r + 1) == 0)
                return r;
        } else if (strcmp(r, name) == 0) {
            return r;
        }
    }
    return NULL;
}

static int
list_add(net_list_t *l, const char *which, const char *s, err_t *err)
{
    if (l->ncidr + l->ndomain >= NET_RULES_MAX)
        return err_set(err, ERR_BAD_REQ, "network.%s: more than %d entries", which, NET_RULES_MAX);
    net_cidr_t c;
    if (strchr(s, ':'))
        return err_set(err, ERR_BAD_REQ,
                       "network.%s: \"%.64s\": sandboxes have IPv4 only (no IPv6 rules)", which, s);
    if (net_cidr_parse(s, &c) == 0) {
        l->cidr = xrealloc(l->cidr, (size_t)(l->ncidr + 1) * sizeof *l->cidr);
        l->cidr[l->ncidr++] = c;
        return 0;
    }
    char lower[NET_DOMAIN_MAX + 3];
    size_t n = strlen(s);
    if (n >= sizeof lower)
        return err_set(err, ERR_BAD_REQ, "network.%s: \"%.64s...\" is too long", which, s);
    for (size_t i = 0; i <= n; i++)
        lower[i] = (char)tolower((unsigned char)s[i]);
    if (n && lower[n - 1] == '.')
        lower[--n] = '\0';
    const char *host = lower[0] == '*' && lower[1] == '.' ? lower + 2 : lower;
    if (!net_domain_valid(host) || strchr(host, '*') ||
        isdigit((unsigned char)lower[n ? n - 1 : 0]))
        return err_set(err, ERR_BAD_REQ,
                       "network.%s: \"%.64s\" is neither an IPv4 address or CIDR (host bits "
                       "zero) nor a domain (\"example.com\", \"*.example.com\")",
                       which, s);
    l->domain = xrealloc(l->domain, (size_t)(l->ndomain + 1) * sizeof *l->domain);
    l->domain[l->ndomain++] = xstrdup(lower);
    return 0;
}

static int
list_parse(json_object *v, net_list_t *l, const char *which, err_t *err)
{
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_array))
        return err_set(err, ERR_BAD_REQ, "network.%s must be a list of domains and CIDRs", which);
    size_t n = json_object_array_length(v);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(v, i);
        if (!json_object_is_type(e, json_type_string))
            return err_set(err, ERR_BAD_REQ, "network.%s[%zu] must be a string", which, i);
        int r = list_add(l, which, json_object_get_string(e), err);
        if (r < 0)
            return r;
    }
    return 0;
}

int
net_policy_parse(json_object *v, net_mode_t def_mode, net_policy_t *p, err_t *err)
{
    memset(p, 0, sizeof *p);
    p->mode = def_mode;
    if (!v || json_object_is_type(v, json_type_null))
        return 0;
    if (json_object_is_type(v, json_type_boolean)) {
        p->mode = json_object_get_boolean(v) ? NET_EGRESS : NET_NONE;
        return 0;
    }
    if (json_object_is_type(v, json_type_string)) {
        int m = net_mode_parse(json_object_get_string(v));
        if (m < 0 || m == NET_ALLOWLIST)
            return err_set(err, ERR_BAD_REQ,
                           "network must be true, false, \"none\", \"egress\" or an object "
                           "{\"allow\": [...], \"deny\": [...]}");
        p->mode = (net_mode_t)m;
        return 0;
    }
    if (!json_object_is_type(v, json_type_object))
        return err_set(err, ERR_BAD_REQ, "network must be a boolean, a mode or an object");
    json_object_object_foreach(v, key, val)
    {
        (void)val;
        if (strcmp(key, "mode") && strcmp(key, "allow") && strcmp(key, "deny"))
            return err_set(err, ERR_BAD_REQ, "network: unknown field \"%.64s\" (mode, allow, deny)",
                           key);
    }
    json_object *mode = json_get(v, "mode"), *allow = json_get(v, "allow");
    int m = allow ? NET_ALLOWLIST : NET_EGRESS;
    if (mode && (!json_object_is_type(mode, json_type_string) ||
                 (m = net_mode_parse(json_object_get_string(mode))) < 0))
        return err_set(err, ERR_BAD_REQ,
                       "network.mode must be \"none\", \"allowlist\" or \"egress\"");
    p->mode = (net_mode_t)m;
    int e = list_parse(allow, &p->allow, "allow", err);
    if (e == 0)
        e = list_parse(json_get(v, "deny"), &p->deny, "deny", err);
    if (e == 0 && p->mode != NET_ALLOWLIST && (p->allow.ncidr || p->allow.ndomain))
        e = err_set(err, ERR_BAD_REQ, "network.allow is for the allowlist mode, not %s",
                    net_mode_name(p->mode));
    size_t text = 0; /* what netd is sent (and keeps): one message of its control socket */
    for (int i = 0; e == 0 && i < p->allow.ndomain; i++)
        text += strlen(p->allow.domain[i]) + 3;
    for (int i = 0; e == 0 && i < p->deny.ndomain; i++)
        text += strlen(p->deny.domain[i]) + 3;
    text += (size_t)(p->allow.ncidr + p->deny.ncidr) * 21;
    if (e == 0 && text > NET_POLICY_TEXT_MAX)
        e = err_set(err, ERR_BAD_REQ, "network: the lists take %zu bytes, more than %d", text,
                    NET_POLICY_TEXT_MAX);
    if (e == 0 && p->mode == NET_ALLOWLIST && !p->allow.ncidr && !p->allow.ndomain)
        e = err_set(err, ERR_BAD_REQ, "network: the allowlist mode needs a non-empty allow list");
    if (e < 0)
        net_policy_free(p);
    return e;
}

static json_object *
list_json(const net_list_t *l)
{
    json_object *a = json_object_new_array();
    for (int i = 0; i < l->ncidr; i++) {
        char s[32];
        net_cidr_format(&l->cidr[i], s, sizeof s);
        json_object_array_add(a, json_object_new_string(s));
    }
    for (int i = 0; i < l->ndomain; i++)
        json_object_array_add(a, json_object_new_string(l->domain[i]));
    return a;
}

json_object *
net_policy_to_json(const net_policy_t *p)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "mode", net_mode_name(p->mode));
    if (p->allow.ncidr || p->allow.ndomain)
        json_set(o, "allow", list_json(&p->allow));
    if (p->deny.ncidr || p->deny.ndomain)
        json_set(o, "deny", list_json(&p->deny));
    return o;
}

static void
list_free(net_list_t *l)
{
    for (int i = 0; i < l->ndomain; i++)
        free(l->domain[i]);
    free(l->domain);
    free(l->cidr);
    memset(l, 0, sizeof *l);
}

void
net_policy_free(net_policy_t *p)
{
    list_free(&p->allow);
    list_free(&p->deny);
}
