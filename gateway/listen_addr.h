/* listen_addr.h — the gateway's --listen HOST:PORT as the one address it binds, and the lws
 * settings that bind exactly that address.
 *
 * Why: lws 4.1.6 takes a vhost's iface as an interface name first, then as an address; on a
 * vhost with IPv6 on (its default) an IPv4 address lands in the wrong field of the IPv6 socket
 * address, which stays :: — the gateway told 127.0.0.1 listened on every address of both
 * families. So an IPv4 address gets a vhost with IPv6 off, an IPv6 one IPV6_V6ONLY set ([::] is
 * every IPv6 address and no IPv4 one), and the bound socket is checked after the fact. */
#ifndef SP_LISTEN_ADDR_H
#define SP_LISTEN_ADDR_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct {
    int family;                  /* AF_INET or AF_INET6 */
    char addr[INET6_ADDRSTRLEN]; /* numeric, without brackets: what lws binds (info.iface) */
    int port;
} listen_addr_t;

/* Parses HOST:PORT: an IPv4 address, [IPv6] (or a bare IPv6 address: the last ':' starts the
 * port), or a name resolved now to its first address. 0, or -ERR_BAD_REQ with err (no port, a
 * port outside 1..65535, no host, a name that does not resolve). */
int listen_addr_parse(const char *arg, listen_addr_t *out, err_t *err);
/* The LWS_SERVER_OPTION_* bits a vhost listening on a needs. */
uint64_t listen_addr_lws_options(const listen_addr_t *a);
/* Once the vhost exists: finds this process's listening TCP socket on a->port and writes its
 * address ("127.0.0.1:8081", "[::1]:8081") into bound. 0 when it is exactly a (the family, the
 * address, and for IPv6 only IPv6), else -ERR_BAD_REQ with err saying what is bound instead. */
int listen_addr_verify(const listen_addr_t *a, char *bound, size_t cap, err_t *err);

#endif
