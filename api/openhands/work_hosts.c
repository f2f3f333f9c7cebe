/* work_hosts.c — a runtime's work hosts (work_hosts.h). */
#include "work_hosts.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "preview_token.h"
#include "runtime_api.h"

/* nginx's preview origin template ("http://{port}-{session}.DOMAIN:N", fastcgi param
 * SP_PREVIEW_ORIGIN, render.sh --preview-domain) filled in, or "" when there is none. */
static void
host_form(const api_req_t *r, const char *sid, unsigned port, char *out, size_t cap)
{
    const char *t = api_param(r, "SP_PREVIEW_ORIGIN");
    const char *p = t ? strstr(t, "{port}") : NULL, *s = t ? strstr(t, "{session}") : NULL;
    out[0] = '\0';
    if (!p || !s || s < p)
        return;
    snprintf(out, cap, "%.*s%u%.*s%s%s/", (int)(p - t), t, port, (int)(s - p - 6), p + 6, sid,
             s + 9);
}

json_object *
oh_work_hosts(const api_req_t *r, const char *sid)
{
    json_object *o = json_object_new_object();
    uint8_t key[32];
    if (!sid || !*sid || preview_key_derive(g_api.secret, g_api.secret_len, key) < 0)
        return o;
    static const unsigned ports[] = {OH_WORK_PORT_1, OH_WORK_PORT_2};
    for (size_t i = 0; i < sizeof ports / sizeof ports[0]; i++) {
        char tok[PREVIEW_TOKEN_MAX], url[768], host[512];
        if (preview_token_mint(key, sid, PREVIEW_KIND_SHARE, ports[i],
                               (int64_t)time(NULL) + OH_WORK_TTL, tok, sizeof tok) < 0)
            continue;
        host_form(r, sid, ports[i], host, sizeof host);
        if (host[0]) {
            snprintf(url, sizeof url, "%s?sp_token=%s", host, tok);
        } else {
            /* the origin as the runtime's own URL names it */
            char base[512];
            oh_url(r, "", base, sizeof base);
            snprintf(url, sizeof url, "%spreview/%s/%u/~%s/", base, sid, ports[i], tok);
        }
        json_object_object_add(o, url, json_object_new_int(ports[i]));
    }
    return o;
}
