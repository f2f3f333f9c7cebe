/* nflog.h — the connections refused at the handshake (nft_rules.h: a destination no policy
 * opens is redirected to a port nobody listens on) never reach the proxy; nftables logs each
 * one's first packet to netd's NFLOG group instead, and netd counts, logs and reports it as it
 * does the proxy's refusals. libmnl over NETLINK_NETFILTER. */
#ifndef SP_NETD_NFLOG_H
#define SP_NETD_NFLOG_H

#include "err.h"

/* Binds g_netd.log_group. */
int nflog_listen(err_t *err);

#endif
