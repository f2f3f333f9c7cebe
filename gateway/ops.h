/* ops.h — the requests the gateway answers on its control WebSocket (/ws/control, docs/api.md),
 * from the REST API's control requests over HTTP (http_control.c, docs/protocol.md) and on the
 * session-bound HTTP routes nginx sends it: one table of
 * {name, writes, transports, handler}. Who may see a session and who may change it is decided
 * here, once, before any handler runs; the transports only parse their requests and carry the
 * answers (ws_control.c, http_control.c, http_actions.c, http_relay.c).
 *
 * Access: an admin sees and changes every session, a user its own, a viewer only sees the one
 * session its token names. */
#ifndef SP_OPS_H
#define SP_OPS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "session.h"

/* OPS_API: the API's control requests (http_control.c); OPS_HTTP: the REST routes nginx sends to
 * the session's gateway itself (http_actions.c, http_relay.c). */
typedef enum {
    OPS_WS = 1,
    OPS_API = 2,
    OPS_WS_API = OPS_WS | OPS_API,
    OPS_HTTP = 4,
} ops_via_t;

/* Who asks: from a verified token (the WebSocket's own, or the one the API verified). Borrowed. */
typedef struct {
    const char *sub, *role;
    const char *session; /* a viewer's one session */
} ops_who_t;

typedef enum { OPS_HIDDEN, OPS_READ, OPS_WRITE } ops_access_t;
ops_access_t ops_access(const ops_who_t *who, const gw_session_t *s);

typedef struct ops_transport ops_transport_t;

/* Where an answer goes: a plain value; a handler that answers later keeps a copy. */
typedef struct {
    const ops_transport_t *via;
    uint64_t conn;   /* WebSocket: the connection (ws_lookup); HTTP: the request (http_find) ... */
    json_object *id; /* ... and the request's id (owned by a kept copy) */
} ops_reply_t;

/* One request being dispatched (everything borrowed for the handler's call). */
typedef struct {
    const char *op;
    json_object *args;   /* the op's fields: WebSocket "params", the API's the request itself */
    json_object *params; /* session.create's parameters */
    ops_who_t who;
    gw_session_t *s; /* the session named by args "session", access checked (ops needing one) */
    const ops_reply_t *reply;
} ops_call_t;

typedef struct {
    const char *name;
    bool writes;  /* changes something: refused to viewers */
    bool session; /* names a session ("session"): it must exist and be visible to the caller */
    unsigned via; /* ops_via_t bits: the transports that carry it */
    const char *refusal; /* what a viewer is told (a transport that does not hide refusals) */
    void (*fn)(const ops_call_t *c);
} ops_t;

struct ops_transport {
    ops_via_t via;
    /* Answers: result taken (NULL: {}); error taken ({"code","message",...}). */
    void (*ok)(const ops_reply_t *to, json_object *result);
    void (*fail)(const ops_reply_t *to, json_object *error);
    /* The observation of an action, its event's stored JSON text: a second answer to an action
     * sent with "wait". NULL: the transport has none. */
    void (*observed)(const ops_reply_t *to, uint64_t seq, const char *event, size_t len);
    const char *forbidden; /* the error code refusing a viewer */
    bool hides_refusals;   /* a viewer refused on its session is told not_found, as anyone else */
    const char *actor;     /* how status messages name the caller ("by client") */
    const ops_t *unknown;  /* what an op not in the table is (its handler answers) */
};

/* The op of this name a transport carries, or NULL. */
const ops_t *ops_find(const char *name, ops_via_t via);
/* Checks access and runs the op named c->op (c->s is filled here); every path answers. */
void ops_dispatch(ops_call_t *c);

/* Answers for handlers and transports. ops_fail builds {"code","message"}. */
void ops_ok(const ops_reply_t *to, json_object *result);
void ops_fail(const ops_reply_t *to, const char *code, const char *message);
/* A copy of to that outlives the request (the id is referenced); ops_reply_free(NULL) no-op. */
ops_reply_t *ops_reply_keep(const ops_reply_t *to);
void ops_reply_free(ops_reply_t *to);

/* For tests: the table. */
const ops_t *ops_table(size_t *n);

#endif
