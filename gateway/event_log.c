/* event_log.c — per-session event stream: ring + Redis, store then publish. See event_log.h. */
#include "event_log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gw.h"
#include "json_util.h"
#include "metrics.h"
#include "redis_client.h"
#include "redis_replicated.h"
#include "xalloc.h"

/* The byte cap is enforced in steps: a checkpoint every cap/CAP_STEPS bytes stored. */
#define CAP_STEPS   16
#define CHECKPOINTS (CAP_STEPS + 2)

struct event_log {
    char *sid;
    char key[160];
    uint64_t next_seq;
    uint64_t acked; /* every seq <= acked is stored (or known lost) */
    uint64_t sent;  /* XADDs issued for every seq <= sent */
    bool stalled;   /* a write failed: nothing more is sent until a resync */
    bool resyncing; /* the resync's XRANGE is in flight */
    size_t unacked_bytes;
    int64_t cap_events, cap_bytes;
    /* seq lives at ring[seq % ring_cap]; ring_cap, a power of two, grows as events come, up
     * to EVENT_LOG_RING_EVENTS, and shrinks again with event_log_shrink: an idle session holds
     * a few entries, not 2048 (64 KiB). */
    event_log_entry_t *ring;
    size_t ring_cap;
    uint64_t first; /* oldest seq in the ring */
    size_t ring_bytes;
    event_log_stored_fn stored;
    void *ud;
    /* byte cap: bytes stored so far, and checkpoints (seq, bytes stored before it) */
    uint64_t stored_bytes;
    struct {
        uint64_t seq, before;
    } cp[CHECKPOINTS];
    int ncp;
    struct log_ref *ref; /* shared with in-flight Redis replies, which may outlive the log */
};

/* The log as in-flight replies see it: NULL once the log is freed. */
typedef struct log_ref {
    event_log_t *log;
    int refs;
} log_ref_t;

typedef struct {
    log_ref_t *ref;
    uint64_t seq;
    bool upto; /* the replication wait covers every written event <= seq, not seq alone */
} ack_t;

static void send_from(event_log_t *l);

static log_ref_t *
ref_get(event_log_t *l)
{
    l->ref->refs++;
    return l->ref;
}

static void
ref_put(log_ref_t *r)
{
    if (--r->refs == 0)
        free(r);
}

event_log_t *
event_log_new(const char *session_id, uint64_t next_seq, int64_t cap_events, int64_t cap_bytes,
              event_log_stored_fn stored, void *ud)
{
    event_log_t *l = xcalloc(1, sizeof *l);
    l->sid = xstrdup(session_id);
    snprintf(l->key, sizeof l->key, "sp:session:{%s}:events", session_id);
    l->next_seq = next_seq ? next_seq : 1;
    l->acked = l->sent = l->next_seq - 1;
    l->first = l->next_seq;
    l->cap_events = cap_events;
    l->cap_bytes = cap_bytes;
    l->stored = stored;
    l->ud = ud;
    l->ref = xmalloc(sizeof *l->ref);
    l->ref->log = l;
    l->ref->refs = 1;
    return l;
}

void
event_log_free(event_log_t *l)
{
    if (!l)
        return;
    if (l->acked + 1 < l->next_seq)
        GW_LOG("session %s: %" PRIu64 " events not confirmed by Redis when the session went away",
               l->sid, l->next_seq - 1 - l->acked);
    for (uint64_t s = l->first; s < l->next_seq; s++)
        free(l->ring[s % l->ring_cap].text);
    free(l->ring);
    l->ref->log = NULL;
    ref_put(l->ref);
    free(l->sid);
    free(l);
}

uint64_t
event_log_next_seq(const event_log_t *l)
{
    return l->next_seq;
}

uint64_t
event_log_acked_seq(const event_log_t *l)
{
    return l->acked;
}

static size_t
unconfirmed(const event_log_t *l)
{
    return (size_t)(l->next_seq - 1 - l->acked);
}

