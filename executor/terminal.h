/* terminal.h — raw PTY channels for xterm.js: a login shell (or argv) on its own PTY, bytes
 * both ways as DATA, {"resize":{"cols","rows"}} as JSON. Backpressure as ttyd does it: when
 * the client has no credit the PTY is not read; reading resumes on CREDIT. The client's CLOSE
 * hangs the terminal up (SIGHUP to its process group). */
#ifndef SP_TERMINAL_H
#define SP_TERMINAL_H

#include <json-c/json.h>

#include "conn.h"

void terminal_op_open(channel_t *ch, json_object *req);

#endif
