/* session_lifecycle.c — what a session's end does, and what wakes a paused one.
 *
 * At max_lifetime a session is deleted, unless its lifetime_action is "pause" (E2B's
 * onTimeout 'pause'): then it is paused and has no end until it is resumed. A paused session
 * with auto_resume (seconds) is resumed by the next request that needs its sandbox (envd, a
 * preview: E2B's autoResume) and ends auto_resume seconds after that. Both are kept in the
 * session's record, so a gateway taking the session over does the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "session_int.h"
#include "xalloc.h"

#define AUTO_RESUME_MAX   (365 * 86400)
#define WOKEN_WAITERS_MAX 256

struct woken_waiter {
    session_woken_cb cb;
    uint64_t id;
};

/* Whether field f of params, when present, is "stop" or "pause". */
static int
check_action(json_object *params, const char *f, err_t *err)
{
    json_object *v = json_get(params, f);
    if (!v)
        return 0;
    const char *a = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
    if (strcmp(a, "stop") != 0 && strcmp(a, "pause") != 0)
        return err_set(err, ERR_BAD_REQ, "%s must be \"stop\" or \"pause\"", f);
    return 0;
}

int
session_lifecycle_check(json_object *params, err_t *err)
{
    if (check_action(params, "idle_action", err) < 0 ||
        check_action(params, "lifetime_action", err) < 0)
        return -1;
    json_object *v = json_get(params, "auto_resume");
    if (v && (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
              json_object_get_int64(v) > AUTO_RESUME_MAX))
        return err_set(err, ERR_BAD_REQ,
                       "auto_resume must be whole seconds from 0 (never) to %d: how long a "
                       "paused session lives once a request resumed it",
                       AUTO_RESUME_MAX);
    return 0;
}

void
session_lifecycle_set(gw_session_t *s, json_object *params)
{
    s->idle_pause = !strcmp(json_get_str(params, "idle_action", "stop"), "pause");
    s->lifetime_pause = !strcmp(json_get_str(params, "lifetime_action", "stop"), "pause");
    s->auto_resume = (int)json_get_int(params, "auto_resume", 0);
}

void
session_lifecycle_describe(const gw_session_t *s, json_object *o)
{
    json_set_str(o, "idle_action", s->idle_pause ? "pause" : "stop");
    json_set_str(o, "lifetime_action", s->lifetime_pause ? "pause" : "stop");
    json_set_int(o, "auto_resume", s->auto_resume);
}

int
session_set_lifetime_action(gw_session_t *s, const char *action, err_t *err)
{
    if (strcmp(action, "stop") != 0 && strcmp(action, "pause") != 0)
        return err_set(err, ERR_BAD_REQ, "lifetime_action must be \"stop\" or \"pause\"");
    s->lifetime_pause = !strcmp(action, "pause");
    session_save_field(s, "lifetime_action", action);
    return 0;
}

void
session_lifetime_end(gw_session_t *s)
{
    if (!s->lifetime_pause) {
        session_delete(s, "maximum lifetime reached");
        return;
    }
    if (s->status == SESSION_STARTING || s->status == SESSION_STARTED)
        return; /* starting, or its link coming back: paused once it is READY */
    err_t err = {0};
    if (s->status == SESSION_PAUSED || session_pause(s, "maximum lifetime reached", &err) == 0) {
        session_set_max_lifetime(s, 0); /* a paused session has no end until it is resumed */
        return;
    }
    GW_LOG("session %s: pausing at the end of its lifetime failed (%s): stopping it", s->id,
           err.msg);
    session_delete(s, "maximum lifetime reached (pausing it failed)");
}

bool
session_auto_resumes(const gw_session_t *s)
{
    return s && s->status == SESSION_PAUSED && s->auto_resume > 0;
}

session_status_t
session_wake(gw_session_t *s)
{
    if (!session_auto_resumes(s))
        return s ? s->status : SESSION_STOPPED;
    err_t err = {0};
    int rc = session_resume(s, NULL, NULL, &err);
    if (rc < 0) {
        GW_LOG("session %s: resuming it for a request failed: %s", s->id, err.msg);
        return s->status;
    }
    /* its new end: auto_resume seconds from now, rounded up (never sooner than that) */
    int64_t life = (int64_t)(gw_wall() - s->created) + 1 + s->auto_resume;
    session_set_max_lifetime(s, life < INT32_MAX ? (int)life : INT32_MAX);
    return s->status;
}

int
session_when_woken(gw_session_t *s, session_woken_cb cb, uint64_t id)
{
    if (!s || s->status != SESSION_STARTED || !s->resuming || s->n_woken >= WOKEN_WAITERS_MAX)
        return -1;
    s->woken = xrealloc(s->woken, (size_t)(s->n_woken + 1) * sizeof *s->woken);
    s->woken[s->n_woken++] = (struct woken_waiter){cb, id};
    return 0;
}

/* The waiters of one release, called back from a timer of their own: the session may be gone
 * by then, which they find out themselves. */
typedef struct {
    uv_timer_t timer;
    int n;
    struct woken_waiter w[];
} woken_release_t;

static void
on_release_closed(uv_handle_t *h)
{
    free(h->data);
}

static void
on_release(uv_timer_t *t)
{
    woken_release_t *r = t->data;
    for (int i = 0; i < r->n; i++)
        r->w[i].cb(r->w[i].id);
    uv_close((uv_handle_t *)t, on_release_closed);
}

void
session_woken_release(gw_session_t *s)
{
    if (!s->n_woken)
        return;
    woken_release_t *r = xmalloc(sizeof *r + (size_t)s->n_woken * sizeof r->w[0]);
    r->n = s->n_woken;
    memcpy(r->w, s->woken, (size_t)s->n_woken * sizeof r->w[0]);
    free(s->woken);
    s->woken = NULL;
    s->n_woken = 0;
    uv_timer_init(g_gw.loop, &r->timer);
    r->timer.data = r;
    uv_timer_start(&r->timer, on_release, 0, 0);
}
