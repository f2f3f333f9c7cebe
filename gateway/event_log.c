/* event_log.c — per-session event stream: ring + Redis. See event_log.h. */
#include "event_log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gw.h"
#include "json_util.h"
#include "redis_client.h"
#include "xalloc.h"

struct event_log {
    char *sid;
    char key[160];
    uint64_t next_seq;
    uint64_t acked;
    size_t unacked;
    int64_t cap;
    evlog_entry_t ring[EVLOG_RING_EVENTS];
    uint64_t first; /* oldest seq in the ring */
    size_t ring_bytes;
    evlog_wake_fn wake;
    void *ud;
    void (*drained)(void *ud);
    size_t low_water;
    struct log_ref *ref; /* shared with in-flight Redis replies, which may outlive the log */
};

/* The log as in-flight XADD replies see it: NULL once the log is freed. */
typedef struct log_ref {
    event_log_t *log;
    int refs;
} log_ref_t;

typedef struct {
    log_ref_t *ref;
    uint64_t seq;
} ack_t;

static void
ref_put(log_ref_t *r)
{
    if (--r->refs == 0)
        free(r);
}

event_log_t *
evlog_new(const char *session_id, uint64_t next_seq, int64_t cap, evlog_wake_fn wake, void *ud)
{
    event_log_t *l = xcalloc(1, sizeof *l);
    l->sid = xstrdup(session_id);
    snprintf(l->key, sizeof l->key, "sp:session:{%s}:events", session_id);
    l->next_seq = next_seq ? next_seq : 1;
    l->acked = l->next_seq - 1;
    l->first = l->next_seq;
    l->cap = cap;
    l->wake = wake;
    l->ud = ud;
    l->ref = xmalloc(sizeof *l->ref);
    l->ref->log = l;
    l->ref->refs = 1;
    return l;
}

void
evlog_free(event_log_t *l)
{
    if (!l)
        return;
    for (uint64_t s = l->first; s < l->next_seq; s++)
        free(l->ring[s % EVLOG_RING_EVENTS].text);
    l->ref->log = NULL;
    ref_put(l->ref);
    free(l->sid);
    free(l);
}

uint64_t
evlog_next_seq(const event_log_t *l)
{
    return l->next_seq;
}

uint64_t
evlog_acked_seq(const event_log_t *l)
{
    return l->acked;
}

size_t
evlog_unacked(const event_log_t *l)
{
    return l->unacked;
}

void
evlog_on_drain(event_log_t *l, void (*fn)(void *ud), size_t low_water)
{
    l->drained = fn;
    l->low_water = low_water;
}

uint64_t
evlog_first_in_memory(const event_log_t *l)
{
    return l->first;
}

const evlog_entry_t *
evlog_get(const event_log_t *l, uint64_t seq)
{
    if (seq < l->first || seq >= l->next_seq)
        return NULL;
    return &l->ring[seq % EVLOG_RING_EVENTS];
}

static void
on_xadd(redisReply *r, void *ud)
{
    ack_t *a = ud;
    event_log_t *l = a->ref->log;
    if (l) {
        l->unacked--;
        /* Replies arrive in order; a failure leaves acked behind for evlog_resync. */
        if (r && r->type != REDIS_REPLY_ERROR && a->seq == l->acked + 1)
            l->acked = a->seq;
        if (l->drained && l->unacked == l->low_water)
            l->drained(l->ud);
    }
    ref_put(a->ref);
    free(a);
}

static void
xadd(event_log_t *l, const evlog_entry_t *e)
{
    char id[32], maxlen[32];
    snprintf(id, sizeof id, "0-%" PRIu64, e->seq);
    snprintf(maxlen, sizeof maxlen, "%" PRId64, l->cap > 0 ? l->cap : INT64_MAX);
    const char *argv[] = {"XADD", l->key, "MAXLEN", "~", maxlen, id, "e", e->text};
    size_t lens[] = {4, strlen(l->key), 6, 1, strlen(maxlen), strlen(id), 1, e->len};
    ack_t *a = xmalloc(sizeof *a);
    a->ref = l->ref;
    a->ref->refs++;
    a->seq = e->seq;
    l->unacked++;
    rds_cmdv(on_xadd, a, 8, argv, lens);
}

