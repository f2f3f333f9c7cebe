/* snapshots.c — E2B's snapshots and forks, which sandpipe does not have: a sandbox can be
 * paused (its processes frozen in place: betaPause) and resumed (connect), but its state is
 * never saved apart from it, so there is nothing to list, to start again from, or to copy.
 * createSnapshot and fork are refused, naming that (after the sandbox is found: an unknown one
 * is the SDK's SandboxNotFoundError, as on E2B); listSnapshots answers the empty list it is.
 * Deleting one is DELETE /templates/{id} (templates.c). See e2b.h. */
#include <stdio.h>

#include "e2b.h"
#include "json_util.h"

#define NO_SNAPSHOTS                                                                               \
    "sandpipe keeps no snapshots: a sandbox can be paused in place (pause()) and resumed "         \
    "(connect()), not saved to start others from"

/* Answers r with why sid's snapshot or fork cannot be (its own 404 when it is not there). */
static void
refuse(api_req_t *r, const char *sid, const char *what)
{
    if (e2b_auth(r, true) < 0)
        return;
    api_err_t e;
    json_object *s = e2b_sandbox_load(r, sid, &e);
    if (!s) {
        api_fail(r, &e);
        return;
    }
    json_object_put(s);
    api_failf(r, ERR_NOT_IMPLEMENTED, "%s is not supported: " NO_SNAPSHOTS, what);
}

void
api_e2b_snapshot_create(api_req_t *r, char **params)
{
    refuse(r, params[0], "createSnapshot");
}

void
api_e2b_fork(api_req_t *r, char **params)
{
    refuse(r, params[0], "fork");
}

void
api_e2b_snapshots(api_req_t *r, char **params)
{
    (void)params;
    if (e2b_auth(r, false) < 0)
        return;
    api_reply_json(r, 200, json_object_new_array()); /* none: none can be made */
}
