/* nft_rules.c — see nft_rules.h. */
#include "nft_rules.h"

#include <arpa/inet.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netd.h"

static struct nft_ctx *nft;

static int
run(const char *cmd, err_t *err)
{
    if (!nft) {
        nft = nft_ctx_new(NFT_CTX_DEFAULT);
        if (!nft)
            return err_set(err, ENOMEM, "nftables: no context");
        nft_ctx_buffer_error(nft);
        nft_ctx_buffer_output(nft);
    }
    if (nft_run_cmd_from_buffer(nft, cmd) != 0) {
        const char *e = nft_ctx_get_error_buffer(nft);
        return err_set(err, EINVAL, "nftables: %.200s", e && e[0] ? e : "failed");
    }
    return 0;
}

int
nft_rules_setup(err_t *err)
{
    const char *t = g_netd.table, *p = g_netd.ifprefix;
    unsigned dns = g_netd.dns_port, proxy = g_netd.proxy_port, closed = g_netd.closed_port;
    char cmd[4096];
    snprintf(
        cmd, sizeof cmd,
        "table inet %s\n"
        "delete table inet %s\n"
        "table inet %s {\n"
        "  set bound { type ifname . ipv4_addr; }\n"
        "  set hard { type ipv4_addr; flags interval; auto-merge; }\n"
        /* before conntrack and NAT: what may enter at all */
        "  chain guard {\n"
        "    type filter hook prerouting priority -300; policy accept;\n"
        "    iifname \"%s*\" meta nfproto ipv6 drop\n"
        "    iifname \"%s*\" meta l4proto != { tcp, udp } drop\n"
        "    iifname \"%s*\" iifname . ip saddr != @bound drop\n"
        "  }\n"
        "  chain divert {\n"
        "    type nat hook prerouting priority dstnat; policy accept;\n"
        "    iifname \"%s*\" udp dport 53 redirect to :%u\n"
        "    iifname \"%s*\" tcp dport 53 redirect to :%u\n"
        /* what no policy opens is refused at the handshake: a port nobody listens on */
        /* (logged at most 1000 a second for the whole host: a flood is refused all the same) */
        "    iifname \"%s*\" ip daddr @hard meta l4proto tcp limit rate 1000/second burst 200 "
        "packets log group %u\n"
        "    iifname \"%s*\" ip daddr @hard meta l4proto tcp redirect to :%u\n"
        "    iifname \"%s*\" meta l4proto tcp redirect to :%u\n"
        "  }\n"
        "  chain input {\n"
        "    type filter hook input priority filter - 10; policy accept;\n"
        "    iifname \"%s*\" ct status dnat udp dport %u accept\n"
        "    iifname \"%s*\" ct status dnat tcp dport { %u, %u, %u } accept\n"
        "    iifname \"%s*\" drop\n"
        /* netd's ports are the sandboxes' only: nothing else reaches them directly */
        "    tcp dport { %u, %u, %u } ct state new drop\n"
        "    udp dport %u drop\n"
        "  }\n"
        "  chain forward {\n"
        "    type filter hook forward priority filter - 10; policy accept;\n"
        "    iifname \"%s*\" drop\n"
        "    oifname \"%s*\" drop\n"
        "  }\n"
        "}\n",
        t, t, t, p, p, p, p, dns, p, dns, p, (unsigned)g_netd.log_group, p, closed, p, proxy, p,
        dns, p, dns, proxy, closed, p, dns, proxy, closed, dns, p, p);
    return run(cmd, err);
}

void
nft_rules_park(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "flush chain inet %s divert\nadd rule inet %s divert iifname \"%s*\" drop\n",
             g_netd.table, g_netd.table, g_netd.ifprefix);
    run(cmd, NULL);
}

void
nft_rules_teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "delete table inet %s\n", g_netd.table);
    run(cmd, NULL);
    if (nft) {
        nft_ctx_free(nft);
        nft = NULL;
    }
}

int
nft_rules_bind(const char *ifname, struct in_addr addr, err_t *err)
{
    char ip[INET_ADDRSTRLEN], cmd[256];
    inet_ntop(AF_INET, &addr, ip, sizeof ip);
    snprintf(cmd, sizeof cmd, "add element inet %s bound { \"%s\" . %s }\n", g_netd.table, ifname,
             ip);
    return run(cmd, err);
}

void
nft_rules_unbind(const char *ifname, struct in_addr addr)
{
    char ip[INET_ADDRSTRLEN], cmd[256];
    inet_ntop(AF_INET, &addr, ip, sizeof ip);
    snprintf(cmd, sizeof cmd, "delete element inet %s bound { \"%s\" . %s }\n", g_netd.table,
             ifname, ip);
    run(cmd, NULL);
}

int
nft_rules_hard(const net_cidr_t *cidrs, int n, err_t *err)
{
    size_t cap = 256 + (size_t)n * 24, len = 0;
    char *cmd = malloc(cap);
    if (!cmd)
        abort();
    len += (size_t)snprintf(cmd, cap, "flush set inet %s hard\n", g_netd.table);
    if (n > 0) {
        len += (size_t)snprintf(cmd + len, cap - len, "add element inet %s hard { ", g_netd.table);
        for (int i = 0; i < n; i++) {
            char c[32];
            net_cidr_format(&cidrs[i], c, sizeof c);
            len += (size_t)snprintf(cmd + len, cap - len, "%s%s", i ? ", " : "", c);
        }
        snprintf(cmd + len, cap - len, " }\n");
    }
    int e = run(cmd, err);
    free(cmd);
    return e;
}
