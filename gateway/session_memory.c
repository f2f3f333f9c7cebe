/* session_memory.c — what an idle session holds, and what ended sessions leave in the heap.
 * An idle session (nothing running, nothing queued, no terminal, quiet for
 * SESSION_SHRINK_AFTER_S) lets go of the buffers its last action grew: its empty output
 * buffers, its executor link's empty buffers, and all but the newest stored events of its
 * event log (readers read older ones from Redis, as past the ring's bound). Once sessions
 * have ended, the gateway hands the heap's free pages back to the kernel (malloc_trim): glibc
 * keeps them otherwise, below its trim threshold or between live blocks, and a gateway that
 * served thousands of sessions would stay at its peak. Runs from sessions_tick, once a second. */
#include <malloc.h>

#include "session_int.h"

static unsigned sessions_freed; /* since the last trim */

void
session_memory_freed(void)
{
    sessions_freed++;
}

/* A buffer that holds nothing goes; it grows again when used. */
static void
drop_if_empty(buf_t *b)
{
    if (b->len == 0)
        buf_free(b);
}

void
session_shrink(gw_session_t *s)
{
    drop_if_empty(&s->out);
    drop_if_empty(&s->out_events);
    drop_if_empty(&s->releases);
    exec_link_shrink(s->link);
    event_log_shrink(s->log, SESSION_IDLE_EVENTS_KEPT);
}

void
sessions_trim_heap(void)
{
    if (!sessions_freed)
        return;
    sessions_freed = 0;
    malloc_trim(0);
}
