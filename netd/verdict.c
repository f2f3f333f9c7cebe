/* verdict.c — see verdict.h. */
#include "verdict.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netd.h"
#include "nft_rules.h"
#include "xalloc.h"

/* Never reachable unless the operator opens one (--allow-private); the host's own addresses
 * and the sandboxes' pool are never reachable at all. */
static const char *const private_ranges[] = {
    "0.0.0.0/8",      "10.0.0.0/8",    "100.64.0.0/10", "127.0.0.0/8",
    "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",  "192.168.0.0/16",
    "198.18.0.0/15",  "224.0.0.0/4",   "240.0.0.0/4",
};
#define NPRIVATE (sizeof private_ranges / sizeof private_ranges[0])

static net_cidr_t private_cidr[NPRIVATE];
static struct in_addr *local;
static int nlocal;

/* Does c overlap any CIDR of l? */
static bool
overlaps(const net_cidr_t *c, const net_list_t *l)
{
    for (int i = 0; i < l->ncidr; i++) {
        uint32_t m = c->mask & l->cidr[i].mask;
        if ((c->addr & m) == (l->cidr[i].addr & m))
            return true;
    }
    return false;
}

static bool hard_pushed;

void
verdict_push_hard(void)
{
    hard_pushed = true;
    int cap = nlocal + (int)NPRIVATE + g_netd.deny.ncidr + 2, n = 0;
    net_cidr_t *h = xcalloc((size_t)cap, sizeof *h);
    for (int i = 0; i < nlocal; i++, n++) {
        h[n].addr = ntohl(local[i].s_addr);
        h[n].mask = 0xffffffffu;
        h[n].bits = 32;
    }
    h[n++] = g_netd.pool;
    for (size_t i = 0; i < NPRIVATE; i++)
        if (!overlaps(&private_cidr[i], &g_netd.allow_private))
            h[n++] = private_cidr[i];
    for (int i = 0; i < g_netd.deny.ncidr; i++)
        h[n++] = g_netd.deny.cidr[i];
    err_t err = {0};
    if (nft_rules_hard(h, n, &err) < 0)
        fprintf(stderr, "netd: %s\n", err.msg);
    free(h);
}

void
verdict_refresh_local(void)
{
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) < 0)
        return;
    int n = 0;
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
        n += i->ifa_addr && i->ifa_addr->sa_family == AF_INET;
    struct in_addr *now = xcalloc((size_t)n + 1, sizeof *now);
    int k = 0;
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && k < n)
            now[k++] = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
    freeifaddrs(ifa);
    bool changed = k != nlocal || memcmp(now, local, (size_t)k * sizeof *now) != 0;
    free(local);
    local = now;
    nlocal = k;
    if (hard_pushed && changed)
        verdict_push_hard();
}

static bool
is_local(struct in_addr a)
{
    for (int i = 0; i < nlocal; i++)
        if (local[i].s_addr == a.s_addr)
            return true;
    return false;
}

/* An address of the host's in the pool (but on a sandbox's host end, restored) would be
 * shadowed by the sandboxes' routes: refused at start, with the interface that has it. */
static int
check_pool_free(err_t *err)
{
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) < 0)
        return 0;
    int e = 0;
    size_t plen = strlen(g_netd.ifprefix);
    for (struct ifaddrs *i = ifa; i && e == 0; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
            strncmp(i->ifa_name, g_netd.ifprefix, plen) == 0)
            continue;
        struct in_addr a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
        if (net_cidr_has(&g_netd.pool, a)) {
            char pool[32], ip[INET_ADDRSTRLEN];
            net_cidr_format(&g_netd.pool, pool, sizeof pool);
            inet_ntop(AF_INET, &a, ip, sizeof ip);
            e = err_set(err, EADDRINUSE,
                        "--pool %s holds %s, an address of %s: choose a range this host does not "
                        "use",
                        pool, ip, i->ifa_name);
        }
    }
    freeifaddrs(ifa);
    return e;
}

int
verdict_init(err_t *err)
{
    for (size_t i = 0; i < NPRIVATE; i++)
        net_cidr_parse(private_ranges[i], &private_cidr[i]);
    verdict_refresh_local();
    return check_pool_free(err);
}

