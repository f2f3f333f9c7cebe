/* net_policy.h — a sandbox's network policy: its mode and its allow- and deny-lists of domains
 * and IPv4 CIDRs, as a session asks for it (the "network" field of docs/api.md) and as netd
 * enforces it. Pure: parse, normalise, match. The gateway normalises what a client sent (and
 * checks it against the caller's role); netd parses the normalised form again (it trusts no
 * one) and matches destinations against it. */
#ifndef SP_NET_POLICY_H
#define SP_NET_POLICY_H

#include <json-c/json.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define NET_RULES_MAX 256 /* entries in one list */
/* The resolver every sandbox's resolv.conf names. netd answers any DNS packet a sandbox sends,
 * whatever its address: this one only has to route through the sandbox's link. */
#define NET_RESOLVER_INSIDE "169.254.53.53"
#define NET_DOMAIN_MAX      253
#define NET_POLICY_TEXT_MAX                                                                        \
    16384 /* the lists' text, all entries: bounded well below a control                            \
           * message of netd (64 KiB) */
#define NET_WIDEST_NAME "egress"

/* Ordered by how much they let out: a role allowed one mode may ask for the narrower ones. */
typedef enum { NET_NONE = 0, NET_ALLOWLIST = 1, NET_EGRESS = 2 } net_mode_t;

typedef struct {
    uint32_t addr; /* host byte order, already masked */
    uint32_t mask;
    int bits;
} net_cidr_t;

typedef struct {
    int ncidr, ndomain;
    net_cidr_t *cidr;
    char **domain; /* lower case; "*.example.com" or "example.com" */
} net_list_t;

typedef struct {
    net_mode_t mode;
    net_list_t allow, deny;
} net_policy_t;

/* The mode's name ("none", "allowlist", "egress"), and back (-1 if unknown). */
const char *net_mode_name(net_mode_t m);
int net_mode_parse(const char *s);

/* Reads a session's "network" value: absent or null gives def_mode with empty lists; true is
 * egress, false none; a mode's name; or {"mode"?, "allow"?: [...], "deny"?: [...]} (mode
 * defaults to allowlist when allow is given, else egress; allow only in the allowlist mode).
 * Entries are IPv4 addresses or CIDRs ("203.0.113.0/24") or domains ("pypi.org",
 * "*.pythonhosted.org"). 0, or -ERR_BAD_REQ with err saying which entry and why. */
int net_policy_parse(json_object *v, net_mode_t def_mode, net_policy_t *p, err_t *err);

/* The normalised form: {"mode", "allow": [...], "deny": [...]} (lists only when not empty). */
json_object *net_policy_to_json(const net_policy_t *p);
void net_policy_free(net_policy_t *p);

/* Parses "a.b.c.d" or "a.b.c.d/n" (the host bits must be zero). 0 or -1. */
int net_cidr_parse(const char *s, net_cidr_t *c);
bool net_cidr_has(const net_cidr_t *c, struct in_addr a);
/* The first CIDR of l holding a, or NULL. */
const net_cidr_t *net_list_cidr(const net_list_t *l, struct in_addr a);
/* The first domain rule of l matching name (lower case, no trailing dot), or NULL. A rule
 * "*.example.com" matches every name below example.com (not example.com itself); any other
 * rule only the same name. */
const char *net_list_domain(const net_list_t *l, const char *name);
/* Is s a host name a rule may hold (letters, digits, '-', '_', dots; labels 1..63)? */
bool net_domain_valid(const char *s);
/* "a.b.c.d/n" into out. */
void net_cidr_format(const net_cidr_t *c, char *out, size_t n);

#endif
