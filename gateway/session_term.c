/* session_term.c — raw terminals on a session's executor. A terminal belongs to the session,
 * not to a connection: its output goes into a ring numbered by byte offset, a client reads it
 * from any offset the ring still holds, and a dropped connection leaves the terminal waiting
 * --term-grace seconds for a client to take it back (docs/api.md, "Re-attaching").
 *
 * Credit: the executor may send up to GW_TERM_RING bytes past what the client consumed (acked,
 * or written to its socket for a client that does not ack), so the ring always holds
 * everything from the consumed offset on and the PTY is not read beyond it: a client that
 * stops reading pauses only its own terminal (ttyd's lesson), and nothing it may still ask for
 * is overwritten. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "session_int.h"
#include "xalloc.h"

static exec_client_t *
client_of(const gw_term_t *t)
{
    return t->s && t->ch && t->s->link ? exec_link_client(t->s->link) : NULL;
}

/* Lets the executor send up to consumed + GW_TERM_RING, in steps of a quarter of it: a CREDIT
 * frame per piece written to the client cost a write here and a wake-up in the executor for
 * every 4 KiB of streamed output. */
void
session_term_grant(gw_term_t *t)
{
    exec_client_t *c = client_of(t);
    uint64_t want = t->consumed + GW_TERM_RING;
    if (!c || t->reattach || want < t->limit + GW_TERM_RING / 4)
        return;
    uint64_t n = want - t->limit;
    /* CREDIT frames carry a u32; GW_TERM_RING fits many times over */
    exec_client_grant(c, t->ch, (uint32_t)n);
    t->limit = want;
    exec_link_flush(t->s->link);
}

gw_term_t *
session_term_open(gw_session_t *s, int cols, int rows, err_t *err)
{
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    if (!c || s->status == SESSION_PAUSED) {
        err_set(err, ERR_BUSY, "the runtime is not connected (status %s)",
                session_status_text(s->status));
        return NULL;
    }
    int n = 0;
    for (gw_term_t *t = s->terms; t; t = t->next)
        n++;
    if (n >= GW_TERM_MAX) {
        err_set(err, ERR_BUSY,
                "the session has %d terminals (the most it may hold): close one, or wait for "
                "a dropped one's grace to pass",
                n);
        return NULL;
    }
    char id[16];
    snprintf(id, sizeof id, "t%u", s->term_counter + 1);
    /* with an id, the executor keeps the shell when this gateway goes away (takeover) */
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "terminal");
    json_set_int(req, "cols", cols);
    json_set_int(req, "rows", rows);
    json_set_str(req, "id", id);
    json_set_int(req, "grace", g_gw.cfg.term_grace > 0 ? g_gw.cfg.term_grace : 1);
    uint32_t ch = exec_client_open(c, req, err);
    json_object_put(req);
    if (!ch)
        return NULL;
    s->term_counter++;
    gw_term_t *t = session_term_new(s, id);
    t->ch = ch;
    exec_client_set_chan_data(c, ch, t);
    /* credit is ours to give (grant()); the channel starts with the executor's window */
    exec_client_set_auto_grant(c, ch, false);
    t->limit = exec_client_recv_window(c, ch);
    session_term_grant(t);
    s->last_activity = gw_now();
    exec_link_flush(s->link);
    session_terms_save(s);
    return t;
}

gw_term_t *
session_term_new(gw_session_t *s, const char *id)
{
    gw_term_t *t = xcalloc(1, sizeof *t);
    t->kind = CH_TERM;
    t->s = s;
    snprintf(t->id, sizeof t->id, "%s", id);
    term_ring_init(&t->ring, GW_TERM_RING);
    t->detached_at = gw_now();
    t->next = s->terms;
    s->terms = t;
    return t;
}

gw_term_t *
session_term_find(gw_session_t *s, const char *id)
{
    for (gw_term_t *t = s->terms; t; t = t->next)
        if (!strcmp(t->id, id))
            return t;
    return NULL;
}

const char *
session_term_id(const gw_term_t *t)
{
    return t->id;
}

const term_ring_t *
session_term_ring(const gw_term_t *t)
{
    return &t->ring;
}

