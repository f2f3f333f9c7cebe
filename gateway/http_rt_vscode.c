/* http_rt_vscode.c — VS Code through the action server's routes (http_rt_vscode.h). Each
 * request resolves its route and checks it as every /runtime route does (http_rt.h); opening
 * runs one executor op, vscode.start, and answers once code-server listens. The preview token
 * is minted here, as the ports routes mint theirs (http_ports.c): the preview listener checks
 * it like any other. */
#include "http_rt_vscode.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err_http.h"
#include "gw.h"
#include "http_rest.h"
#include "http_rt.h"
#include "json_util.h"
#include "preview_listen.h"
#include "preview_token.h"
#include "preview_url.h"
#include "route.h"
#include "session.h"
#include "xalloc.h"

static const char NO_PREVIEW_DOMAIN[] =
    "VS Code opens on its own origin, the session's preview of its port "
    "(PORT-SESSION.<preview domain>), and this deployment has no preview domain: the operator "
    "sets one with nginx/render.sh --preview-domain (docs/operations.md, \"Previews\")";

static http_req_t *
request(void *ud)
{
    return http_find((uint64_t)(uintptr_t)ud);
}

/* Whether nginx sent a preview origin template (any port fills it the same way). */
static bool
has_preview_domain(const http_req_t *h)
{
    char url[512];
    return preview_host_url(h->preview_origin, "s", 1, url, sizeof url) == 0;
}

/* ---- connection_token ---- */

typedef struct {
    void *req; /* the request's id, as route_resolve's ud */
    route_t r;
} token_wait_t;

static void on_token_route(void *ud, const route_t *r);

static void
on_plugins_known(void *ud)
{
    token_wait_t *w = ud;
    on_token_route(w->req, &w->r);
    free(w);
}

static void
on_token_route(void *ud, const route_t *r)
{
    http_req_t *h = request(ud);
    if (!h)
        return;
    jwt_claims_t c;
    if (!http_rt_live(h, r) || !http_rt_authed(h, r, false, &c))
        return;
    gw_session_t *s = http_rt_here(h, r);
    if (!s)
        return;
    if (session_plugins_awaited(s)) { /* a session just READY: its executor's word first */
        token_wait_t *w = xmalloc(sizeof *w);
        w->req = ud;
        w->r = *r;
        session_when_plugins_known(s, on_plugins_known, w);
        return;
    }
    /* The key opens VS Code, which is a shell: only for a caller who may change the session. */
    const char *state = session_plugin_state(s, "vscode");
    bool can = r->rt_key[0] && has_preview_domain(h) && http_may_write(&c, r) && state[0] &&
               strcmp(state, "unavailable") != 0 && strcmp(state, "disabled") != 0;
    json_object *o = json_object_new_object();
    json_set(o, "token", can ? json_object_new_string(r->rt_key) : NULL);
    http_answer_json(h, 200, o);
}

void
http_rt_vscode_token(http_req_t *h, const char *id)
{
    route_resolve(id, on_token_route, (void *)(uintptr_t)h->id);
}

/* ---- opening ---- */

/* The header lines of the redirect to port's preview of session sid with tok, the request's
 * folder kept, into out. 0, or -1 when they do not fit (a folder too long) or there is no
 * preview domain (out ""). */
static int
location(const http_req_t *h, const char *sid, unsigned port, const char *tok, char *out,
         size_t cap)
{
    char base[512];
    if (preview_host_url(h->preview_origin, sid, port, base, sizeof base) < 0) {
        out[0] = '\0';
        return -1;
    }
    const char *folder = http_arg(h, "folder");
    char *escaped = folder && *folder ? curl_easy_escape(NULL, folder, 0) : NULL;
    int n = snprintf(out, cap, "location: %s?sp_token=%s%s%s\r\ncache-control: no-store\r\n", base,
                     tok, escaped ? "&folder=" : "", escaped ? escaped : "");
    curl_free(escaped);
    /* room left for the content type http_answer adds */
    return n < 0 || (size_t)n + 64 >= cap ? -1 : 0;
}

static void
on_started(void *ud, json_object *res)
{
    http_req_t *h = request(ud);
    if (!h)
        return;              /* the browser left; code-server runs on, ready for the next opening */
    const char *sid = h->ud; /* the session's: the path may name its runtime */
    json_object *e = json_get(res, "error");
    if (e) {
        int code = err_from_gateway_name(json_get_str(e, "code", ""));
        http_rt_failf(h, code, "VS Code %s: %.400s",
                      code == ENOTSUP ? "is not available in this runtime" : "could not be started",
                      json_get_str(e, "message", "the runtime did not answer"));
        return;
    }
    int64_t port = json_get_int(res, "port", 0);
    char tok[PREVIEW_TOKEN_MAX], extra[sizeof h->extra];
    if (port < 1 || port > 65535) {
        http_rt_fail(h, ERR_INTERNAL, "VS Code could not be started: the runtime named no port");
        return;
    }
    int64_t exp = (int64_t)gw_wall() + VSCODE_PREVIEW_TTL;
    if (preview_token_mint(preview_key(), sid, PREVIEW_KIND_SHARE, (unsigned)port, exp, tok,
                           sizeof tok) < 0 ||
        location(h, sid, (unsigned)port, tok, extra, sizeof extra) < 0) {
        http_rt_fail(h, ERR_INTERNAL, "VS Code could not be opened: no preview URL was made");
        return;
    }
    snprintf(h->extra, sizeof h->extra, "%s", extra);
    http_answer(h, 302, "text/plain", "", 0);
}

static void
on_open_route(void *ud, const route_t *r)
{
    http_req_t *h = request(ud);
    if (!h || !http_rt_live(h, r))
        return;
    const char *tkn = http_arg(h, "tkn");
    size_t kl = strlen(r->rt_key);
    if (!kl) {
        http_rt_fail(h, ERR_FORBIDDEN,
                     "Invalid API Key: VS Code opens with a runtime's session API key (OpenHands' "
                     "Runtime API, /openhands/start); a session of its own has none");
        return;
    }
    if (!tkn || strlen(tkn) != kl || CRYPTO_memcmp(tkn, r->rt_key, kl) != 0) {
        http_rt_fail(h, ERR_FORBIDDEN, "Invalid API Key");
        return;
    }
    gw_session_t *s = http_rt_here(h, r);
    if (!s)
        return;
    /* what the redirect will be, as long as it can get, before code-server is started for it */
    char longest[PREVIEW_TOKEN_MAX], extra[sizeof h->extra];
    memset(longest, 'x', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    if (location(h, r->sid, 65535, longest, extra, sizeof extra) < 0) {
        if (extra[0])
            http_rt_fail(h, ERR_BAD_REQ, "folder is too long for VS Code's URL");
        else
            http_rt_fail(h, ERR_NOT_IMPLEMENTED, NO_PREVIEW_DOMAIN);
        return;
    }
    h->ud = xstrdup(r->sid);
    h->free_ud = free;
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "vscode.start");
    err_t err = {0};
    int rc = session_exec_op(s, op, on_started, (void *)(uintptr_t)h->id, &err);
    json_object_put(op);
    if (rc < 0)
        http_rt_failf(h, err.code, "VS Code could not be started: %s", err.msg);
}

void
http_rt_vscode_open(http_req_t *h, const char *id)
{
    route_resolve(id, on_open_route, (void *)(uintptr_t)h->id);
}
