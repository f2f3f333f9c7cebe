/* session_delete.c — deleting a session: STOPPED at once (its record kept for the retention),
 * its sandbox destroyed off the loop (sandbox_destroy.h), and the session out of its gateway's
 * set only once the sandbox is gone, so that a gateway killed during the destroy, or whose
 * destroy failed, finds it STOPPED in its set and destroys the sandbox again
 * (session_restore.c). A session deleted while its sandbox is on the way (a claim or a start)
 * waits for it here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "redis_client.h"
#include "sandbox_destroy.h"
#include "session_int.h"
#include "session_network.h"
#include "xalloc.h"

/* A deleted session whose sandbox is being destroyed: who waits for it to be gone. */
typedef struct deleted {
    char id[64];
    session_deleted_cb done;
    void *ud;
    struct deleted *next; /* waiting for the sandbox a claim or start brings (s->taking) */
} deleted_t;

static deleted_t *awaiting_sandbox;

static void
on_destroyed(void *ud, int code, const char *msg)
{
    deleted_t *d = ud;
    if (!code)
        redis_client_cmd(NULL, NULL, "SREM sp:gateway:%s:sessions %s", g_gw.cfg.id, d->id);
    if (d->done)
        d->done(d->ud, code, msg);
    free(d);
}

void
session_sandbox_destroy(const char *id, const provider_t *p, const sandbox_t *sb)
{
    deleted_t *d = xcalloc(1, sizeof *d);
    snprintf(d->id, sizeof d->id, "%s", id);
    sandbox_destroy(p, sb, on_destroyed, d, false);
}

void
session_sandbox_orphaned(const char *id, const sandbox_t *sb)
{
    deleted_t *d = NULL;
    for (deleted_t **pp = &awaiting_sandbox; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->id, id)) {
            d = *pp;
            *pp = d->next;
            break;
        }
    const provider_t *p = sb ? provider_find(sb->provider) : NULL;
    if (p)
        sandbox_destroy(p, sb, d ? on_destroyed : NULL, d, d && d->done);
    else if (d)
        on_destroyed(d, 0, NULL);
}

void
session_delete(gw_session_t *s, const char *reason)
{
    session_delete_then(s, reason, NULL, NULL);
}

void
session_delete_then(gw_session_t *s, const char *reason, session_deleted_cb done, void *ud)
{
    if (s->deleting) {
        if (done)
            done(ud, 0, NULL); /* the first delete's destroy is under way */
        return;
    }
    s->deleting = true;
    session_set_status(s, SESSION_STOPPED, reason);
    if (s->sb.id[0])
        session_network_detach(s);
    char key[128];
    snprintf(key, sizeof key, "sp:session:{%s}", s->id);
    redis_client_cmd(NULL, NULL, "HSET %s ended %f", key, gw_wall());
    /* A stopped session's record and history are kept for the retention, then expire; its
     * place in the listing goes with them (sessions_tick). */
    if (g_gw.cfg.retention > 0) {
        redis_client_cmd(NULL, NULL, "EXPIRE %s %d", key, g_gw.cfg.retention);
        redis_client_cmd(NULL, NULL, "EXPIRE sp:session:{%s}:events %d", s->id, g_gw.cfg.retention);
        redis_client_cmd(NULL, NULL, "ZADD sp:sessions:ended %f %s", gw_wall(), s->id);
    }
    if (s->ready_cb) {
        session_ready_cb cb = s->ready_cb;
        s->ready_cb = NULL;
        cb(s->ready_ud, NULL, ERR_NOT_FOUND, reason ? reason : "deleted");
    }
    deleted_t *d = xcalloc(1, sizeof *d);
    snprintf(d->id, sizeof d->id, "%s", s->id);
    d->done = done;
    d->ud = ud;
    bool no_sandbox = false;
    if (s->prov && s->sb.id[0]) {
        sandbox_destroy(s->prov, &s->sb, on_destroyed, d, done != NULL);
    } else if (s->taking) { /* its sandbox is on the way: destroyed when it comes */
        d->next = awaiting_sandbox;
        awaiting_sandbox = d;
    } else {
        no_sandbox = true;
    }
    session_free(s);
    if (no_sandbox)
        on_destroyed(d, 0, NULL);
}
