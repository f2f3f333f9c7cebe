/* port_scan.h — the TCP ports listening in the sandbox now, and the port.list op.
 *
 * The executor lives in the sandbox's network namespace, so what sock_diag answers it
 * (port_diag.h), or else its /proc/net/tcp and tcp6, are the sandbox's sockets. The process holding
 * a socket is found by its inode in the /proc/PID/fd links the executor may read (all of them as
 * root, its own user's otherwise): best effort, a socket whose holder it cannot see has no pid.
 * Blocking reads of /proc only: nothing here waits. */
#ifndef SP_PORT_SCAN_H
#define SP_PORT_SCAN_H

#include <json-c/json.h>

#include "conn.h"
#include "err.h"
#include "port_table.h"

#define PORT_LIST_MAX    512 /* entries in one list: a reply stays far below max_frame */
#define PORT_COMMAND_MAX 200 /* bytes of a command line shown (UTF-8, cut between characters) */

/* Fills t (empty) with the listening sockets, sorted and unique (port_table_sort), without
 * owners. 0, or -errno when /proc/net/tcp cannot be read (tcp6 missing is no error: a kernel
 * without IPv6). */
int port_scan(port_table_t *t);

/* Sets pid and command of the n sockets at socks[] (pointers into a table) whose holder is
 * visible; the others keep pid 0. One pass over /proc. */
void port_scan_owners(port_sock_t **socks, size_t n);

/* port_scan, then port_scan_owners of the entries a list shows (the first PORT_LIST_MAX).
 * 0, or -ERR_INTERNAL with err. */
int port_scan_listed(port_table_t *t, err_t *err);

/* {"port","address","family":"ipv4"|"ipv6","pid":N|null,"command":"…"|null} */
json_object *port_sock_json(const port_sock_t *s);

/* Sets "ports" in obj: t's first PORT_LIST_MAX entries as port_sock_json, and when there are
 * more, "truncated":true and "total":N. */
void port_table_to_json(const port_table_t *t, json_object *obj);

/* {"op":"port.list"} -> {"ports":[...]} (docs/protocol.md, "Ports"). */
void port_op_list(channel_t *ch, json_object *req);

#endif
