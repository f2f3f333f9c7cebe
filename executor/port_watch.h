/* port_watch.h — port.watch: the ports listening in the sandbox, then each listener that opens
 * or closes, per (port, address).
 *
 * No kernel notification exists for a socket starting to listen, so the table is polled: every
 * PORT_WATCH_FAST_MS, every PORT_WATCH_SLOW_MS after PORT_WATCH_QUIET_POLLS polls without a
 * change, fast again at the next change or a new watch. One timer serves every watch, and runs
 * only while one is open. Each watch remembers what its client was told: a client that does not
 * read (its connection holds PORT_WATCH_BACKLOG_MAX queued bytes) is skipped, and gets the net
 * change once it reads again: nothing piles up, nothing is lost. */
#ifndef SP_PORT_WATCH_H
#define SP_PORT_WATCH_H

#include <json-c/json.h>

#include "conn.h"

#define PORT_WATCH_FAST_MS     1000
#define PORT_WATCH_SLOW_MS     5000
#define PORT_WATCH_QUIET_POLLS 60
#define PORT_WATCH_BACKLOG_MAX (1u << 20)

/* {"op":"port.watch"} (docs/protocol.md, "Ports"). */
void port_op_watch(channel_t *ch, json_object *req);

#endif
