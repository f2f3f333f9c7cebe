/* durable.c — actions that outlive their connection. See durable.h. */
#include "durable.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"
#include "json_util.h"
#include "safe_id.h"
#include "xalloc.h"

static durable_t *records; /* newest first */

static durable_t *
find(const char *id)
{
    for (durable_t *d = records; d; d = d->next)
        if (strcmp(d->id, id) == 0)
            return d;
    return NULL;
}

static void
unlink_free(durable_t *d)
{
    for (durable_t **pp = &records; *pp; pp = &(*pp)->next)
        if (*pp == d) {
            *pp = d->next;
            break;
        }
    loop_timer_stop(g_exec.loop, &d->wake);
    buf_free(&d->unacked);
    json_object_put(d->result);
    free(d);
}

int
durable_open(channel_t *ch, const char *id, err_t *err)
{
    if (!safe_id_valid(id, DURABLE_ID_MAX, "_.:-"))
        return err_set(err, ERR_BAD_REQ, "an action \"id\" is 1-%d characters of [A-Za-z0-9_.:-]",
                       DURABLE_ID_MAX);
    if (find(id))
        return err_set(err, EEXIST, "action %s exists: take it over with action.attach", id);
    durable_t *d = xcalloc(1, sizeof *d);
    snprintf(d->id, sizeof d->id, "%s", id);
    d->ch = ch;
    d->next = records;
    records = d;
    ch->dur = d;
    return 0;
}

int64_t
durable_room(const durable_t *d)
{
    const channel_t *ch = d->ch;
    if (!ch->conn)
        return d->unacked.len < DURABLE_ORPHAN_MAX ? DURABLE_ORPHAN_MAX - d->unacked.len : 0;
    return d->sent < d->unacked.len ? 0 : ch->send_credit;
}

/* Sends kept bytes within the credit; once all are out, a finished record's CLOSE. Returns 0 if
 * the channel was closed (and freed). */
static int
pump(durable_t *d)
{
    channel_t *ch = d->ch;
    if (!ch || !ch->conn)
        return 1;
    size_t k = d->unacked.len - d->sent;
    if (ch->send_credit <= 0)
        k = 0;
    else if ((int64_t)k > ch->send_credit)
        k = (size_t)ch->send_credit;
    chan_resend(ch, d->unacked.data + d->sent, k);
    d->sent += k;
    if (d->finished && d->sent == d->unacked.len) {
        d->ch = NULL;
        chan_send_close(ch, json_object_get(d->result));
        return 0;
    }
    return 1;
}

void
durable_write(durable_t *d, const void *p, size_t n)
{
    buf_append(&d->unacked, p, n);
    pump(d);
}

static void
drop_front(durable_t *d, size_t n)
{
    if (n > d->unacked.len) /* more than was kept: a confused client; keep nothing extra */
        n = d->unacked.len;
    buf_consume(&d->unacked, n);
    d->acked += n;
    d->sent = d->sent > n ? d->sent - n : 0;
}

int
durable_acked(durable_t *d, size_t n)
{
    drop_front(d, n);
    return pump(d);
}

/* Drops the oldest delivered records beyond DURABLE_KEEP: a client that never releases must
 * not grow the executor without bound. It is logged: normally the gateway releases each one
 * within a Redis round trip. */
static void
enforce_keep(void)
{
    int finished = 0;
    durable_t *oldest = NULL;
    for (durable_t *d = records; d; d = d->next)
        if (d->finished && !d->ch) {
            finished++;
            oldest = d;
        }
    if (finished > DURABLE_KEEP && oldest) {
        fprintf(stderr, "sandpipe-executor: dropping unreleased result of action %s\n", oldest->id);
        unlink_free(oldest);
    }
}

bool
durable_closed(durable_t *d, json_object *result)
{
    json_object *keep = json_object_get(result); /* before the put: it may be the same */
    json_object_put(d->result);
    d->result = keep;
    d->finished = true;
    channel_t *ch = d->ch;
    if (ch->conn && d->sent < d->unacked.len) {
        ch->ops = NULL; /* the op is done; kept bytes go out as credit comes, then CLOSE */
        ch->owner = NULL;
        return false;
    }
    d->ch = NULL;
    enforce_keep();
    return true;
}