bool
event_log_full(const event_log_t *l)
{
    return unconfirmed(l) >= EVENT_LOG_UNCONFIRMED_MAX ||
           l->unacked_bytes >= EVENT_LOG_UNCONFIRMED_BYTE;
}

uint64_t
event_log_first_in_memory(const event_log_t *l)
{
    return l->first;
}

static event_log_entry_t *
slot(const event_log_t *l, uint64_t seq)
{
    if (seq < l->first || seq >= l->next_seq)
        return NULL;
    return &l->ring[seq % l->ring_cap];
}

/* The ring re-laid out for cap entries, a power of two holding the events [first, end). */
static void
ring_resize(event_log_t *l, size_t cap, uint64_t end)
{
    event_log_entry_t *ring = xcalloc(cap, sizeof *ring);
    for (uint64_t s = l->first; s < end; s++)
        ring[s % cap] = l->ring[s % l->ring_cap];
    free(l->ring);
    l->ring = ring;
    l->ring_cap = cap;
}

size_t
event_log_ring_capacity(const event_log_t *l)
{
    return l->ring_cap;
}

void
event_log_shrink(event_log_t *l, size_t keep)
{
    while (l->first < l->next_seq && l->next_seq - l->first > keep && l->first <= l->acked) {
        event_log_entry_t *old = &l->ring[l->first % l->ring_cap];
        l->ring_bytes -= old->len;
        free(old->text);
        old->text = NULL;
        l->first++;
    }
    size_t cap = EVENT_LOG_RING_MIN;
    while (cap < l->next_seq - l->first)
        cap *= 2;
    if (cap < l->ring_cap)
        ring_resize(l, cap, l->next_seq);
}

const event_log_entry_t *
event_log_peek(const event_log_t *l, uint64_t seq)
{
    return slot(l, seq);
}

const event_log_entry_t *
event_log_get(const event_log_t *l, uint64_t seq)
{
    return seq <= l->acked ? slot(l, seq) : NULL;
}

/* ---- the byte cap ---- */

static void
account_stored(event_log_t *l, const event_log_entry_t *e)
{
    if (l->cap_bytes <= 0)
        return;
    uint64_t step = (uint64_t)l->cap_bytes / CAP_STEPS;
    if (l->ncp == 0 || l->stored_bytes - l->cp[l->ncp - 1].before >= step) {
        if (l->ncp == CHECKPOINTS) { /* cannot happen with trimming below; keep the newest */
            memmove(l->cp, l->cp + 1, sizeof l->cp[0] * (CHECKPOINTS - 1));
            l->ncp--;
        }
        l->cp[l->ncp].seq = e->seq;
        l->cp[l->ncp].before = l->stored_bytes;
        l->ncp++;
    }
    l->stored_bytes += e->len;
    /* Over the cap: trim whole steps from the front (XTRIM MINID), oldest first. */
    if (l->stored_bytes - l->cp[0].before <= (uint64_t)l->cap_bytes)
        return;
    int keep = 1;
    while (keep < l->ncp - 1 && l->stored_bytes - l->cp[keep].before > (uint64_t)l->cap_bytes)
        keep++;
    if (keep >= l->ncp)
        return;
    char minid[32];
    snprintf(minid, sizeof minid, "0-%" PRIu64, l->cp[keep].seq);
    redis_client_cmd(NULL, NULL, "XTRIM %s MINID %s", l->key, minid);
    memmove(l->cp, l->cp + keep, sizeof l->cp[0] * (size_t)(l->ncp - keep));
    l->ncp -= keep;
}

/* ---- writing ---- */

/* acked moves over every stored entry in a row; readers are told. */
static void
advance(event_log_t *l)
{
    uint64_t before = l->acked;
    event_log_entry_t *e;
    while ((e = slot(l, l->acked + 1)) && e->stored) {
        l->acked++;
        l->unacked_bytes -= e->len;
        account_stored(l, e);
    }
    if (l->acked > before && l->stored)
        l->stored(l->ud, l->acked);
}

