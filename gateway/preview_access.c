/* preview_access.c — who may open a preview (preview_access.h). */
#include "preview_access.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *const FROM[] = {"path", "query", "header", "cookie"};

/* Why tok (from where) does not let h in, into why; "" when it does. */
static void
judge(const uint8_t key[32], const preview_head_t *h, const char *tok, preview_from_t from,
      int64_t now, preview_claims_t *c, char *why, size_t cap)
{
    why[0] = '\0';
    if (preview_token_check(key, h->sid, tok, c) < 0) {
        snprintf(why, cap,
                 "the preview token in the %s is not one of session %s (another session's, "
                 "altered, or not a preview token)",
                 FROM[from], h->sid);
        return;
    }
    if (c->exp <= now) {
        char at[32];
        time_t t = (time_t)c->exp;
        struct tm tm;
        strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        snprintf(why, cap, "the preview token expired at %s: ask the session's owner for a new one",
                 at);
    } else if (c->port != 0 && c->port != h->port) {
        snprintf(why, cap, "the preview token is for port %u of session %s, not port %u", c->port,
                 h->sid, h->port);
    } else if (c->kind == PREVIEW_KIND_ONCE && from != PREVIEW_FROM_QUERY) {
        snprintf(why, cap, "a one-time link is opened by its URL, once");
    }
}

void
preview_decide(const uint8_t key[32], const preview_head_t *h, bool is_public, int64_t now,
               preview_verdict_t *v)
{
    memset(v, 0, sizeof *v);
    char why[sizeof v->why + 64];
    for (int i = 0; i < h->ntokens; i++) {
        preview_claims_t c;
        judge(key, h, h->tokens[i].tok, h->tokens[i].from, now, &c, why, sizeof why);
        if (why[0]) {
            if (!v->why[0])
                snprintf(v->why, sizeof v->why, "%.300s", why);
            continue;
        }
        v->claims = c;
        snprintf(v->token, sizeof v->token, "%s", h->tokens[i].tok);
        if (c.kind == PREVIEW_KIND_ONCE)
            v->kind = PREVIEW_ONCE;
        else if (h->tokens[i].from == PREVIEW_FROM_QUERY)
            v->kind = PREVIEW_REDIRECT;
        else
            v->kind = PREVIEW_ALLOW;
        v->why[0] = '\0';
        return;
    }
    if (is_public) {
        v->kind = PREVIEW_ALLOW;
        v->why[0] = '\0';
        return;
    }
    v->kind = PREVIEW_DENY;
    if (v->why[0]) {
        v->status = 403;
        return;
    }
    v->status = 401;
    snprintf(v->why, sizeof v->why,
             "no preview credential: port %u of session %.100s opens with a link its owner "
             "makes (the web IDE's Preview tab, or POST …/sessions/{id}/ports/%u/token)",
             h->port, h->sid, h->port);
}
