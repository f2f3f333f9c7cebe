/* session_output.c — the running action's output: bytes from the executor coalesced into
 * "output" events (each with its output offset), credit granted back only for output Redis has
 * stored (the executor keeps the rest: a lost gateway resumes from there), and observations
 * released on the executor once stored. The event log calls session_on_stored. */
#include <openssl/evp.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json_util.h"
#include "session_int.h"
#include "utf8.h"

/* ---- output ---- */

/* Turns buffered output into "output" events of at most GW_OUTPUT_CHUNK bytes, each with the
 * output offset of its first byte. Text goes as "data"; bytes that are not UTF-8 as
 * "data_b64". A character split across reads is held back until its end arrives (or the
 * action ends). While Redis is behind (event_log_full) output waits here, coalescing, unless
 * final: the executor gets no credit meanwhile, so this is bounded by its window. */
void
session_flush_output(gw_session_t *s, bool final)
{
    if (!final && event_log_full(s->log))
        return;
    size_t off = 0; /* consumed once at the end: no memmove per event */
    uint64_t base = s->act_recv - s->out.len;
    while (off < s->out.len) {
        const uint8_t *p = (const uint8_t *)s->out.data + off;
        size_t left = s->out.len - off;
        size_t n = left > GW_OUTPUT_CHUNK ? GW_OUTPUT_CHUNK : left;
        size_t whole = utf8_complete_prefix(p, n);
        if (whole > 0)
            n = whole;
        else if (!final && n == left)
            break;
        /* Built as text directly: json-c's generic escaping was the hot spot of floods. */
        buf_t m = BUF_INIT;
        buf_printf(&m, "\"type\":\"output\",\"action\":%" PRIu64 ",\"offset\":%" PRIu64 ",",
                   s->act_seq, base + off);
        size_t key_at = m.len;
        buf_puts(&m, "\"data\":\"");
        if (!json_escape_text_append(&m, (const char *)p, n)) { /* checked as it is escaped */
            m.len = key_at;                                     /* not text: base64 instead */
            buf_puts(&m, "\"data_b64\":\"");
            char *b64 = buf_reserve(&m, 4 * ((n + 2) / 3) + 1);
            int len = EVP_EncodeBlock((unsigned char *)b64, p, (int)n);
            buf_advance(&m, (size_t)len);
        }
        buf_puts(&m, "\"");
        out_event_t oe = {.act = s->act_seq, .end = base + off + n};
        oe.seq = event_log_append_members(s->log, m.data, m.len);
        buf_append(&s->out_events, &oe, sizeof oe);
        buf_free(&m);
        off += n;
    }
    buf_consume(&s->out, off);
}

/* Credit goes back in quarter windows: a CREDIT frame per small output would cost a write
 * per action for nothing (the executor still has three quarters of its window). */
#define CREDIT_BATCH (FRAME_DEFAULT_WINDOW / 4)

/* Credit is the executor's acknowledgement: it may forget output we have stored. */
static void
release_credit(gw_session_t *s)
{
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    if (c && s->act_ch && s->act_stored >= s->act_granted + CREDIT_BATCH) {
        exec_client_grant(c, s->act_ch, (uint32_t)(s->act_stored - s->act_granted));
        s->act_granted = s->act_stored;
        exec_link_flush(s->link);
    }
}

static void release_results(gw_session_t *s, uint64_t stored);

void
session_on_stored(gw_session_t *s, uint64_t stored)
{
    size_t n = s->out_events.len / sizeof(out_event_t), k = 0;
    const out_event_t *oe = (const out_event_t *)s->out_events.data;
    for (; k < n && oe[k].seq <= stored; k++)
        if (oe[k].act == s->act_seq && oe[k].end > s->act_stored)
            s->act_stored = oe[k].end;
    buf_consume(&s->out_events, k * sizeof(out_event_t));
    release_credit(s);
    release_results(s, stored);
    session_stored_up_to(s, stored);
    session_start_next_action(s); /* an action runs once its event is stored */
    if (s->out.len)               /* output held while Redis was behind */
        session_arm_flush(s);
}

static void
on_timer(uv_timer_t *t)
{
    gw_session_t *s = t->data;
    s->timer_armed = false;
    session_flush_output(s, false);
    if (s->out.len) {
        s->timer_armed = true;
        uv_timer_start(&s->timer, on_timer, GW_OUTPUT_FLUSH_MS, 0);
    }
}

void
session_arm_flush(gw_session_t *s)
{
    if (!s->timer_armed) {
        s->timer_armed = true;
        uv_timer_start(&s->timer, on_timer, GW_OUTPUT_FLUSH_MS, 0);
    }
}

/* ---- results: stored observations are released on the executor ---- */

static void
release_results(gw_session_t *s, uint64_t stored)
{
    size_t n = s->releases.len / sizeof(release_t), k = 0;
    const release_t *r = (const release_t *)s->releases.data;
    exec_client_t *c = s->link ? exec_link_client(s->link) : NULL;
    for (; k < n && r[k].obs_seq <= stored; k++) {
        session_observed(s, r[k].act, r[k].obs_seq);
        if (!c) /* the executor keeps it (bounded) until a later attach or its limit */
            continue;
        char id[32];
        snprintf(id, sizeof id, "%" PRIu64, r[k].act);
        json_object *o = json_object_new_object();
        json_set_str(o, "op", "action.release");
        json_set_str(o, "id", id);
        err_t err = {0};
        exec_client_open(c, o, &err); /* its CLOSE is not waited for */
        json_object_put(o);
    }
    if (k) {
        buf_consume(&s->releases, k * sizeof(release_t));
        if (c)
            exec_link_flush(s->link);
    }
}