static bool
already_there(const redisReply *r)
{
    /* A re-sent event Redis had after all: "equal or smaller than the target stream top". */
    return r && r->type == REDIS_REPLY_ERROR && strstr(r->str, "equal or smaller");
}

/* The written events a covers are on a replica (or the primary has none): stored. Not ok:
 * the connection went first, and the resync on the next one finds out what is there. */
static void
on_replicated(void *ud, bool ok)
{
    ack_t *a = ud;
    event_log_t *l = a->ref->log;
    if (l && ok) {
        uint64_t n = 0;
        for (uint64_t s = a->upto ? l->acked + 1 : a->seq; s <= a->seq; s++) {
            event_log_entry_t *e = slot(l, s);
            if (e && e->written && !e->stored) {
                e->stored = true;
                n++;
            }
        }
        if (redis_replicated_alone()) /* on the primary's word only (redis_replicated.h) */
            metrics_events_unreplicated(n);
        advance(l);
    } else if (l) {
        l->stalled = true;
    }
    ref_put(a->ref);
    free(a);
}

static void
on_xadd(redisReply *r, void *ud)
{
    ack_t *a = ud;
    event_log_t *l = a->ref->log;
    if (l) {
        event_log_entry_t *e = slot(l, a->seq);
        bool ok = r && (r->type != REDIS_REPLY_ERROR || already_there(r));
        if (ok && e && !e->stored) {
            e->written = true;
            redis_replicated(on_replicated, a); /* at once unless in sentinel mode */
            return;
        } else if (!ok && !l->stalled) {
            /* Hold everything after it: a later event stored before this one would make it
             * impossible to store (ids only grow). event_log_resync takes it from here. */
            l->stalled = true;
            if (r)
                GW_LOG("session %s: event %" PRIu64 " refused by Redis (%s); holding events",
                       l->sid, a->seq, r->str);
        }
    }
    ref_put(a->ref);
    free(a);
}

static void
xadd(event_log_t *l, const event_log_entry_t *e)
{
    char id[32], maxlen[32];
    snprintf(id, sizeof id, "0-%" PRIu64, e->seq);
    snprintf(maxlen, sizeof maxlen, "%" PRId64, l->cap_events > 0 ? l->cap_events : INT64_MAX);
    const char *argv[] = {"XADD", l->key, "MAXLEN", "~", maxlen, id, "e", e->text};
    size_t lens[] = {4, strlen(l->key), 6, 1, strlen(maxlen), strlen(id), 1, e->len};
    ack_t *a = xmalloc(sizeof *a);
    a->ref = ref_get(l);
    a->seq = e->seq;
    a->upto = false;
    redis_client_cmdv(on_xadd, a, 8, argv, lens);
}

/* Issues the XADDs not yet sent, in order, unless the log is stalled. */
static void
send_from(event_log_t *l)
{
    while (!l->stalled && !l->resyncing && l->sent + 1 < l->next_seq) {
        const event_log_entry_t *e = slot(l, l->sent + 1);
        l->sent++;
        if (!e || e->stored || e->written)
            continue;
        if (!redis_client_connected()) { /* fails at once: hold until the reconnection resyncs */
            l->stalled = true;
            l->sent--;
            return;
        }
        xadd(l, e);
    }
}

/* An unconfirmed event must leave the ring (it is full of them: Redis has been away for
 * long): it is lost, and said so in its place (readers of Redis see the gap as truncated). */
static void
drop_unconfirmed(event_log_t *l, event_log_entry_t *old)
{
    GW_LOG("session %s: event %" PRIu64 " dropped unconfirmed (Redis unavailable too long)", l->sid,
           old->seq);
    l->unacked_bytes -= old->len;
    if (old->seq == l->acked + 1)
        l->acked++;
    if (l->sent < old->seq)
        l->sent = old->seq;
}

