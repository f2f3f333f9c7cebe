/* redis_replicated.h — "is it on a replica yet?" for the event log in sentinel mode.
 *
 * Redis replicates asynchronously: a write the primary confirmed may be missing on the replica a
 * failover promotes. In sentinel mode the event log counts an event stored only once WAIT says
 * a replica has it too (docs/operations.md "Faults and guarantees"). One WAIT is in flight at a
 * time for every waiter of the connection: the waiters that come while it is out share the next
 * one, so the cost is a round trip to the replica per batch, not per event. */
#ifndef SP_REDIS_REPLICATED_H
#define SP_REDIS_REPLICATED_H

#include <stdbool.h>

#define REDIS_REPLICATED_WAIT_MS 100 /* a WAIT's timeout (it holds the connection meanwhile) */

/* ok: everything the shared connection ran before this call is on a replica; false: the connection
 * was lost first (its successor's resync decides what is stored). */
typedef void (*redis_replicated_cb)(void *ud, bool ok);

/* Calls cb once every command answered on the shared connection before this call is
 * replicated. At once (ok) outside sentinel mode. With no replica connected (the other one
 * promoted and the old primary not back yet) it waits: events are held, as when Redis is away. */
void redis_replicated(redis_replicated_cb cb, void *ud);

#endif
