/* preview_conn.h — one connection from nginx to the preview listener (preview_listen.c): a
 * request for port P of session S, checked (preview_access.h), then relayed byte for byte
 * through the session's executor (op port.connect, docs/protocol.md "Ports") to the app in the
 * sandbox, both ways, under the executor's credit: a slow browser slows the app, a slow app the
 * browser, and nothing else. nginx sends one request per connection (Connection: close, or an
 * Upgrade that turns it into a WebSocket's bytes), so nothing past the head is parsed.
 *
 * Bounds: the head in PREVIEW_HEAD_TIMEOUT_S, the app's first byte in --preview-timeout
 * (preview_first_byte_timeout(), default PREVIEW_FIRST_BYTE_S; else 504), and PREVIEW_IDLE_S
 * without a byte either way ends a connection; each looked at once a second. */
#ifndef SP_PREVIEW_CONN_H
#define SP_PREVIEW_CONN_H

#include <stdbool.h>
#include <uv.h>

#define PREVIEW_HEAD_TIMEOUT_S 10
#define PREVIEW_FIRST_BYTE_S   60
#define PREVIEW_IDLE_S         3600
#define PREVIEW_LINGER_MS      2000

/* Takes a connection accepted on server (TCP or unix). */
void preview_conn_accept(uv_stream_t *server, bool is_unix);

#endif
