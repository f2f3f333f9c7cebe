/* port_tunnel.h — port.connect: a TCP connection to a port listening in the sandbox, its bytes
 * relayed as the channel's DATA both ways (what the gateway's preview proxy rides on).
 *
 * The executor lives in the sandbox's network namespace, so the connection is made there: to
 * 127.0.0.1, then ::1, then each concrete address the listen table shows for the port (a server
 * bound to its eth0 address only). Flow control end to end: the socket is not read while the
 * channel has no credit (a slow client slows the app), and the client's DATA is granted back
 * only as it is written to the socket (a slow app slows the client). Each tunnel owns its socket
 * and its pending bytes; it is freed when its channel closes. */
#ifndef SP_PORT_TUNNEL_H
#define SP_PORT_TUNNEL_H

#include <json-c/json.h>

#include "conn.h"

#define PORT_TUNNELS_MAX        256  /* open at once in one executor; one more is busy */
#define PORT_CONNECT_TIMEOUT_MS 5000 /* from OPEN to a connection on one of the addresses */

/* {"op":"port.connect","port":N} (docs/protocol.md, "Ports"). */
void port_op_connect(channel_t *ch, json_object *req);

#endif
