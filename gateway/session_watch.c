/* session_watch.c — waiting for an action's observation without reading the event stream: the
 * API's execute_action gets its answer straight from the gateway (one Redis round trip) rather
 * than polling the session's stream. A watcher lives until its observation or the session's
 * end; there are at most as many as actions queued. */
#include <stdint.h>
#include <stdlib.h>

#include "session_int.h"
#include "xalloc.h"

struct action_watch {
    struct action_watch *next;
    uint64_t seq;
    session_obs_cb cb;
    session_stored_cb stored_cb; /* a session_when_stored waiter instead */
    void *ud;
};

void
session_when_stored(gw_session_t *s, uint64_t seq, session_stored_cb cb, void *ud)
{
    if (seq <= event_log_acked_seq(s->log)) {
        cb(ud, seq);
        return;
    }
    struct action_watch *w = xcalloc(1, sizeof *w);
    w->seq = seq;
    w->stored_cb = cb;
    w->ud = ud;
    w->next = s->store_waits;
    s->store_waits = w;
}

void
session_watch_action(gw_session_t *s, uint64_t seq, session_obs_cb cb, void *ud)
{
    struct action_watch *w = xcalloc(1, sizeof *w);
    w->seq = seq;
    w->cb = cb;
    w->ud = ud;
    w->next = s->watches;
    s->watches = w;
}

/* Unlinks the watchers of *list waiting for a seq in [lo, hi] and tells each: stored (its own
 * seq), or its observation (event event_seq of s's log; 0, or not there: NULL, the session
 * ended or the event is no longer in memory). ended: the session is going away, stored
 * waiters get 0. The event is looked up for each watcher: a callback may append events, and
 * the ring moves when it grows. */
static void
settle(gw_session_t *s, struct action_watch **list, uint64_t lo, uint64_t hi, uint64_t event_seq,
       bool ended)
{
    for (struct action_watch **pp = list; *pp;) {
        struct action_watch *w = *pp;
        if (w->seq < lo || w->seq > hi) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        if (w->stored_cb)
            w->stored_cb(w->ud, ended ? 0 : w->seq);
        else {
            const event_log_entry_t *e = event_seq ? event_log_get(s->log, event_seq) : NULL;
            w->cb(w->ud, e ? e->text : NULL, e ? e->len : 0);
        }
        free(w);
    }
}

void
session_stored_up_to(gw_session_t *s, uint64_t stored)
{
    settle(s, &s->store_waits, 0, stored ? stored : UINT64_MAX, 0, !stored);
}

void
session_observed(gw_session_t *s, uint64_t seq, uint64_t event_seq)
{
    settle(s, &s->watches, event_seq ? seq : 0, event_seq ? seq : UINT64_MAX, event_seq,
           !event_seq);
}