uint64_t
event_log_append_members(event_log_t *l, const char *members, size_t mlen)
{
    uint64_t seq = l->next_seq++;
    /* Drop the oldest stored ring entries beyond the count or byte bound. */
    while (l->first < seq &&
           (seq - l->first >= EVENT_LOG_RING_EVENTS || l->ring_bytes > EVENT_LOG_RING_BYTES)) {
        event_log_entry_t *old = &l->ring[l->first % l->ring_cap];
        if (old->seq > l->acked) {
            if (seq - l->first < EVENT_LOG_RING_EVENTS)
                break; /* only over the byte bound: keep it until stored */
            drop_unconfirmed(l, old);
        }
        l->ring_bytes -= old->len;
        free(old->text);
        old->text = NULL;
        l->first++;
    }
    if (seq - l->first >= l->ring_cap) /* below the count bound: room for one more */
        ring_resize(l, l->ring_cap ? l->ring_cap * 2 : EVENT_LOG_RING_MIN, seq);
    buf_t t = BUF_INIT;
    buf_printf(&t, "{\"seq\":%" PRIu64 ",\"ts\":%.6f%s", seq, gw_wall(), mlen ? "," : "");
    buf_append(&t, members, mlen);
    buf_puts(&t, "}");
    event_log_entry_t *e = &l->ring[seq % l->ring_cap];
    e->seq = seq;
    e->len = t.len;
    e->text = buf_steal(&t);
    e->stored = false;
    e->written = false;
    l->ring_bytes += e->len;
    l->unacked_bytes += e->len;
    metrics_events(1);
    send_from(l);
    return seq;
}

uint64_t
event_log_append(event_log_t *l, json_object *ev)
{
    size_t len;
    const char *txt = json_text(ev, &len);
    /* txt is "{...}": keep the members between the braces */
    uint64_t seq = event_log_append_members(l, len > 2 ? txt + 1 : "", len > 2 ? len - 2 : 0);
    json_object_put(ev);
    return seq;
}

/* ---- resync: find out what Redis has, re-send the rest ---- */

static uint64_t
id_seq(const char *id)
{
    const char *dash = strchr(id, '-');
    return strtoull(dash ? dash + 1 : id, NULL, 10);
}

static void
on_resync_range(redisReply *r, void *ud)
{
    log_ref_t *ref = ud;
    event_log_t *l = ref->log;
    ref_put(ref);
    if (!l)
        return;
    l->resyncing = false;
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return; /* still stalled: the next tick or reconnection tries again */
    /* What the old connection's server confirmed counts for nothing here: after a failover
     * the new primary may not have it. Only what this one lists is written. */
    for (uint64_t s = l->acked + 1; s < l->next_seq; s++) {
        event_log_entry_t *e = slot(l, s);
        if (e && !e->stored)
            e->written = false;
    }
    uint64_t top = 0;
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *item = r->element[i];
        if (item->type != REDIS_REPLY_ARRAY || item->elements < 1 ||
            item->element[0]->type != REDIS_REPLY_STRING)
            continue;
        uint64_t seq = id_seq(item->element[0]->str);
        event_log_entry_t *e = slot(l, seq);
        if (e && !e->stored)
            e->written = true;
        if (seq > top)
            top = seq;
    }
    /* Below the newest stored id, a missing event can no longer be added (stream ids only
     * grow): count it as lost. Readers of Redis see the gap as a "truncated" event. */
    for (uint64_t s = l->acked + 1; s < top; s++) {
        event_log_entry_t *e = slot(l, s);
        if (e && !e->stored && !e->written) {
            GW_LOG("session %s: event %" PRIu64 " lost by Redis", l->sid, s);
            e->stored = true;
            char *stub = xasprintf("{\"seq\":%" PRIu64 ",\"type\":\"truncated\",\"from\":%" PRIu64
                                   ",\"to\":%" PRIu64 ",\"reason\":\"lost by the event store\"}",
                                   s, s, s);
            l->ring_bytes += strlen(stub);
            l->ring_bytes -= e->len;
            l->unacked_bytes += strlen(stub);
            l->unacked_bytes -= e->len;
            free(e->text);
            e->text = stub;
            e->len = strlen(stub);
        }
    }
    advance(l);
    l->sent = l->acked;
    l->stalled = false;
    if (top > l->acked) {
        /* Their confirmation went with the connection, or the old primary's with it (a
         * failover): stored once a replica has them (redis_replicated.h). */
        GW_LOG("session %s: Redis has events %" PRIu64 "-%" PRIu64 " not confirmed yet", l->sid,
               l->acked + 1, top);
        ack_t *a = xmalloc(sizeof *a);
        a->ref = ref_get(l);
        a->seq = top;
        a->upto = true;
        redis_replicated(on_replicated, a);
    }
    send_from(l);
}

