/* event_log.h — a session's event stream: every action, coalesced output chunk, observation and
 * status change gets the next per-session sequence number, is kept in a bounded in-memory ring
 * and is appended to the session's Redis stream `sp:session:{id}:events` under the explicit id
 * `0-<seq>` (so a sequence number is a stream id).
 *
 * Store, then publish: an event becomes visible (event_log_get, the stored callback that wakes the
 * session's readers) only once Redis has confirmed it, so no reader ever sees an event a crash
 * could take back, and a sequence number a client saw is never given to another event. Until
 * then it waits in the ring: a write that fails (Redis restarting, refusing, loading) stalls
 * the log, which re-sends everything unconfirmed, in order, once Redis answers again (after
 * checking which of them it already has). The ring never drops an unconfirmed event while it
 * has room; producers look at event_log_full() and stop (the output path withholds credit, actions
 * are refused). Past the ring itself an unconfirmed event is dropped and logged, and readers see
 * the gap as an explicit "truncated" event, never a silent one.
 *
 * Readers are cursors (a next_seq): recent events come from the ring, older ones from Redis
 * (event_log_fetch). Redis keeps at most cap_events entries and about cap_bytes bytes per stream
 * (oldest trimmed first); a reader asking for trimmed events gets a "truncated" event. */
#ifndef SP_EVENT_LOG_H
#define SP_EVENT_LOG_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EVENT_LOG_RING_EVENTS      2048 /* at most this many events in memory per session */
#define EVENT_LOG_RING_MIN         16   /* the ring's first allocation, and its smallest */
#define EVENT_LOG_RING_BYTES       (8u << 20)
#define EVENT_LOG_UNCONFIRMED_MAX  1024 /* producers stop above this many unconfirmed events */
#define EVENT_LOG_UNCONFIRMED_BYTE (4u << 20) /* ... or this many unconfirmed bytes */

typedef struct {
    uint64_t seq;
    char *text; /* the event's JSON, "seq" included; owned by the log */
    size_t len;
    bool stored;  /* Redis confirmed it (in sentinel mode: and a replica has it) */
    bool written; /* the primary confirmed it, a replica may not have it yet */
} event_log_entry_t;

typedef struct event_log event_log_t;
/* Events up to and including seq are stored (and visible). */
typedef void (*event_log_stored_fn)(void *ud, uint64_t seq);

/* cap_events / cap_bytes: the stream's bounds in Redis (0 = none). */
event_log_t *event_log_new(const char *session_id, uint64_t next_seq, int64_t cap_events,
                           int64_t cap_bytes, event_log_stored_fn stored, void *ud);
void event_log_free(event_log_t *l);

/* Appends: sets ev's "seq" and "ts", keeps it, writes it to Redis. Takes ownership of ev.
 * Returns the sequence number. */
uint64_t event_log_append(event_log_t *l, json_object *ev);
/* Appends an event given as JSON members without braces (`"type":"output",...`): the stored
 * text is {"seq":N,"ts":T,<members>}. For the output hot path, which builds its text directly. */
uint64_t event_log_append_members(event_log_t *l, const char *members, size_t len);

uint64_t event_log_next_seq(const event_log_t *l);  /* the seq the next event will get */
uint64_t event_log_acked_seq(const event_log_t *l); /* every seq <= this is stored and visible */
/* The stored event with this seq if it is still in memory, else NULL (borrowed). */
const event_log_entry_t *event_log_get(const event_log_t *l, uint64_t seq);
uint64_t event_log_first_in_memory(const event_log_t *l);
/* An idle session's log lets go of memory: stored events beyond the newest keep leave it
 * (readers read them from Redis, as after the ring's bound), and the ring shrinks to fit what
 * is left. Unconfirmed events always stay. */
void event_log_shrink(event_log_t *l, size_t keep);
/* How many entries the ring has room for now (it grows with use up to EVENT_LOG_RING_EVENTS). */
size_t event_log_ring_capacity(const event_log_t *l);
/* The event with this seq, stored or not yet: only for the last words to a session's readers
 * as it goes away (its final events are still on their way to Redis). */
const event_log_entry_t *event_log_peek(const event_log_t *l, uint64_t seq);

/* Reads up to max events with seq >= from from Redis, calling cb with an array of entries
 * (borrowed for the call; count 0 at the end of the stream) or count -1 on error. Where
 * events are missing (trimmed by the cap before the first one, or lost in between), a
 * synthesized {"type":"truncated","from":A,"to":B,"reason"} event with seq A stands for them. */
typedef void (*event_log_fetch_cb)(void *ud, const event_log_entry_t *entries, int count);
void event_log_fetch(const char *session_id, uint64_t from, int max, event_log_fetch_cb cb,
                     void *ud);

/* Re-sends events Redis did not confirm: call after every reconnection and periodically (a
 * no-op unless a write failed). */
void event_log_resync(event_log_t *l);

/* Too many unconfirmed events: producers hold back (Redis slow or away). */
bool event_log_full(const event_log_t *l);

#endif
