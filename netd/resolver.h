/* resolver.h — the sandboxes' DNS. Every query a sandbox sends (UDP or TCP, port 53, to any
 * address) is redirected here. A name the policy refuses is answered REFUSED, counted, logged
 * and reported, and never leaves the host; AAAA is answered empty (sandboxes have IPv4 only);
 * anything else is forwarded to the operator's resolvers (--resolver, over UDP, a fresh id per
 * query, the next resolver after 2 s) and the answer, checked to answer that very question, is
 * passed back. Its A records pin those addresses for the sandbox (sandboxes_pin): in the
 * allowlist mode only such addresses (and allowed CIDRs) can be connected to. A truncated
 * answer is passed back as it is. Bounded: 64 queries in flight per sandbox, 8192 in all. */
#ifndef SP_NETD_RESOLVER_H
#define SP_NETD_RESOLVER_H

#include "err.h"

struct netd_sb;

/* Listens on g_netd.dns_port, UDP and TCP (0: a free port for both; set to it). */
int resolver_listen(err_t *err);
void resolver_tick(void);
void resolver_forget(struct netd_sb *sb);

#endif
