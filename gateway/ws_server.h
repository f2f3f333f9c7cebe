/* ws_server.h — the client WebSocket endpoints (see ws_server.c and docs/api.md). */
#ifndef SP_WS_SERVER_H
#define SP_WS_SERVER_H

#include <json-c/json.h>
#include <stddef.h>

struct lws;
struct lws_protocols;

const struct lws_protocols *ws_protocols(void);
/* Queues a reply (takes ownership) on a connection; written ahead of events. */
void ws_reply(struct lws *wsi, json_object *msg);
size_t ws_connections(void);
/* {"type":"error","id":id,"error":{"code","message"}} (id borrowed, may be NULL). */
json_object *ws_error_msg(const char *code, const char *message, json_object *id);
/* Connection ids stay unique for the process's life; ws_lookup returns NULL once closed. */
uint64_t ws_conn_id(struct lws *wsi);
struct lws *ws_lookup(uint64_t conn_id);

#endif
