/* terminal.h — raw PTY channels for xterm.js: a login shell (or argv) on its own PTY, bytes
 * both ways as DATA, {"resize":{"cols","rows"}} as JSON. Backpressure as ttyd does it: when
 * the client has no credit the PTY is not read; reading resumes on CREDIT. The client's CLOSE
 * hangs the terminal up (SIGHUP to its process group).
 *
 * A terminal OPENed with an "id" outlives its connection: when the connection goes away (its
 * gateway died or restarts) the shell goes on, its output kept in a ring of the last
 * TERMINAL_KEEP bytes by offset (the oldest giving way: the client is told of the gap), for
 * "grace" seconds; terminal.attach takes it back on a new connection from an offset. The
 * ring always holds what the gateway's credit allows past what its client consumed, so a
 * gateway killed at any point loses nothing the ring still covers. */
#ifndef SP_TERMINAL_H
#define SP_TERMINAL_H

#include <json-c/json.h>

#include "conn.h"

#define TERMINAL_ID_MAX 32
#define TERMINAL_KEEP   (1024 * 1024) /* output kept per terminal, by offset */

void terminal_op_open(channel_t *ch, json_object *req);
/* {"op":"terminal.attach","id"|"pid","offset"|"live"} (docs/protocol.md). */
void terminal_op_attach(channel_t *ch, json_object *req);

#endif
