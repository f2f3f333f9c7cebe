/* session_term.c — raw terminals on a session's executor, paced by their client (credit is
 * granted only as the client consumes: ttyd's lesson, per terminal). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "redis_client.h"
#include "session_int.h"
#include "xalloc.h"

/* ---- terminals ---- */

int
session_term_open(gw_session_t *s, gw_term_t *t, int cols, int rows, err_t *err)
{
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    if (!c || s->status == SESSION_PAUSED)
        return err_set(err, ERR_BUSY, "the runtime is not connected (status %s)",
                       session_status_text(s->status));
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "terminal");
    json_set_int(req, "cols", cols);
    json_set_int(req, "rows", rows);
    uint32_t ch = exec_client_open(c, req, err);
    json_object_put(req);
    if (!ch)
        return -1;
    exec_client_set_chan_data(c, ch, &session_kind_term);
    /* The PTY produces only as fast as this client consumes (ttyd's lesson, per terminal). */
    exec_client_set_auto_grant(c, ch, false);
    t->s = s;
    t->ch = ch;
    t->next = s->terms;
    s->terms = t;
    s->last_activity = gw_now();
    exec_link_flush(s->link);
    return 0;
}

void
session_term_input(gw_term_t *t, const void *p, size_t n)
{
    exec_client_t *c = t->s && t->ch ? exec_link_client(t->s->link) : NULL;
    if (!c)
        return;
    /* Keystrokes are small; beyond the executor's credit they wait in the link's queue. */
    const uint8_t *b = p;
    while (n) {
        ssize_t k = exec_client_send_data(c, t->ch, b, n);
        if (k <= 0)
            break;
        b += k;
        n -= (size_t)k;
    }
    t->s->last_activity = gw_now();
    exec_link_flush(t->s->link);
}

void
session_term_resize(gw_term_t *t, int cols, int rows)
{
    exec_client_t *c = t->s && t->ch ? exec_link_client(t->s->link) : NULL;
    if (!c)
        return;
    json_object *m = json_object_new_object(), *r = json_object_new_object();
    json_set_int(r, "cols", cols);
    json_set_int(r, "rows", rows);
    json_set(m, "resize", r);
    exec_client_send_json(c, t->ch, m);
    json_object_put(m);
    exec_link_flush(t->s->link);
}

void
session_term_consumed(gw_term_t *t, size_t n)
{
    exec_client_t *c = t->s && t->ch ? exec_link_client(t->s->link) : NULL;
    if (!c)
        return;
    exec_client_grant(c, t->ch, (uint32_t)n);
    exec_link_flush(t->s->link);
}

void
session_term_close(gw_term_t *t)
{
    gw_session_t *s = t->s;
    if (!s)
        return;
    for (gw_term_t **pp = &s->terms; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    exec_client_t *c = t->ch ? exec_link_client(s->link) : NULL;
    if (c) {
        exec_client_send_close(c, t->ch, NULL); /* hangs the terminal up */
        exec_link_flush(s->link);
    }
    t->ch = 0;
    t->s = NULL;
}