void
event_log_resync(event_log_t *l)
{
    if (l->resyncing || !redis_client_connected())
        return;
    if (l->acked + 1 >= l->next_seq) {
        l->stalled = false;
        l->sent = l->acked;
        return;
    }
    if (!l->stalled && l->sent + 1 >= l->next_seq)
        return;        /* everything is in flight on the live connection */
    l->stalled = true; /* nothing new goes out until we know what Redis has */
    l->resyncing = true;
    char from[32], count[32];
    snprintf(from, sizeof from, "0-%" PRIu64, l->acked + 1);
    snprintf(count, sizeof count, "%" PRIu64, l->next_seq - l->acked);
    /* XRANGE returns the fields too; the count is bounded by the unconfirmed events */
    if (redis_client_cmd(on_resync_range, ref_get(l), "XRANGE %s %s + COUNT %s", l->key, from,
                         count) < 0)
        l->resyncing = false;
}

/* ---- reading back from Redis ---- */

typedef struct {
    event_log_fetch_cb cb;
    void *ud;
    uint64_t from;
} fetch_t;

static void
add_truncated(event_log_entry_t *out, int *n, uint64_t from, uint64_t to, const char *why)
{
    char *t = xasprintf("{\"seq\":%" PRIu64 ",\"type\":\"truncated\",\"from\":%" PRIu64
                        ",\"to\":%" PRIu64 ",\"reason\":\"%s\"}",
                        from, from, to, why);
    out[*n].seq = from;
    out[*n].text = t;
    out[*n].len = strlen(t);
    (*n)++;
}

static void
on_xrange(redisReply *r, void *ud)
{
    fetch_t *f = ud;
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        f->cb(f->ud, NULL, -1);
        free(f);
        return;
    }
    /* at most one synthesized event per entry (for the gap before it) */
    event_log_entry_t *out = xcalloc(2 * r->elements + 1, sizeof *out);
    int n = 0;
    uint64_t expect = f->from;
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *item = r->element[i];
        if (item->type != REDIS_REPLY_ARRAY || item->elements != 2)
            continue;
        redisReply *id = item->element[0], *fields = item->element[1];
        uint64_t seq = id_seq(id->str);
        if (seq > expect) /* say what is missing, with the exact range */
            add_truncated(out, &n, expect, seq - 1,
                          n == 0 ? "stream cap reached" : "events missing from the stream");
        expect = seq + 1;
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
event_log_fetch(const char *session_id, uint64_t from, int max, event_log_fetch_cb cb, void *ud)
{
    fetch_t *f = xmalloc(sizeof *f);
    f->cb = cb;
    f->ud = ud;
    f->from = from;
    char key[160];
    snprintf(key, sizeof key, "sp:session:{%s}:events", session_id);
    redis_client_cmd(on_xrange, f, "XRANGE %s 0-%" PRIu64 " + COUNT %d", key, from, max);
}
