/* nft_rules.h — the host's side of the boundary, in one nftables table of netd's own (inet
 * family, libnftables): from an interface <ifprefix>*, IPv6 and anything but TCP and UDP are
 * dropped, a source address other than the one netd gave that interface is dropped (bound set),
 * DNS (UDP and TCP port 53, to any address) is redirected to netd's resolver, a TCP connection
 * to a destination no policy opens to a port nobody listens on (refused at the handshake), and
 * every other TCP connection to its proxy; the input hook admits only those redirected packets, and
 * nothing of a sandbox is forwarded either way. The table is made anew at netd's start (the bound
 * set is then refilled from the restored sandboxes) and removed at its stop. */
#ifndef SP_NFT_RULES_H
#define SP_NFT_RULES_H

#include <netinet/in.h>

#include "err.h"
#include "net_policy.h"

int nft_rules_setup(err_t *err);
void nft_rules_teardown(void);
/* netd stops while sandboxes keep their links: what they send is dropped instead of redirected
 * to ports netd no longer holds (which any process could take). The next start makes the rules
 * anew. */
void nft_rules_park(void);
/* Replaces the set of destinations refused at the handshake (hard: redirected to a port
 * nobody listens on, so the sandbox sees "connection refused"): the host's addresses, the
 * pool, the private ranges the operator did not open, the operator's deny-list. The proxy
 * refuses them too. */
int nft_rules_hard(const net_cidr_t *cidrs, int n, err_t *err);
int nft_rules_bind(const char *ifname, struct in_addr addr, err_t *err);
void nft_rules_unbind(const char *ifname, struct in_addr addr);

#endif
