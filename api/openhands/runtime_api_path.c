/* runtime_api_path.c — a runtime's own URL, {scheme}://{host}/{runtime_id}: the same OpenHands
 * action-execution server as /runtime/{session}/, served by the session's own gateway behind
 * nginx (gateway/http_rt.h, route.c maps the runtime id to its session). What nginx sends here
 * (a path it could not route) is turned into /runtime/rt-… before routing, so it is answered in
 * the action server's flavour. Runtime ids carry the fixed prefix "rt-" + 16 hex digits, so
 * /rt-… cannot collide with any other path of the origin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "runtime_api.h"
#include "xalloc.h"

void
api_oh_path_form(api_req_t *r)
{
    const char *p = r->path;
    if (p[0] != '/' || strncmp(p + 1, OH_RID_PREFIX, strlen(OH_RID_PREFIX)) != 0)
        return;
    size_t n = strcspn(p + 1, "/");
    char rid[64];
    if (n >= sizeof rid)
        return;
    memcpy(rid, p + 1, n);
    rid[n] = '\0';
    if (!oh_rid_ok(rid))
        return;
    char *path = xasprintf("/runtime%s", p);
    free(r->path);
    r->path = path;
}