static const sb_pin_t *
pinned(const netd_sb_t *sb, struct in_addr a)
{
    double now = netd_now();
    for (int i = 0; i < sb->npins; i++)
        if (sb->pins[i].addr.s_addr == a.s_addr && sb->pins[i].until > now)
            return &sb->pins[i];
    return NULL;
}

/* What no policy opens: the host, other sandboxes, and the private ranges (unless the operator
 * opened one), the operator's deny-list. 0 and why, or 1. */
static int
hard_limits(struct in_addr a, char *why, size_t n)
{
    char c[32];
    uint32_t top = ntohl(a.s_addr) >> 24;
    if (is_local(a) || top == 127 || top == 0) { /* 0.0.0.0 is the host's loopback too */
        snprintf(why, n, "the host itself");
        return 0;
    }
    if (net_cidr_has(&g_netd.pool, a)) { /* each /30: .1 the host's end, .2 a sandbox */
        snprintf(why, n, (ntohl(a.s_addr) & 3) == 1 ? "the host itself" : "another sandbox");
        return 0;
    }
    const net_cidr_t *d = net_list_cidr(&g_netd.deny, a);
    if (d) {
        net_cidr_format(d, c, sizeof c);
        snprintf(why, n, "the operator's deny-list (%s)", c);
        return 0;
    }
    for (size_t i = 0; i < NPRIVATE; i++)
        if (net_cidr_has(&private_cidr[i], a) && !net_list_cidr(&g_netd.allow_private, a)) {
            snprintf(why, n, "a private or reserved range (%s)", private_ranges[i]);
            return 0;
        }
    return 1;
}

int
verdict_name(netd_sb_t *sb, const char *name, char *why, size_t n)
{
    const char *r = net_list_domain(&sb->policy.deny, name);
    if (r) {
        snprintf(why, n, "deny %s", r);
        return 0;
    }
    if (sb->policy.mode == NET_EGRESS) {
        snprintf(why, n, "egress");
        return 1;
    }
    r = net_list_domain(&sb->policy.allow, name);
    if (!r) {
        snprintf(why, n, "not in the allow-list");
        return 0;
    }
    snprintf(why, n, "allow %s", r);
    return 1;
}

int
verdict_tcp(netd_sb_t *sb, struct sockaddr_in dst, const char *name, char *why, size_t n)
{
    char c[32];
    if (!hard_limits(dst.sin_addr, why, n))
        return 0;
    const net_cidr_t *d = net_list_cidr(&sb->policy.deny, dst.sin_addr);
    if (d) {
        net_cidr_format(d, c, sizeof c);
        snprintf(why, n, "deny %s", c);
        return 0;
    }
    bool names_denied = sb->policy.deny.ndomain > 0;
    if (name && name[0] && net_list_domain(&sb->policy.deny, name)) {
        snprintf(why, n, "deny %s", net_list_domain(&sb->policy.deny, name));
        return 0;
    }
    if (sb->policy.mode == NET_EGRESS) {
        if (!name && names_denied)
            return -1; /* the name it carries may be a denied one */
        snprintf(why, n, "egress");
        return 1;
    }
    d = net_list_cidr(&sb->policy.allow, dst.sin_addr);
    if (d) {
        net_cidr_format(d, c, sizeof c);
        snprintf(why, n, "allow %s", c);
        return 1;
    }
    const sb_pin_t *pin = pinned(sb, dst.sin_addr);
    if (!pin) {
        snprintf(why, n, "not in the allow-list (no allowed name resolved to this address)");
        return 0;
    }
    if (!name)
        return -1;
    if (!name[0]) { /* a protocol that names nothing: the resolver's answer decides */
        snprintf(why, n, "resolved from %s", pin->name);
        return 1;
    }
    const char *r = net_list_domain(&sb->policy.allow, name);
    if (!r) {
        snprintf(why, n, "%s is not in the allow-list", name);
        return 0;
    }
    snprintf(why, n, "allow %s", r);
    return 1;
}
