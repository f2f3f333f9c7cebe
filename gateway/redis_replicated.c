/* redis_replicated.c — batched WAIT 1 for the event log (redis_replicated.h).
 *
 * WAIT's order: it covers every command the connection ran before it. A waiter arrives after
 * its write was answered, so the WAIT sent next covers it; the one in flight may not. A WAIT
 * blocks the connection (the commands behind it wait), hence its short timeout; one that timed
 * out is sent again, for REDIS_REPLICATED_ALONE_MS at most:
 *
 *   holding --(no replica that long)--> asked --(still none on the new connection)--> alone
 *      ^------------------(a WAIT or a probe answers >= 1)-------------------------------'
 *
 * "asked": the connection was made again, which asks the sentinels and checks ROLE, so a
 * primary the sentinels have replaced (cut off from them, its replicas following another) is
 * left rather than written to alone. Every reconnection asks them, so in "asked" and "alone"
 * the connection in use is always one the sentinels named after the replicas went missing. */
#include "redis_replicated.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>

#include "gw.h"
#include "redis_client.h"
#include "xalloc.h"

typedef struct {
    redis_replicated_cb cb;
    void *ud;
} waiter_t;

typedef struct {
    waiter_t *w;
    size_t n, cap;
} batch_t;

static enum { HOLDING, ASKED, ALONE } mode;

static batch_t next;         /* waiting for the next WAIT */
static bool in_flight;       /* a WAIT is out */
static unsigned timeouts;    /* WAITs in a row no replica answered, for the log */
static double missing_since; /* gw_now() of the first of them; 0: a replica answered last */
static double alone_since;   /* gw_now() when events began to be stored alone */
static double probe_sent;    /* alone: gw_now() of the last probe */
static bool probe_in_flight;

static void send_wait(batch_t *b);

static void
batch_add(batch_t *b, redis_replicated_cb cb, void *ud)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        b->w = xrealloc(b->w, b->cap * sizeof *b->w);
    }
    b->w[b->n++] = (waiter_t){cb, ud};
}

/* Answers every waiter of b (and frees b). Waiters may add new ones meanwhile: to next. */
static void
batch_done(batch_t *b, bool ok)
{
    for (size_t i = 0; i < b->n; i++)
        b->w[i].cb(b->w[i].ud, ok);
    free(b->w);
    free(b);
}

static batch_t *
take_next(void)
{
    batch_t *b = xmalloc(sizeof *b);
    *b = next;
    next = (batch_t){0};
    return b;
}

/* The connection went (a NULL reply): the next batch's writes were on it too. */
static void
fail_all(batch_t *b)
{
    in_flight = false;
    batch_done(b, false);
    if (next.n)
        batch_done(take_next(), false);
}

/* After a WAIT answered: the next batch goes out, if any. */
static void
continue_next(void)
{
    in_flight = false;
    if (next.n)
        send_wait(take_next());
}

/* A replica has everything written before the WAIT or probe that said so. */
static void
replica_back(void)
{
    if (mode == ALONE)
        GW_LOG("redis: a replica has the writes again after %.1f s of events stored on the "
               "primary alone",
               gw_now() - alone_since);
    else if (timeouts)
        GW_LOG("redis: a replica has the writes again (after %u WAITs without one)", timeouts);
    mode = HOLDING;
    timeouts = 0;
    missing_since = 0;
}

/* The sentinels named this primary after its replicas went missing, and none has come back:
 * b, and whatever waits, is stored on its word. */
static void
go_alone(batch_t *b)
{
    mode = ALONE;
    alone_since = probe_sent = gw_now();
    GW_LOG("redis: no replica has confirmed a write for %.1f s and the sentinels still name this "
           "primary: events are stored on it alone until one is back (a failover meanwhile "
           "loses them; counted in sp:metrics events_unreplicated)",
           alone_since - missing_since);
    in_flight = false;
    batch_done(b, true);
    if (next.n)
        batch_done(take_next(), true);
}

static void
on_wait(redisReply *r, void *ud)
{
    batch_t *b = ud;
    if (!r) {
        fail_all(b);
        return;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        /* A server that refuses WAIT ("WAIT cannot be used with replica instances": demoted
         * under us; NOPERM) will refuse it again: asking at once would spin. Leave it, as for
         * READONLY: the waiters are answered as for a lost connection, and the event log
         * re-checks what the next primary holds. */
        char why[160];
        snprintf(why, sizeof why, "WAIT refused: %s", r->str);
        redis_client_reconnect(why);
        fail_all(b);
        return;
    }
    if (r->type == REDIS_REPLY_INTEGER && r->integer >= 1) {
        replica_back();
        batch_done(b, true);
        continue_next();
        return;
    }
    /* No replica has them yet (none connected: the one promoted, a primary restarting, the
     * replicas' nodes lost): ask again, with the waiters that came meanwhile; never confirmed
     * without one before the sentinels have been asked. */
    double now = gw_now();
    if (!missing_since)
        missing_since = now;
    if (mode == ASKED) {
        go_alone(b);
        return;
    }
    if ((now - missing_since) * 1000.0 >= REDIS_REPLICATED_ALONE_MS) {
        mode = ASKED;
        char why[160];
        snprintf(why, sizeof why, "no replica has confirmed a write for %.1f s",
                 now - missing_since);
        redis_client_reconnect(why);
        fail_all(b);
        return;
    }
    if (timeouts++ % 50 == 0)
        GW_LOG("redis: no replica has the last writes yet (WAIT %d ms); holding them",
               REDIS_REPLICATED_WAIT_MS);
    for (size_t i = 0; i < next.n; i++)
        batch_add(b, next.w[i].cb, next.w[i].ud);
    free(next.w);
    next = (batch_t){0};
    send_wait(b);
}

static void
send_wait(batch_t *b)
{
    in_flight = true;
    redis_client_cmd(on_wait, b, "WAIT 1 %d", REDIS_REPLICATED_WAIT_MS);
}

static void
on_probe(redisReply *r, void *ud)
{
    (void)ud;
    probe_in_flight = false;
    if (mode == ALONE && r && r->type == REDIS_REPLY_INTEGER && r->integer >= 1)
        replica_back();
}

/* Alone, with writes coming: at most one WAIT a REDIS_REPLICATED_PROBE_MS looks for a replica. */
static void
probe(void)
{
    double now = gw_now();
    if (probe_in_flight || (now - probe_sent) * 1000.0 < REDIS_REPLICATED_PROBE_MS)
        return;
    probe_sent = now;
    probe_in_flight = true;
    redis_client_cmd(on_probe, NULL, "WAIT 1 %d", REDIS_REPLICATED_WAIT_MS);
}

void
redis_replicated(redis_replicated_cb cb, void *ud)
{
    if (!redis_client_sentinel()) {
        cb(ud, true);
        return;
    }
    if (mode == ALONE) {
        probe();
        cb(ud, true);
        return;
    }
    batch_add(&next, cb, ud);
    if (!in_flight)
        send_wait(take_next());
}

bool
redis_replicated_alone(void)
{
    return mode == ALONE;
}
