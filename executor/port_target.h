/* port_target.h — the addresses port.connect tries for a port, in order: 127.0.0.1, ::1, then
 * each concrete address the listen table shows for the port (a server bound to its eth0 address
 * only) that is the sandbox's own. A listener bound to an address that is not (IP_FREEBIND lets
 * any process do it) is passed over: a tunnel never leads out of the sandbox. */
#ifndef SP_PORT_TARGET_H
#define SP_PORT_TARGET_H

#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define PORT_TARGETS_MAX 18 /* the two loopback addresses and 16 of the table */

typedef struct {
    struct sockaddr_storage sa;
    socklen_t len;
    char text[INET6_ADDRSTRLEN]; /* the address as the "connected" event shows it */
} port_target_t;

/* 127.0.0.1 and ::1 on port into out[0..2); returns 2. */
size_t port_targets_loopback(uint16_t port, port_target_t out[2]);

/* The sandbox's own concrete addresses listening on port (loopback and wildcards left out: the
 * loopback targets reach them), at most cap, into out; returns how many. Reads the listeners
 * (port_scan) and the interfaces' addresses. */
size_t port_targets_from_table(uint16_t port, port_target_t *out, size_t cap);

#endif
