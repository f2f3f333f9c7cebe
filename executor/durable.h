/* durable.h — actions that outlive their connection (end-to-end acknowledgement).
 *
 * An `action` OPENed with an "id" is durable. Every DATA byte sent on it is kept until the client
 * acknowledges it; a CREDIT frame on a durable channel is that acknowledgement (the gateway
 * grants credit only for bytes it has stored in Redis). Its CLOSE result is kept until the
 * client says it is stored (`action.release`). When the connection drops, the channel is
 * orphaned instead of detached: the action goes on with no credit (its output waits in the PTY,
 * bounded, nothing dropped) and may finish; a new connection takes it over with `action.attach`
 * from the output offset it has stored, gets the unacknowledged bytes again, then live output
 * and the CLOSE. So a gateway killed at any point loses nothing and repeats nothing.
 *
 * Ownership: a record owns its retained bytes and result; it points at its live channel (owned
 * by the connection, or by the record itself while orphaned) and is freed on release, on a
 * client CLOSE (an explicit detach) or when DURABLE_KEEP finished records are exceeded. */
#ifndef SP_DURABLE_H
#define SP_DURABLE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "conn.h"
#include "err.h"
#include "loop.h"

#define DURABLE_ID_MAX     64
#define DURABLE_KEEP       64         /* finished, unreleased records kept (oldest dropped) */
#define DURABLE_ORPHAN_MAX (4u << 20) /* bytes kept while orphaned before the op must wait */

typedef struct durable durable_t;
struct durable {
    durable_t *next;
    char id[DURABLE_ID_MAX + 1];
    channel_t *ch;       /* its channel (live or orphaned); NULL once finished and delivered */
    buf_t unacked;       /* bytes not yet acknowledged: output offsets [acked, acked + len) */
    size_t sent;         /* how many of them went out on ch's current connection */
    uint64_t acked;      /* output offset of unacked's first byte */
    bool finished;       /* the op closed the channel: result is set */
    json_object *result; /* the CLOSE result */
    ltimer_t wake;       /* orphaned: the op reads on (it may have been out of credit) */
};

/* Makes ch durable under id (1..DURABLE_ID_MAX of [A-Za-z0-9_.:-]). Returns 0, or < 0 with err
 * (a bad or already used id): the caller then closes ch with the error. */
int durable_open(channel_t *ch, const char *id, err_t *err);

/* Hooks called by conn.c for durable channels. */
/* What the op may write now: the wire credit once every kept byte has gone out; while
 * orphaned, what is left of DURABLE_ORPHAN_MAX. */
int64_t durable_room(const durable_t *d);
/* The op's output: kept, and sent within the credit. */
void durable_write(durable_t *d, const void *p, size_t n);
/* The client granted n bytes: the first n kept bytes are stored. Sends what waited. Returns 0
 * if that finished the channel (its deferred CLOSE went out and ch is freed), 1 otherwise. */
int durable_acked(durable_t *d, size_t n);
/* The op closes the channel with result (borrowed). Returns true if CLOSE may go now, false
 * if it must wait for kept bytes to go out first (the channel stays open without its op). */
bool durable_closed(durable_t *d, json_object *result);
void durable_orphaned(durable_t *d); /* its connection went away: the op reads on, kept here */
void durable_forget(durable_t *d);   /* explicit client CLOSE */

/* Ops: {"op":"action.attach","id":"…","offset":N} and {"op":"action.release","id":"…"}. */
void durable_op_attach(channel_t *ch, json_object *req);
void durable_op_release(channel_t *ch, json_object *req);
/* {"op":"action.list"} → {"actions":[{"id","running","acked","unacked"}]}. */
void durable_op_list(channel_t *ch, json_object *req);

#endif
