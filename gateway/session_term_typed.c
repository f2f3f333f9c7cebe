/* session_term_typed.c — what people type into a session's terminals, in its event log:
 * {"type":"terminal_input","term":"t1","origin":"alice","data":"ls -la\r"} (data_b64 for bytes
 * that are not UTF-8), one event per line typed or per paste (term_typed.h cuts them), so a
 * read-only viewer (/watch) sees the commands people run by hand next to the agent's actions.
 * The bytes as typed, editing keys and escape sequences included; not what is typed at a prompt
 * that does not show it (a password: the executor says so, hidden_input), of which an event says
 * only how many bytes went in ({"hidden": N}, no data).
 *
 * Typed input cannot be held back like output (it already went to the shell): while the log is
 * full (Redis behind) a piece is not recorded, and the next event says how many bytes were not
 * ("unrecorded"), so the gap is visible. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "session_int.h"
#include "utf8.h"
#include "xalloc.h"

static void
record(void *ud, const char *origin, const uint8_t *p, size_t n)
{
    gw_term_t *t = ud;
    gw_session_t *s = t->s;
    if (!s->log || event_log_full(s->log)) {
        t->typed_unrecorded += n;
        return;
    }
    json_object *e = session_event_new("terminal_input");
    json_set_str(e, "term", t->id);
    json_set_str(e, "origin", origin);
    if (!memchr(p, '\0', n) && utf8_valid(p, n)) {
        json_set_strn(e, "data", (const char *)p, n);
    } else {
        char *b64 = xmalloc(4 * ((n + 2) / 3) + 1);
        EVP_EncodeBlock((unsigned char *)b64, p, (int)n);
        json_set_str(e, "data_b64", b64);
        free(b64);
    }
    if (t->typed_unrecorded) {
        json_set_int(e, "unrecorded", (int64_t)t->typed_unrecorded);
        t->typed_unrecorded = 0;
    }
    event_log_append(s->log, e);
}

/* What was typed at a hidden prompt: how much, by whom, and nothing of it. */
static void
record_hidden(gw_term_t *t, const char *origin)
{
    gw_session_t *s = t->s;
    if (!t->typed_hidden || !s->log || event_log_full(s->log))
        return;
    json_object *e = session_event_new("terminal_input");
    json_set_str(e, "term", t->id);
    json_set_str(e, "origin", origin);
    json_set_int(e, "hidden", (int64_t)t->typed_hidden);
    t->typed_hidden = 0;
    event_log_append(s->log, e);
}

void
session_term_typed(gw_term_t *t, const char *origin, const void *p, size_t n)
{
    if (t->ended)
        return;
    if (t->hidden) {
        /* what was typed before the prompt is what it was; the secret is not kept */
        term_typed_flush(&t->typed, record, t);
        t->typed_hidden += n;
        snprintf(t->typed_hidden_origin, sizeof t->typed_hidden_origin, "%s", origin);
        return;
    }
    term_typed_feed(&t->typed, origin, p, n, record, t);
}

void
session_term_hidden(gw_term_t *t, bool hidden)
{
    if (t->hidden && !hidden)
        record_hidden(t, t->typed_hidden_origin);
    t->hidden = hidden;
}

void
session_term_typed_flush(gw_term_t *t)
{
    term_typed_flush(&t->typed, record, t);
    record_hidden(t, t->typed_hidden_origin);
}