bool
session_term_ended(const gw_term_t *t, int *exit_code)
{
    if (t->ended && exit_code)
        *exit_code = t->exit_code;
    return t->ended;
}

bool
session_term_reattaching(const gw_term_t *t)
{
    return t->reattach;
}

/* Input queued (inq) pauses the client's reading; the last of it sent lets it read again. */
static void
pause_client(gw_term_t *t, bool paused)
{
    if (t->client && t->client->pause)
        t->client->pause(t->client, paused);
}

void
session_term_attach(gw_term_t *t, gw_term_client_t *c, bool acking)
{
    gw_term_client_t *old = t->client;
    t->client = c;
    t->acking = acking;
    if (old && old != c)
        old->gone(old, true);
    if (t->inq.len)
        pause_client(t, true);
}

void
session_term_detach(gw_term_t *t, gw_term_client_t *c)
{
    if (t->client != c)
        return;
    t->client = NULL;
    t->detached_at = gw_now();
}

/* Typed while the terminal is being taken back: sent once it is (a paste's worth at most). */
#define TYPEIN_MAX (64 * 1024)
/* Queued past the executor's window: the client is paused at once, so this holds at most what
 * it sent before that took effect (a message, up to 1 MiB); the bound is a guard. */
#define INQ_MAX (4 * 1024 * 1024)

/* Sends queued input within the executor's credit; the client reads on once all of it went, or
 * (paused false: it is not yet) stops reading while some waits. */
static void
send_queued(gw_term_t *t, bool paused)
{
    exec_client_t *c = t->reattach ? NULL : client_of(t);
    size_t sent = 0;
    while (c && sent < t->inq.len) {
        ssize_t k = exec_client_send_data(c, t->ch, t->inq.data + sent, t->inq.len - sent);
        if (k < 0) {
            GW_LOG("session %s: terminal %s: %zu bytes of input dropped (the channel failed)",
                   t->s->id, t->id, t->inq.len - sent);
            sent = t->inq.len;
        }
        if (k <= 0)
            break;
        sent += (size_t)k;
    }
    buf_consume(&t->inq, sent);
    if (paused != (t->inq.len > 0))
        pause_client(t, !paused);
    if (sent)
        exec_link_flush(t->s->link); /* last: a failed write may end the session, t with it */
}

void
session_term_input(gw_term_t *t, const void *p, size_t n)
{
    if (t->ended)
        return;
    if (t->reattach) {
        if (t->typein.len + n > TYPEIN_MAX) {
            GW_LOG("session %s: terminal %s: %zu bytes of input dropped while re-attaching",
                   t->s->id, t->id, n);
            return;
        }
        buf_append(&t->typein, p, n);
        return;
    }
    if (!client_of(t))
        return;
    if (t->inq.len + n > INQ_MAX) {
        GW_LOG("session %s: terminal %s: %zu bytes of input dropped (%zu bytes already wait for "
               "the executor)",
               t->s->id, t->id, n, t->inq.len);
        return;
    }
    /* Keystrokes go at once (the executor grants credit back as input arrives); a paste past
     * its window (256 KiB in flight) waits here for credit, in order, its client paused. */
    bool paused = t->inq.len > 0;
    buf_append(&t->inq, p, n);
    t->s->last_activity = gw_now();
    send_queued(t, paused);
}

void
session_term_writable(gw_session_t *s, uint32_t ch)
{
    for (gw_term_t *t = s->terms; t; t = t->next)
        if (t->ch == ch) {
            send_queued(t, true);
            return;
        }
}

