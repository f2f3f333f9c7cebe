/* verdict.h — what a sandbox may reach: never the host (its own addresses, re-read every
 * second), another sandbox (the pool) or a private or reserved range the operator did not open,
 * nor the operator's deny-list; then its own policy (deny, egress, or the allow-list's CIDRs and
 * the addresses an allowed name resolved to for it). The verdicts the proxy, the resolver and
 * the handshake log ask, and the destinations nftables refuses at the handshake. */
#ifndef SP_NETD_VERDICT_H
#define SP_NETD_VERDICT_H

#include <netinet/in.h>
#include <stddef.h>

#include "err.h"
#include "sandboxes.h"

/* Once, at start (after sandboxes_init): the ranges, the host's addresses; refuses a pool that
 * holds one of them. */
int verdict_init(err_t *err);

/* The verdict on a TCP connection to dst (name: what the connection's first bytes named, ""
 * if nothing, NULL if not read yet). 1 allow, 0 refuse, -1 undecided (only for name NULL:
 * reading the first bytes would decide). why gets the rule either way. */
int verdict_tcp(netd_sb_t *sb, struct sockaddr_in dst, const char *name, char *why, size_t n);
/* The verdict on a DNS name: 1 allow, 0 refuse (why says the rule). */
int verdict_name(netd_sb_t *sb, const char *name, char *why, size_t n);

/* Refreshes the host's own addresses (what no sandbox may reach); when they changed, and
 * once verdict_push_hard was called, the handshake-level refusals follow. */
void verdict_refresh_local(void);
/* Gives nftables the destinations refused at the handshake (nft_rules_hard): the host's
 * addresses, the pool, the private ranges not opened, the operator's deny-list. */
void verdict_push_hard(void);

#endif
