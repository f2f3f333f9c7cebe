/* session_pause.c — pause and resume: the sandbox's cgroup is frozen (its processes keep all
 * their state, a running command continues where it stopped), the executor link goes quiet so
 * the silence is not taken for a death, and the session refuses work until it is thawed. */
#include <errno.h>
#include <string.h>

#include "gw.h"
#include "session_int.h"

int
session_pause(gw_session_t *s, const char *reason, err_t *err)
{
    if (s->status == SESSION_PAUSED)
        return 0;
    if (s->status != SESSION_READY)
        return err_set(err, ERR_BUSY, "the session is %s: only a READY session can pause",
                       session_status_text(s->status));
    if (!s->prov || !s->prov->pause)
        return err_set(err, ENOTSUP, "the %s provider cannot pause sandboxes",
                       s->prov ? s->prov->name : "unknown");
    exec_link_set_quiet(s->link, true);
    if (s->prov->pause(&s->sb, err) < 0) {
        exec_link_set_quiet(s->link, false);
        return -1;
    }
    session_set_status(s, SESSION_PAUSED, reason);
    return 0;
}

int
session_resume(gw_session_t *s, session_ready_cb cb, void *ud, err_t *err)
{
    if (s->status == SESSION_READY)
        return 0;
    if (s->status != SESSION_PAUSED)
        return err_set(err, ERR_BUSY, "the session is %s, not PAUSED",
                       session_status_text(s->status));
    if (!s->prov || !s->prov->resume)
        return err_set(err, ENOTSUP, "the provider cannot resume sandboxes");
    if (s->prov->resume(&s->sb, err) < 0)
        return -1;
    s->last_activity = gw_now();
    if (s->connect_on_resume) {
        /* Restored by a gateway that started while the sandbox was frozen: connect now; the
         * link's HELLO makes the session READY. */
        s->connect_on_resume = false;
        session_set_status(s, SESSION_STARTED, "resumed");
        s->ready_cb = cb; /* answered READY, or why not, once the link is up or fails */
        s->ready_ud = ud;
        s->resuming = true;
        exec_link_connect(s->link, s->sb.socket_path, 5000);
        return 1;
    }
    exec_link_set_quiet(s->link, false);
    session_set_status(s, SESSION_READY, "resumed");
    session_start_next_action(s);
    return 0;
}
