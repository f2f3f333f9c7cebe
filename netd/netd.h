/* netd.h — sandpipe-netd's configuration and the few facts its modules share.
 *
 * netd runs once per host, as root, in the host's network namespace. A gateway hands it a
 * sandbox's network namespace (an fd, over the control socket) and the sandbox's policy; netd
 * puts a veth pair into that namespace (veth.h) and from then on everything the sandbox sends
 * arrives on the host end of that pair, where the host's nftables rules (nft_rules.h) let
 * through exactly two things, both redirected to netd itself: DNS (resolver.h) and TCP
 * (proxy.h). Nothing of a sandbox is ever routed or forwarded: netd opens each outside
 * connection itself, from the host, after the policy (sandboxes.h) said yes to it. */
#ifndef SP_NETD_H
#define SP_NETD_H

#include <netinet/in.h>
#include <stdint.h>

#include "net_policy.h"

#define NETD_RESOLVERS_MAX 4

typedef struct {
    const char *state_dir;    /* one file per attached sandbox (restored after a restart) */
    const char *control_path; /* the gateways' unix socket */
    const char *table;        /* nftables table name (inet family) */
    const char *ifprefix;     /* host ends are <ifprefix><index> */
    net_cidr_t pool;          /* sandboxes' addresses: a /30 each, index 0 unused */
    struct sockaddr_in resolvers[NETD_RESOLVERS_MAX];
    int nresolvers;
    net_list_t deny;          /* the operator's deny-list, on top of the built-in ranges */
    net_list_t allow_private; /* built-in denied ranges the operator opens */
    int max_conns;            /* open TCP connections per sandbox */
    int max_total_conns;      /* and of all sandboxes (two fds each: from RLIMIT_NOFILE) */
    int64_t bandwidth;        /* bytes per second per sandbox, each way; 0 = unlimited */
    uint16_t proxy_port, dns_port;
    uint16_t closed_port; /* bound, never listening: a SYN redirected there is refused */
    uint16_t log_group;   /* NFLOG group of the handshake-level refusals (nflog.h) */
} netd_cfg_t;

extern netd_cfg_t g_netd;

struct netd_sb;
/* A sandbox is being detached: whatever refers to it (connections, pending queries) lets go. */
void netd_sandbox_gone(struct netd_sb *sb);

double netd_now(void); /* monotonic seconds */
double netd_wall(void);

#endif