/* An orphan's op may be waiting for credit its lost client will never send: woken on the next
 * turn of the loop (not from inside the connection's teardown), it reads on into the record, up
 * to DURABLE_ORPHAN_MAX (durable_room), so the command is not blocked on its output meanwhile. */
static void
on_wake(ltimer_t *t)
{
    durable_t *d = t->data;
    channel_t *ch = d->ch;
    if (ch && !ch->conn && ch->ops && ch->ops->resume)
        ch->ops->resume(ch);
}

void
durable_orphaned(durable_t *d)
{
    d->sent = 0;
    loop_timer_start(g_exec.loop, &d->wake, 0, on_wake, d);
}

void
durable_forget(durable_t *d)
{
    unlink_free(d);
}

/* ---- ops ---- */

static json_object *
describe(const durable_t *d)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "id", d->id);
    json_set_bool(o, "running", !d->finished);
    json_set_int(o, "acked", (int64_t)d->acked);
    json_set_int(o, "unacked", (int64_t)d->unacked.len);
    return o;
}

void
durable_op_attach(channel_t *ch, json_object *req)
{
    const char *id = json_get_str(req, "id", "");
    json_object *jo = json_get(req, "offset");
    int64_t offset = jo ? json_object_get_int64(jo) : 0;
    durable_t *d = find(id);
    if (!d) {
        char msg[160];
        snprintf(msg, sizeof msg, "no action with id \"%.64s\": never started, or released", id);
        chan_close_error(ch, ERR_NOT_FOUND, msg);
        return;
    }
    if (offset < 0 || (jo && !json_object_is_type(jo, json_type_int)) ||
        (uint64_t)offset > d->acked + d->unacked.len) {
        char msg[160];
        snprintf(msg, sizeof msg, "offset must be an integer in 0..%" PRIu64,
                 d->acked + d->unacked.len);
        chan_close_error(ch, ERR_BAD_REQ, msg);
        return;
    }
    if (d->ch && d->ch->conn) /* a client that still holds it (hung, or being replaced) */
        chan_orphan(d->ch, "taken over by another connection");
    /* Bytes below the offset are stored: forgotten. The event describes the record after that,
     * so its "acked" is where the kept bytes begin from now on, the base the client counts its
     * credit from (it stores before it acknowledges: the offset is often past the old "acked",
     * and credit counted from the old one would drop bytes never sent). */
    bool lost = (uint64_t)offset < d->acked;
    if (!lost)
        drop_front(d, (size_t)((uint64_t)offset - d->acked));
    json_object *ev = describe(d);
    json_set_str(ev, "event", "attached");
    if (lost) {
        /* The client lost bytes it had acknowledged (its store went back in time): say which,
         * they cannot be sent again. */
        json_set_int(ev, "lost_from", offset);
        json_set_int(ev, "lost_to", (int64_t)d->acked);
    }
    if (d->ch) {
        ch = chan_adopt(ch, d->ch);
    } else {
        d->ch = ch;
        ch->dur = d;
    }
    d->sent = 0;
    chan_send_json(ch, ev);
    json_object_put(ev);
    if (pump(d) && !d->finished && ch->ops && ch->ops->resume)
        ch->ops->resume(ch);
}

void
durable_op_release(channel_t *ch, json_object *req)
{
    durable_t *d = find(json_get_str(req, "id", ""));
    if (d && (!d->finished || d->ch)) {
        chan_close_error(ch, ERR_BUSY, "the action is still running or being delivered");
        return;
    }
    json_object *r = json_object_new_object();
    json_set_bool(r, "released", d != NULL);
    if (d)
        unlink_free(d);
    chan_close(ch, r);
}

void
durable_op_list(channel_t *ch, json_object *req)
{
    (void)req;
    json_object *arr = json_object_new_array();
    for (durable_t *d = records; d; d = d->next)
        json_object_array_add(arr, describe(d));
    json_object *r = json_object_new_object();
    json_set(r, "actions", arr);
    chan_close(ch, r);
}
