/* session_watch.c — waiting for an action's observation without reading the event stream: the
 * API's execute_action gets its answer straight from the gateway (one Redis round trip) rather
 * than polling the session's stream. A watcher lives until its observation or the session's
 * end; there are at most as many as actions queued. */
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
session_stored_up_to(gw_session_t *s, uint64_t stored)
{
    for (struct action_watch **pp = &s->store_waits; *pp;) {
        struct action_watch *w = *pp;
        if (stored && w->seq > stored) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        w->stored_cb(w->ud, stored ? w->seq : 0);
        free(w);
    }
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

void
session_observed(gw_session_t *s, uint64_t seq, uint64_t event_seq)
{
    const event_log_entry_t *e = event_seq ? event_log_get(s->log, event_seq) : NULL;
    for (struct action_watch **pp = &s->watches; *pp;) {
        struct action_watch *w = *pp;
        if (event_seq && w->seq != seq) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        if (e)
            w->cb(w->ud, e->text, e->len);
        else
            w->cb(w->ud, NULL, 0);
        free(w);
    }
}
