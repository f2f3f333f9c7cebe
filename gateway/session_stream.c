/* session_stream.c — executor ops outside the action queue: one-shot ops (file.read,
 * bash.signal, ...) that end with a CLOSE, and streamed ones (file.upload, file.download) that
 * also carry DATA both ways under the executor's per-channel credit. */
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "session_int.h"
#include "xalloc.h"

static exec_client_t *
client_of(const oneshot_t *o)
{
    return o->s->link ? exec_link_client(o->s->link) : NULL;
}

/* activity: the op counts as use of the session (its idle clock starts again). */
static oneshot_t *
open_op(gw_session_t *s, json_object *req, session_op_cb cb, void *ud, bool activity, err_t *err)
{
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    if (s->status == SESSION_PAUSED) {
        err_set(err, ERR_BUSY, "the session is PAUSED: resume it first");
        return NULL;
    }
    if (!c) {
        err_set(err, ERR_BUSY, "the runtime is not connected (status %s)",
                session_status_text(s->status));
        return NULL;
    }
    uint32_t ch = exec_client_open(c, req, err);
    if (!ch)
        return NULL;
    oneshot_t *o = xcalloc(1, sizeof *o);
    o->kind = CH_ONESHOT;
    o->s = s;
    o->ch = ch;
    o->cb = cb;
    o->ud = ud;
    o->next = s->oneshots;
    s->oneshots = o;
    exec_client_set_chan_data(c, ch, o);
    if (activity)
        s->last_activity = gw_now();
    return o;
}

int
session_exec_op(gw_session_t *s, json_object *req, session_op_cb cb, void *ud, err_t *err)
{
    if (!open_op(s, req, cb, ud, true, err))
        return -1;
    exec_link_flush(s->link);
    return 0;
}

int
session_probe_op(gw_session_t *s, json_object *req, session_op_cb cb, void *ud, err_t *err)
{
    if (!open_op(s, req, cb, ud, false, err))
        return -1;
    exec_link_flush(s->link);
    return 0;
}

static session_stream_t *
stream_open(gw_session_t *s, json_object *req, const session_stream_cbs_t *cbs,
            session_op_cb on_close, void *ud, bool auto_grant, bool passive, err_t *err)
{
    oneshot_t *o = open_op(s, req, on_close, ud, !passive, err);
    if (!o)
        return NULL;
    o->scbs = cbs;
    o->passive = passive;
    if (!auto_grant)
        exec_client_set_auto_grant(client_of(o), o->ch, false);
    exec_link_flush(s->link);
    return o;
}

session_stream_t *
session_stream_open(gw_session_t *s, json_object *req, const session_stream_cbs_t *cbs,
                    session_op_cb on_close, void *ud, bool auto_grant, err_t *err)
{
    return stream_open(s, req, cbs, on_close, ud, auto_grant, false, err);
}

session_stream_t *
session_probe_stream_open(gw_session_t *s, json_object *req, const session_stream_cbs_t *cbs,
                          session_op_cb on_close, void *ud, err_t *err)
{
    return stream_open(s, req, cbs, on_close, ud, true, true, err);
}

ssize_t
session_stream_send(session_stream_t *o, const void *p, size_t n)
{
    exec_client_t *c = client_of(o);
    if (!c)
        return -1;
    ssize_t k = exec_client_send_data(c, o->ch, p, n);
    if (k > 0) {
        o->s->last_activity = gw_now();
        exec_link_flush(o->s->link);
    }
    return k;
}

int
session_stream_eof(session_stream_t *o)
{
    exec_client_t *c = client_of(o);
    int rc = c ? exec_client_send_eof(c, o->ch) : -1;
    if (rc == 0)
        exec_link_flush(o->s->link);
    return rc;
}

int
session_stream_json(session_stream_t *o, json_object *msg)
{
    exec_client_t *c = client_of(o);
    int rc = c ? exec_client_send_json(c, o->ch, msg) : -1;
    if (rc == 0)
        exec_link_flush(o->s->link);
    return rc;
}

void
session_stream_grant(session_stream_t *o, size_t n)
{
    exec_client_t *c = client_of(o);
    if (!c || !n)
        return;
    exec_client_grant(c, o->ch, (uint32_t)n);
    o->s->last_activity = gw_now();
    exec_link_flush(o->s->link);
}

size_t
session_stream_recv_window(const session_stream_t *o)
{
    exec_client_t *c = client_of(o);
    return c ? exec_client_recv_window(c, o->ch) : 0;
}

void
session_stream_cancel(session_stream_t *o)
{
    exec_client_t *c = client_of(o);
    if (c && exec_client_send_close(c, o->ch, NULL) == 0)
        exec_link_flush(o->s->link);
}

/* ---- the executor link's events ---- */

void
session_oneshot_data(oneshot_t *o, bool is_stderr, const uint8_t *p, size_t n)
{
    if (is_stderr && o->scbs && o->scbs->on_stderr)
        o->scbs->on_stderr(o->ud, p, n);
    else if (o->scbs && o->scbs->on_data)
        o->scbs->on_data(o->ud, p, n);
}

void
session_oneshot_json(oneshot_t *o, json_object *msg)
{
    if (o->scbs && o->scbs->on_json)
        o->scbs->on_json(o->ud, msg);
}

void
session_oneshot_writable(oneshot_t *o)
{
    if (o->scbs && o->scbs->on_writable)
        o->scbs->on_writable(o->ud);
}

void
session_oneshot_eof(oneshot_t *o)
{
    if (o->scbs && o->scbs->on_eof)
        o->scbs->on_eof(o->ud);
}

bool
session_oneshot_closed(gw_session_t *s, uint32_t ch, json_object *res)
{
    for (oneshot_t **pp = &s->oneshots; *pp; pp = &(*pp)->next)
        if ((*pp)->ch == ch) {
            oneshot_t *o = *pp;
            *pp = o->next;
            if (o->cb)
                o->cb(o->ud, res);
            free(o);
            return true;
        }
    return false;
}

void
session_fail_oneshots(gw_session_t *s, const char *why)
{
    while (s->oneshots) {
        oneshot_t *o = s->oneshots;
        s->oneshots = o->next;
        if (o->cb) {
            json_object *e = json_error_new(ERR_BUSY, why);
            o->cb(o->ud, e);
            json_object_put(e);
        }
        free(o);
    }
}
