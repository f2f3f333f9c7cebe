/* proxy.h — the sandboxes' TCP: every connection a sandbox opens arrives here (nft_rules.h
 * redirects it), its original destination read with SO_ORIGINAL_DST. The policy decides
 * (sandboxes_verdict), after reading the first bytes where a name would decide (TLS SNI, HTTP
 * Host: sniff.h); then netd connects to the destination itself, from the host, and relays both
 * ways (64 KiB a direction, backpressure by not reading). A refused connection is reset and
 * counted, logged and reported. Caps: --max-conns open connections per sandbox, --bandwidth
 * bytes a second per sandbox each way (token buckets, refilled by proxy_tick). */
#ifndef SP_NETD_PROXY_H
#define SP_NETD_PROXY_H

#include "err.h"

struct netd_sb;

/* Listens on g_netd.proxy_port (0: any; set to the port taken). */
int proxy_listen(err_t *err);
void proxy_tick(void);
/* Ends every connection of sb. */
void proxy_forget(struct netd_sb *sb);

#endif
