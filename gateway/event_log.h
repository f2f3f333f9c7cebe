/* event_log.h — a session's event stream: every action, coalesced output chunk, observation and
 * status change gets the next per-session sequence number, is kept in a bounded in-memory ring
 * of recent events, and is appended to the session's Redis stream `sp:session:{id}:events`
 * under the explicit id `0-<seq>` (so a sequence number is a stream id).
 *
 * Readers are cursors (a next_seq): recent events come from the ring, older ones from Redis
 * (evlog_fetch), so a slow or reconnecting client never holds memory of its own and never
 * slows the producer. Redis trims the stream to a cap; a reader asking for trimmed events gets
 * an explicit "truncated" event for the range, never a silent gap. */
#ifndef SP_EVENT_LOG_H
#define SP_EVENT_LOG_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EVLOG_RING_EVENTS 2048
#define EVLOG_RING_BYTES  (8u << 20)

typedef struct {
    uint64_t seq;
    char *text; /* the event's JSON, "seq" included; owned by the log */
    size_t len;
} evlog_entry_t;

typedef struct event_log event_log_t;
typedef void (*evlog_wake_fn)(void *ud, uint64_t seq); /* a new event was appended */

event_log_t *evlog_new(const char *session_id, uint64_t next_seq, int64_t cap, evlog_wake_fn wake,
                       void *ud);
void evlog_free(event_log_t *l);

/* Appends: sets ev's "seq" and "ts", stores it, writes it to Redis. Takes ownership of ev.
 * Returns the sequence number. */
uint64_t evlog_append(event_log_t *l, json_object *ev);
/* Appends an event given as JSON members without braces (`"type":"output",...`): the stored
 * text is {"seq":N,"ts":T,<members>}. For the output hot path, which builds its text directly. */
uint64_t evlog_append_members(event_log_t *l, const char *members, size_t len);

uint64_t evlog_next_seq(const event_log_t *l);  /* the seq the next event will get */
uint64_t evlog_acked_seq(const event_log_t *l); /* every seq <= this is in Redis */
/* The event with this seq if it is still in memory, else NULL (borrowed). */
const evlog_entry_t *evlog_get(const event_log_t *l, uint64_t seq);
uint64_t evlog_first_in_memory(const event_log_t *l);

/* Reads up to max events with seq >= from from Redis, calling cb with an array of entries
 * (borrowed for the call; count 0 at the end of the stream) or count -1 on error. If events
 * before the first one Redis still has were trimmed, the first entry is a synthesized
 * {"type":"truncated","from":A,"to":B} event with seq A. */
typedef void (*evlog_fetch_cb)(void *ud, const evlog_entry_t *entries, int count);
void evlog_fetch(const char *session_id, uint64_t from, int max, evlog_fetch_cb cb, void *ud);

/* Re-sends events Redis did not confirm (after a reconnection). */
void evlog_resync(event_log_t *l);

/* Writes waiting for Redis to confirm; the producer slows down (stops granting credit) above a
 * bound. */
size_t evlog_unacked(const event_log_t *l);
/* fn(ud) runs whenever confirmations bring the unconfirmed count down to low_water. */
void evlog_on_drain(event_log_t *l, void (*fn)(void *ud), size_t low_water);

#endif
