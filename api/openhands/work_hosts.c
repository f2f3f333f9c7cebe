/* work_hosts.c — a runtime's work hosts (work_hosts.h). */
#include "work_hosts.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "preview_token.h"
#include "preview_url.h"
#include "runtime_api.h"

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
        const char *origin = api_param(r, "SP_PREVIEW_ORIGIN");
        if (origin && preview_host_url(origin, sid, ports[i], host, sizeof host) == 0) {
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
