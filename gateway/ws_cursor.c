/* ws_cursor.c — a WebSocket client as a cursor (next_seq) over its session's event log:
 * recent events come from the log's memory, older ones from Redis in batches; a client that
 * falls behind costs nothing and never slows the session. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "event_log.h"
#include "gw.h"
#include "json_util.h"
#include "ws_int.h"
#include "ws_server.h"
#include "xalloc.h"

/* ---- cursors ---- */

void
ws_cursor_wake(gw_sub_t *sub)
{
    cursor_t *c = (cursor_t *)sub;
    if (c->wsi)
        ws_want_write(c->wsi);
}

/* The session is going away (its log too). Stopped: hand the client the events it has not seen
 * yet (the final STOPPED status among them), then say the session ended and close. Not stopped
 * (this gateway shuts down, or a peer took the session over): its unconfirmed events are not
 * shown (whoever serves it next may give their seqs to other events); the client is told to
 * come back, with 1001 (going away), which clients take as "reconnect". */
void
ws_cursor_gone(gw_sub_t *sub)
{
    cursor_t *c = (cursor_t *)sub;
    if (c->s && !session_stopped(c->s)) {
        c->s = NULL;
        if (c->wsi) {
            pss_t *p = lws_wsi_user(c->wsi);
            ws_queue_reply(c->wsi, p,
                           ws_error_msg("unavailable",
                                        "this gateway no longer serves the session: reconnect "
                                        "with since=<last seq> (its owner may have changed)",
                                        NULL));
            ws_close_after_replies(c->wsi, p, LWS_CLOSE_STATUS_GOINGAWAY, "gateway going away");
        }
        return;
    }
    if (c->wsi && c->s && !c->batch_n) {
        pss_t *p = lws_wsi_user(c->wsi);
        event_log_t *log = session_log(c->s);
        for (uint64_t seq = c->next_seq; seq < event_log_next_seq(log); seq++) {
            const event_log_entry_t *e = event_log_peek(log, seq);
            if (e)
                ws_queue_text(c->wsi, p, e->text, e->len);
        }
    }
    c->s = NULL;
    if (c->wsi) {
        pss_t *p = lws_wsi_user(c->wsi);
        ws_queue_reply(c->wsi, p, ws_error_msg("session_ended", "the session was stopped", NULL));
        ws_close_after_replies(c->wsi, p, LWS_CLOSE_STATUS_NORMAL, "session ended");
    }
}

void
ws_cursor_free(cursor_t *c)
{
    for (int i = c->batch_i; i < c->batch_n; i++)
        free(c->batch[i].text);
    free(c->batch);
    free(c);
}

static void
on_fetched(void *ud, const event_log_entry_t *entries, int count)
{
    cursor_t *c = ud;
    c->fetching = false;
    if (!c->wsi) { /* the client left while we read */
        ws_cursor_free(c);
        return;
    }
    if (count < 0) {
        pss_t *p = lws_wsi_user(c->wsi);
        ws_queue_reply(c->wsi, p,
                       ws_error_msg("unavailable", "event history is unavailable (Redis)", NULL));
        return;
    }
    c->batch = xcalloc((size_t)count + 1, sizeof *c->batch);
    for (int i = 0; i < count; i++) {
        c->batch[i] = entries[i];
        c->batch[i].text = xstrndup(entries[i].text, entries[i].len);
    }
    c->batch_n = count;
    c->batch_i = 0;
    if (count == 0 && c->s) /* nothing older in Redis: skip to what memory has */
        c->next_seq = event_log_first_in_memory(session_log(c->s));
    lws_callback_on_writable(c->wsi);
}

/* Writes the next event for this cursor, if any. Returns -1 to close. */
int
ws_cursor_write(struct lws *wsi, cursor_t *c)
{
    if (c->batch_i < c->batch_n) {
        event_log_entry_t *e = &c->batch[c->batch_i++];
        int rc = ws_write_text(wsi, e->text, e->len, LWS_WRITE_TEXT);
        c->next_seq = e->seq + 1;
        free(e->text);
        e->text = NULL;
        if (c->batch_i == c->batch_n) {
            free(c->batch);
            c->batch = NULL;
            c->batch_n = c->batch_i = 0;
        }
        lws_callback_on_writable(wsi);
        return rc;
    }
    if (!c->s || c->fetching)
        return 0;
    event_log_t *log = session_log(c->s);
    const event_log_entry_t *e = event_log_get(log, c->next_seq);
    if (e) {
        int rc = ws_write_text(wsi, e->text, e->len, LWS_WRITE_TEXT);
        c->next_seq++;
        if (c->next_seq <= event_log_acked_seq(log))
            lws_callback_on_writable(wsi);
        return rc;
    }
    if (c->next_seq < event_log_first_in_memory(log)) {
        c->fetching = true;
        event_log_fetch(session_id(c->s), c->next_seq, WS_FETCH_BATCH, on_fetched, c);
    }
    return 0;
}
