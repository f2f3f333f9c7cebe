/* redis_replicated.h — "is it on a replica yet?" for the event log in sentinel mode.
 *
 * Redis replicates asynchronously: a write the primary confirmed may be missing on the replica a
 * failover promotes. In sentinel mode the event log counts an event stored only once WAIT says
 * a replica has it too (docs/operations.md "Faults and guarantees"). One WAIT is in flight at a
 * time for every waiter of the connection: the waiters that come while it is out share the next
 * one, so the cost is a round trip to the replica per batch, not per event.
 *
 * The hold is bounded: a primary no replica has answered for REDIS_REPLICATED_ALONE_MS (its
 * replicas' nodes lost, a failover that left none) is first checked with the sentinels (the
 * connection is made again, which asks them and checks ROLE); if they still name it, events are
 * stored on its word alone ("alone": logged, counted in sp:metrics "events_unreplicated") until
 * a probe WAIT, at most one a second, finds a replica again. The price, stated in operations.md:
 * an event stored alone is lost if that primary dies before a replica has copied it. */
#ifndef SP_REDIS_REPLICATED_H
#define SP_REDIS_REPLICATED_H

#include <stdbool.h>

#define REDIS_REPLICATED_WAIT_MS  100  /* a WAIT's timeout (it holds the connection meanwhile) */
#define REDIS_REPLICATED_ALONE_MS 5000 /* no replica this long: ask, then store alone */
#define REDIS_REPLICATED_PROBE_MS 1000 /* alone: how often a WAIT looks for a replica */

/* ok: everything the shared connection ran before this call is on a replica (or, alone, on the
 * primary the sentinels name); false: the connection was lost first (its successor's resync
 * decides what is stored). */
typedef void (*redis_replicated_cb)(void *ud, bool ok);

/* Calls cb once every command answered on the shared connection before this call is
 * replicated. At once (ok) outside sentinel mode, and alone. With no replica connected it
 * waits, REDIS_REPLICATED_ALONE_MS at most (then as above). */
void redis_replicated(redis_replicated_cb cb, void *ud);

/* Whether events are being stored on the primary alone now (for /health and tests). */
bool redis_replicated_alone(void);

#endif
