/* route.h — where a session's traffic goes: the gateway that owns it and that gateway's address
 * (redis/README.md: field gateway of sp:session:{ID}, sp:gateway:GW:info addr, the heartbeat
 * sp:gateway:GW), for nginx's auth_request lookup (GET /_sp/route) and for this gateway's own
 * HTTP routes (a runtime id's session and key). Sessions this gateway owns answer from memory;
 * others from a cache of ROUTE_TTL_MS, filled from Redis. */
#ifndef SP_ROUTE_H
#define SP_ROUTE_H

#include <stdbool.h>

#include "http_server.h"

#define ROUTE_TTL_MS 1000

typedef struct {
    bool found;         /* the session (or the runtime's current session) exists */
    bool starting;      /* a runtime whose session is not there yet */
    char sid[128];      /* the session (a runtime id resolved) */
    char owner[128];    /* its owner (token sub) */
    char status[40];    /* its status */
    char gw[64];        /* its gateway */
    char addr[192];     /* that gateway's address ("" unknown) */
    char preview[192];  /* its preview listener's (preview_listen.h; "" unknown) */
    bool gw_alive;      /* that gateway's heartbeat is there */
    char rt_key[160];   /* a runtime's session API key ("" for a session id) */
    char rt_owner[128]; /* a runtime's owner */
} route_t;

/* r NULL: Redis did not answer. r is borrowed for the call. */
typedef void (*route_cb)(void *ud, const route_t *r);
/* Resolves id (a session id, or a runtime id rt-<16 hex>); cb may run before this returns. */
void route_resolve(const char *id, route_cb cb, void *ud);

/* GET /_sp/route: nginx asks where the request in X-SP-URI goes (its Authorization,
 * X-Session-API-Key headers along). Only nginx: without its X-SP-Route-Key (route_key.h) 401
 * and nothing more. 200 with X-SP-Gateway: the owner's address when its gateway
 * lives and, for a WebSocket, the token may use the session (an HTTP route's token is checked by
 * the owner: its answer then depends on the URI alone, which nginx caches); otherwise 404 with
 * X-SP-Status (what the request would get: 401, 403, 404, 503) and X-SP-Error (a REST error body),
 * and nginx answers it elsewhere (docs/api.md, "nginx"). An action server's request (/runtime/,
 * /rt-…) always goes to a gateway: the owner (200), or this one (204, not cached) that answers why
 * not; so does a preview (/preview/…), with X-SP-Preview: that gateway's preview listener. */
void route_http(http_req_t *h, const char *unused);

#endif
