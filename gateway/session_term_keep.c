/* session_term_keep.c — terminals across a gateway restart or a takeover (docs/operations.md,
 * "Gateway loss and takeover"). The executor keeps a terminal opened with an id when its
 * gateway goes away: the shell goes on, its last output kept by offset (executor/terminal.h).
 * Which terminals a session has is in its Redis record (field "terms":
 * {"next":N,"open":["t1",…]}), written when one opens or ends, never per byte: a gateway
 * restoring the session reads it, and once the executor link is up takes each terminal back
 * with terminal.attach from the offset its ring reaches. Until the executor answers, the
 * terminal is re-attaching: a client may connect to it from any offset, and what it types
 * waits (session_term_input). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "session_int.h"

void
session_terms_save(gw_session_t *s)
{
    if (g_gw.stopping || s->deleting)
        return; /* a gateway going away leaves the record to whoever restores the session */
    json_object *o = json_object_new_object(), *open = json_object_new_array();
    json_set_int(o, "next", s->term_counter);
    for (gw_term_t *t = s->terms; t; t = t->next)
        if (!t->ended)
            json_object_array_add(open, json_object_new_string(t->id));
    json_set(o, "open", open);
    session_save_field(s, "terms", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
}

/* Only ids this gateway could have made ("t" and a number): the record is Redis's, not ours. */
static bool
term_id_ok(const char *id, unsigned *n)
{
    char *end = NULL;
    if (id[0] != 't' || id[1] < '0' || id[1] > '9' || strlen(id) > 12)
        return false;
    unsigned long v = strtoul(id + 1, &end, 10);
    if (*end || v == 0 || v > 1000000000UL)
        return false;
    *n = (unsigned)v;
    return true;
}

void
session_terms_restore(gw_session_t *s, const char *json)
{
    json_object *o = json ? json_tokener_parse(json) : NULL;
    json_object *open = json_get(o, "open");
    int64_t next = json_get_int(o, "next", 0);
    if (next > 0 && next <= 1000000000)
        s->term_counter = (unsigned)next;
    size_t n =
        open && json_object_is_type(open, json_type_array) ? json_object_array_length(open) : 0;
    int kept = 0;
    for (size_t i = 0; i < n && kept < GW_TERM_MAX; i++) {
        const char *id = json_object_get_string(json_object_array_get_idx(open, i));
        unsigned num = 0;
        if (!id || !term_id_ok(id, &num) || session_term_find(s, id))
            continue;
        gw_term_t *t = session_term_new(s, id);
        t->reattach = true;
        if (num > s->term_counter) /* ids are never given twice */
            s->term_counter = num;
        kept++;
    }
    if (kept)
        GW_LOG("restore: session %s: %d terminals to take back", s->id, kept);
    json_object_put(o);
}

void
session_terms_reattach(gw_session_t *s)
{
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    for (gw_term_t *t = s->terms, *next; c && t; t = next) {
        next = t->next;
        if (!t->reattach || t->ch || t->ended)
            continue;
        json_object *req = json_object_new_object();
        json_set_str(req, "op", "terminal.attach");
        json_set_str(req, "id", t->id);
        json_set_int(req, "offset", (int64_t)t->ring.end);
        err_t err = {0};
        t->ch = exec_client_open(c, req, &err);
        json_object_put(req);
        if (!t->ch) {
            GW_LOG("session %s: terminal %s: %s", s->id, t->id, err.msg);
            session_term_end(t, -1);
            continue;
        }
        exec_client_set_chan_data(c, t->ch, t);
        exec_client_set_auto_grant(c, t->ch, false);
    }
    if (c)
        exec_link_flush(s->link);
}

/* The executor's first word on terminal.attach: its kept output starts at "offset" (at or past
 * what we asked for). The ring goes on from there: after a takeover it is empty, and a client
 * asking for bytes before it is told they are gone (ws_terminal.c's "truncated"). */
static void
attached(gw_term_t *t, json_object *msg)
{
    exec_client_t *c = exec_link_client(t->s->link);
    int64_t off = json_get_int(msg, "offset", 0);
    uint64_t from = off > 0 ? (uint64_t)off : 0;
    if (from != t->ring.end) {
        if (from < t->ring.end) /* the executor went back in time: take its word */
            GW_LOG("session %s: terminal %s: the executor has output from %" PRIu64
                   ", the ring up to %" PRIu64,
                   t->s->id, t->id, from, t->ring.end);
        /* nothing held: offset o still lives at data[o % cap] */
        t->ring.start = t->ring.end = from;
    }
    /* A client that came in meanwhile was let in blind: an offset past the executor's end was
     * never made, refused as ws_terminal.c refuses it at any other time (what it typed goes with
     * it); the terminal waits for another client. */
    int64_t e = json_get_int(msg, "end", 0);
    uint64_t end = e > 0 && (uint64_t)e > from ? (uint64_t)e : from;
    gw_term_client_t *cl = t->client;
    if (cl && cl->refused && cl->since > end) {
        char m[160];
        snprintf(m, sizeof m, "since must be an output offset from 0 to %" PRIu64, end);
        t->client = NULL;
        t->detached_at = gw_now();
        if (t->typein.len)
            GW_LOG("session %s: terminal %s: %zu bytes typed by a refused client dropped", t->s->id,
                   t->id, t->typein.len);
        buf_free(&t->typein);
        cl->refused(cl, "bad_request", m);
    }
    if (t->consumed < from)
        t->consumed = from;
    t->limit = from + exec_client_recv_window(c, t->ch);
    t->reattach = false;
    GW_LOG("session %s: terminal %s taken back from offset %" PRIu64, t->s->id, t->id, from);
    session_term_grant(t);
    if (t->typein.len) {
        buf_t in = t->typein;
        t->typein = (buf_t){0};
        session_term_input(t, in.data, in.len);
        buf_free(&in);
    }
    session_term_writable(t->s, t->ch); /* what waited for credit when the link went */
    if (t->client)
        t->client->wake(t->client);
}

bool
session_term_json(gw_session_t *s, uint32_t ch, json_object *msg)
{
    for (gw_term_t *t = s->terms; t; t = t->next)
        if (t->ch == ch) {
            const char *ev = json_get_str(msg, "event", "");
            if (t->reattach && !strcmp(ev, "attached"))
                attached(t, msg);
            else if (!strcmp(ev, "hidden_input"))
                session_term_hidden(t, json_get_bool(msg, "on", false));
            return true;
        }
    return false;
}

void
session_terms_gone(gw_session_t *s)
{
    for (gw_term_t *t = s->terms; t; t = t->next)
        if (t->reattach && !t->ended)
            session_term_end(t, -1);
}