void
session_term_resize(gw_term_t *t, int cols, int rows)
{
    exec_client_t *c = client_of(t);
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
session_term_consumed(gw_term_t *t, uint64_t off)
{
    if (off > t->ring.end)
        off = t->ring.end;
    if (off <= t->consumed)
        return;
    t->consumed = off;
    session_term_grant(t);
}

static void
term_free(gw_term_t *t)
{
    term_ring_free(&t->ring);
    term_typed_free(&t->typed);
    buf_free(&t->typein);
    buf_free(&t->inq);
    free(t);
}

void
session_term_close(gw_term_t *t)
{
    gw_session_t *s = t->s;
    session_term_typed_flush(t);
    for (gw_term_t **pp = &s->terms; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    exec_client_t *c = client_of(t);
    if (c) {
        exec_client_set_chan_data(c, t->ch, NULL);
        exec_client_send_close(c, t->ch, NULL); /* hangs the terminal up */
        exec_link_flush(s->link);
    }
    term_free(t);
    session_terms_save(s);
}

/* ---- the executor's side ---- */

static gw_term_t *
term_of_channel(gw_session_t *s, uint32_t ch)
{
    for (gw_term_t *t = s->terms; t; t = t->next)
        if (t->ch == ch)
            return t;
    return NULL;
}

bool
session_term_data(gw_session_t *s, uint32_t ch, const uint8_t *p, size_t n)
{
    gw_term_t *t = term_of_channel(s, ch);
    if (!t)
        return false;
    term_ring_append(&t->ring, p, n);
    if (t->ring.start > t->consumed) /* cannot happen within the credit: say so if it does */
        GW_LOG("session %s: terminal %s overran its ring (%" PRIu64 " bytes not consumed)", s->id,
               t->id, t->ring.start - t->consumed);
    if (t->client)
        t->client->wake(t->client);
    return true;
}

void
session_term_end(gw_term_t *t, int exit_code)
{
    t->ch = 0; /* the channel is closed (or went with the link) */
    t->reattach = false;
    session_term_typed_flush(t);
    buf_clear(&t->typein);
    if (t->inq.len) {
        GW_LOG("session %s: terminal %s ended with %zu bytes of input not taken", t->s->id, t->id,
               t->inq.len);
        buf_clear(&t->inq);
        pause_client(t, false);
    }
    t->ended = true;
    t->exit_code = exit_code;
    if (!t->client)
        t->detached_at = gw_now(); /* the last output waits the grace for its reader */
    else
        t->client->wake(t->client);
    session_terms_save(t->s);
}

bool
session_term_exited(gw_session_t *s, uint32_t ch, json_object *res)
{
    gw_term_t *t = term_of_channel(s, ch);
    if (!t)
        return false;
    json_object *err = json_get(res, "error");
    if (err && t->reattach) {
        GW_LOG("session %s: terminal %s could not be taken back: %s", s->id, t->id,
               json_get_str(err, "message", "?"));
        gw_term_client_t *cl = t->client;
        if (cl && cl->refused) { /* let in blind meanwhile: told as at any other time */
            t->client = NULL;
            const char *code = json_get_str(err, "code", "not_found");
            cl->refused(cl, code,
                        strcmp(code, "not_found") ? json_get_str(err, "message", code)
                                                  : GW_TERM_NOT_FOUND);
        }
        if (!t->client) { /* nobody waits for it: gone, as one whose grace ran out */
            t->ch = 0;
            session_term_close(t);
            return true;
        }
    }
    session_term_end(t, (int)json_get_int(res, "exit_code", -1));
    return true;
}

/* The link went down: the executor keeps its terminals (they have ids); each is taken back
 * when the link is up again (session_terms_reattach), or ends if it never is. */
void
session_terms_lost(gw_session_t *s)
{
    for (gw_term_t *t = s->terms; t; t = t->next)
        if (!t->ended) {
            t->ch = 0;
            t->reattach = true;
        }
}

void
session_terms_free(gw_session_t *s)
{
    while (s->terms) {
        gw_term_t *t = s->terms;
        s->terms = t->next;
        if (t->client)
            t->client->gone(t->client, false);
        term_free(t);
    }
}

void
session_terms_tick(gw_session_t *s, double now)
{
    for (gw_term_t *t = s->terms, *next; t; t = next) {
        next = t->next;
        if (!t->client && now - t->detached_at > g_gw.cfg.term_grace) {
            if (!t->ended)
                GW_LOG("session %s: terminal %s hung up: no client for %d s", s->id, t->id,
                       g_gw.cfg.term_grace);
            session_term_close(t);
        }
    }
}
