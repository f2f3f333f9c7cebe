/* session_ports.h — a session's ports (docs/api.md, "Previews"): what listens in its sandbox,
 * from the executor's port.watch (a `port` event in the session's stream when one opens or
 * closes), and which ports its owner made public (kept in sp:session:{ID} public_ports, so a
 * restarted or taking-over gateway keeps them). */
#ifndef SP_SESSION_PORTS_H
#define SP_SESSION_PORTS_H

#include <json-c/json.h>
#include <stdbool.h>

#include "err.h"
#include "session.h"

#define SESSION_PUBLIC_PORTS_MAX 16

bool session_port_public(const gw_session_t *s, unsigned port);
/* On or off; ERR_AT_CAPACITY past SESSION_PUBLIC_PORTS_MAX. 0 or -1 with err. */
int session_port_set_public(gw_session_t *s, unsigned port, bool on, err_t *err);
/* The public ports as the record keeps them ("8000,3000"), and back (a restore). */
void session_ports_public_text(const gw_session_t *s, char *out, size_t cap);
void session_ports_public_parse(gw_session_t *s, const char *text);
/* What the watch last said: [{"port","address","family","pid"?,"command"?}] (borrowed; NULL
 * before its first word). */
json_object *session_ports_listening(const gw_session_t *s);
/* The link is up (READY): the watch opens. It ends with the link or the session. */
void session_ports_watch(gw_session_t *s);
void session_ports_free(gw_session_t *s);

#endif
