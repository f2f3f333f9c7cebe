/* preview_listen.h — the gateway's preview listener (docs/operations.md, "Previews"): nginx
 * sends a sandbox app's HTTP and WebSocket traffic here, one request per connection, with its
 * route key (the listener answers nothing else). TCP (--preview-listen HOST:PORT, port 0: one
 * the kernel picks) or a unix socket (unix:PATH), announced in sp:gateway:ID:info preview so
 * the route lookup can tell nginx where a session's previews go. */
#ifndef SP_PREVIEW_LISTEN_H
#define SP_PREVIEW_LISTEN_H

#include <stdbool.h>
#include <stdint.h>

/* Parses --preview-listen (NULL: listen_host, the --listen address as resolved: numeric, port
 * 0). 0, or -1 with a message on stderr. Before preview_listen_start. */
int preview_listen_config(const char *arg, const char *listen_host, const char *advertise);
/* Binds and listens; exits the process when it cannot (as the main listener does). */
void preview_listen_start(void);
/* Where nginx reaches it: "host:port" or "unix:PATH" ("" before start). */
const char *preview_listen_addr(void);
/* The preview tokens' key (preview_token.h), from the gateways' shared secret. */
const uint8_t *preview_key(void);
/* --preview-timeout SEC: how long an app may take to its first byte (1..3600). */
void preview_set_first_byte_timeout(int seconds);
int preview_first_byte_timeout(void);
/* --preview-public on: owners may make a port public (no credential). */
void preview_set_public_allowed(bool on);
bool preview_public_allowed(void);

#endif
