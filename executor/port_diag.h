/* port_diag.h — the listening TCP sockets as the kernel's sock_diag answers them (netlink,
 * NETLINK_SOCK_DIAG, inet_diag asked for TCP_LISTEN only).
 *
 * Why not /proc/net/tcp: reading it walks the host's whole established-socket hash (shared by
 * every network namespace, 262,144 buckets on a 24 GiB host) to print the namespace's few
 * sockets, ~4.5 ms per family here, and the port watch reads both every second. A LISTEN-only
 * dump walks the listening hash alone: ~0.05 ms. port_scan.c falls back to /proc where netlink
 * is refused.
 *
 * port_diag_parse is pure (bytes in, entries out), so it is unit-tested and fuzzed; port_diag_scan
 * does the I/O: one socket, one request, the dump read to its end, blocking (the kernel answers
 * at once: nothing here waits on another process). */
#ifndef SP_PORT_DIAG_H
#define SP_PORT_DIAG_H

#include <stddef.h>

#include "port_table.h"

/* Appends the listening sockets of family (AF_INET or AF_INET6) among the netlink messages in
 * msgs[0..len) to t. Returns 1 once the dump's end (NLMSG_DONE) was among them, 0 when more
 * are to come, -errno for an NLMSG_ERROR or a message that does not fit in len (the rest is then
 * not read). Messages of another type, family or state are passed over. */
int port_diag_parse(port_table_t *t, const void *msgs, size_t len, int family);

/* Appends family's listening TCP sockets (no owners) to t. 0, or -errno when the kernel cannot
 * be asked (no sock_diag, a filter refusing netlink): the caller reads /proc instead. */
int port_diag_scan(port_table_t *t, int family);

#endif