uint64_t
evlog_append_members(event_log_t *l, const char *members, size_t mlen)
{
    uint64_t seq = l->next_seq++;
    /* Drop the oldest ring entries beyond the count or byte bound. */
    while (l->first < seq &&
           (seq - l->first >= EVLOG_RING_EVENTS || l->ring_bytes > EVLOG_RING_BYTES)) {
        evlog_entry_t *old = &l->ring[l->first % EVLOG_RING_EVENTS];
        l->ring_bytes -= old->len;
        free(old->text);
        old->text = NULL;
        l->first++;
    }
    buf_t t = BUF_INIT;
    buf_printf(&t, "{\"seq\":%" PRIu64 ",\"ts\":%.6f%s", seq, gw_wall(), mlen ? "," : "");
    buf_append(&t, members, mlen);
    buf_puts(&t, "}");
    evlog_entry_t *e = &l->ring[seq % EVLOG_RING_EVENTS];
    e->seq = seq;
    e->len = t.len;
    e->text = buf_steal(&t);
    l->ring_bytes += e->len;
    xadd(l, e);
    if (l->wake)
        l->wake(l->ud, seq);
    return seq;
}

uint64_t
evlog_append(event_log_t *l, json_object *ev)
{
    size_t len;
    const char *txt = json_text(ev, &len);
    /* txt is "{...}": keep the members between the braces */
    uint64_t seq = evlog_append_members(l, len > 2 ? txt + 1 : "", len > 2 ? len - 2 : 0);
    json_object_put(ev);
    return seq;
}

void
evlog_resync(event_log_t *l)
{
    for (uint64_t s = l->acked + 1; s < l->next_seq; s++) {
        const evlog_entry_t *e = evlog_get(l, s);
        if (e)
            xadd(l, e);
    }
}

/* ---- reading back from Redis ---- */

typedef struct {
    evlog_fetch_cb cb;
    void *ud;
    uint64_t from;
} fetch_t;

static void
on_xrange(redisReply *r, void *ud)
{
    fetch_t *f = ud;
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        f->cb(f->ud, NULL, -1);
        free(f);
        return;
    }
    evlog_entry_t *out = xcalloc(r->elements + 1, sizeof *out);
    int n = 0;
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *item = r->element[i];
        if (item->type != REDIS_REPLY_ARRAY || item->elements != 2)
            continue;
        redisReply *id = item->element[0], *fields = item->element[1];
        uint64_t seq =
            strtoull(strchr(id->str, '-') ? strchr(id->str, '-') + 1 : id->str, NULL, 10);
        if (n == 0 && seq > f->from) {
            /* Redis trimmed what the reader asked for: say so, with the exact range. */
            char *t = xasprintf("{\"seq\":%" PRIu64 ",\"type\":\"truncated\",\"from\":%" PRIu64
                                ",\"to\":%" PRIu64 ",\"reason\":\"stream cap reached\"}",
                                f->from, f->from, seq - 1);
            out[n].seq = f->from;
            out[n].text = t;
            out[n].len = strlen(t);
            n++;
        }
        for (size_t k = 0; k + 1 < fields->elements; k += 2)
            if (strcmp(fields->element[k]->str, "e") == 0) {
                out[n].seq = seq;
                out[n].text = xstrndup(fields->element[k + 1]->str, fields->element[k + 1]->len);
                out[n].len = fields->element[k + 1]->len;
                n++;
            }
    }
    f->cb(f->ud, out, n);
    for (int i = 0; i < n; i++)
        free(out[i].text);
    free(out);
    free(f);
}

void
evlog_fetch(const char *session_id, uint64_t from, int max, evlog_fetch_cb cb, void *ud)
{
    fetch_t *f = xmalloc(sizeof *f);
    f->cb = cb;
    f->ud = ud;
    f->from = from;
    char key[160];
    snprintf(key, sizeof key, "sp:session:{%s}:events", session_id);
    rds_cmd(on_xrange, f, "XRANGE %s 0-%" PRIu64 " + COUNT %d", key, from, max);
}
