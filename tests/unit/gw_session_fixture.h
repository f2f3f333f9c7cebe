/* gw_session_fixture.h — real gateway sessions for unit tests, without Redis or a sandbox: the
 * gateway state on the default uv loop, sessions made as a restart makes them (session_alloc),
 * and a drain that runs the loop until their handles are closed and freed. Writes to Redis fail
 * at once (not connected), so events stay in the ring, unconfirmed: event_log_peek sees them. */
#ifndef SP_GW_SESSION_FIXTURE_H
#define SP_GW_SESSION_FIXTURE_H

#include <string.h>

#include "gateway/gw.h"
#include "gateway/session_int.h"

static inline void
fixture_gateway_init(void)
{
    memset(&g_gw, 0, sizeof g_gw);
    g_gw.loop = uv_default_loop();
    snprintf(g_gw.cfg.id, sizeof g_gw.cfg.id, "gw-test");
}

static inline gw_session_t *
fixture_session(const char *id, const char *owner)
{
    return session_alloc(id, owner, "default", 1);
}

/* Runs the loop until nothing is left on it (closed sessions are freed in close callbacks). */
static inline void
fixture_drain(void)
{
    uv_run(g_gw.loop, UV_RUN_DEFAULT);
}

/* The text of the newest event of s (stored or not). */
static inline const char *
fixture_last_event(gw_session_t *s)
{
    const event_log_entry_t *e =
        event_log_peek(session_log(s), event_log_next_seq(session_log(s)) - 1);
    return e ? e->text : "";
}

#endif
