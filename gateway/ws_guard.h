/* ws_guard.h — vets every frame header a WebSocket client sends before libwebsockets parses
 * it (ws_frames.h), for the rules lws 4.1.6 does not enforce. See ws_guard.c for how. */
#ifndef SP_WS_GUARD_H
#define SP_WS_GUARD_H

#include <stdbool.h>
#include <stdint.h>

struct lws;

/* Starts watching a connection lws just accepted (LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED,
 * before lws reads from it). max_message bounds one message's payload. */
void ws_guard_attach(struct lws *wsi, uint64_t max_message);
/* Stops watching (LWS_CALLBACK_WSI_DESTROY); a no-op for a wsi never attached. */
void ws_guard_detach(struct lws *wsi);
/* The close code the client earned with a frame lws was not given (0 if none), and a short
 * static reason for the close frame. A failure asks lws for a WRITEABLE callback, where the
 * connection is expected to check this and close. */
uint16_t ws_guard_failure(struct lws *wsi, const char **reason);
/* True when the connection's frames are not being vetted: its first request was plain HTTP
 * (ws_frames' WSF_PLAIN), so a later upgrade on the same connection must be refused. */
bool ws_guard_unwatched(struct lws *wsi);

#endif
