/* session_last_execute.c — OpenHands' last execution time of a session (server_info's idle
 * time, docs/api.md): set at each execute_action's start and end, kept on the session and
 * written to sp:session:{ID}:runtime by sessions_tick at most once a second, so that the REST
 * path costs Redis nothing for it; a gateway taking the session over reads it from there. */
#include "gw.h"
#include "redis_client.h"
#include "session_int.h"

void
session_mark_executed(gw_session_t *s)
{
    s->last_execute = gw_wall();
    s->last_execute_dirty = true;
}

double
session_last_executed(const gw_session_t *s)
{
    return s->last_execute;
}

void
session_flush_last_execute(gw_session_t *s)
{
    if (!s->last_execute_dirty)
        return;
    s->last_execute_dirty = false;
    redis_client_cmd(NULL, NULL, "HSET sp:session:{%s}:runtime last_execute %f", s->id,
                     s->last_execute);
}
