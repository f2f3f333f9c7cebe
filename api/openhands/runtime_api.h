/* runtime_api.h — the OpenHands Runtime API (the provisioning API OpenHands' RemoteRuntime, its V1
 * app server and the SDK's APIRemoteWorkspace call), served under /openhands: what its modules
 * share. Not for other modules (their hooks are in api.h).
 *
 * A runtime is the current sandpipe session of one OpenHands session_id. Its record lives in
 * Redis (redis/README.md, "OpenHands Runtime API"); runtime_api_store.c loads it, finishes a start
 * still in flight (the gateway answers session.create only once the session is READY, and
 * /start does not wait for that) and derives the status pair the clients read. Routes:
 * runtime_api.c (lookups, pause/resume/stop, images), runtime_api_start.c (/start),
 * runtime_api_path.c (the runtime's own URL, /{runtime_id}/...). */
#ifndef SP_API_OH_H
#define SP_API_OH_H

#include <json-c/json.h>
#include <stdbool.h>

#include "err.h"
#include "errors.h"
#include "http.h"

#define OH_PREFIX      "/openhands"
#define OH_RID_PREFIX  "rt-" /* runtime ids: "rt-" + 16 hex digits; nginx routes /rt-… */
#define OH_RID_HEX     16
#define OH_SID_MAX     100 /* longest OpenHands session_id accepted */
#define OH_KEY_HEX     48  /* session API keys: 24 random bytes as hex */
#define OH_PROFILE     "default"
#define OH_VSCODE_PORT "60001" /* VSCODE_PORT injected into the sandbox (V1's OH_VSCODE_PORT) */

typedef struct oh_rt oh_rt_t;

struct oh_rt {
    char sid[OH_SID_MAX + 1]; /* OpenHands session_id: the record's key */
    char rid[32];             /* runtime id */
    char owner[128];          /* token sub that started it */
    char key[OH_KEY_HEX + 1]; /* session API key */
    char session[64];         /* sandpipe session id, "" until the gateway answered */
    char gateway[128];        /* gateway asked to create it (then: the one owning it) */
    char image[256];          /* image as requested (profiles stand in for images) */
    char error[256];          /* why it failed, "" when it did not */
    double created;           /* epoch s */
    double stopped;           /* epoch s of /stop, 0 when not stopped */
    json_object *start;       /* what /start asked for and what sandpipe applied (owned) */
    /* Derived by oh_load: "running"/"paused"/"stopped"/"starting"/"error" and "ready"/
     * "pending"/"running"/"paused"/"not found"/"failed". */
    const char *status, *pod_status;
    char session_status[40]; /* the sandpipe session's own status, "" when none */
};

/* ---- runtime_images.c ---- */

/* What /start's image means for session.create's "image": "" (the gateway's default) for
 * "default" and OpenHands' own images, the name itself for an image of the store. Returns 0,
 * or -ERR_NOT_FOUND / -ERR_BAD_REQ with err set (unknown, malformed). */
int oh_image_map(const char *image, char *session_image, size_t cap, err_t *err);
/* One of OpenHands' own published runtime / agent-server images (served with the default). */
bool oh_own_image(const char *image);

/* ---- runtime_build.c ---- */

/* Runs images/sandpipe-image with argv (NULL-ended, after the program) on g_api.image_store,
 * waits, and returns its exit status (-1: it could not run); its first stdout line in out, its
 * last stderr line in errline (both may be ""). */
int oh_image_tool(const char *const *argv, char *out, size_t cap, char *errline, size_t ecap);

/* ---- runtime_image_owner.c: who may name what in the image store over /build ---- */

/* Takes the store's names lock (an flock of <store>/owners, made if missing). Returns the fd
 * for oh_names_unlock, or -code with err set. */
int oh_names_lock(err_t *err);
void oh_names_unlock(int fd);
/* May r point each of names[0..n) at an image? 0, or -ERR_FORBIDDEN with why (the first name
 * refused), -ERR_INTERNAL. building: a build runs now (a user's claim on a name it will make
 * holds). Under the lock. */
int oh_names_check(const api_req_t *r, const char *const *names, int n, bool building, err_t *err);
/* Records names[0..n) as r's (a user), or the operator's (an admin). 0 or -code with err. Under
 * the lock, before the names are set. */
int oh_names_claim(const api_req_t *r, const char *const *names, int n, err_t *err);

/* ---- runtime_api_store.c ---- */

/* session_id: 1..OH_SID_MAX of [A-Za-z0-9._:@+-]; runtime id: "rt-" + OH_RID_HEX hex. */
bool oh_sid_ok(const char *sid);
bool oh_rid_ok(const char *rid);

/* Loads the runtime of OpenHands session sid into rt (free with oh_rt_free), its status
 * derived from its sandpipe session's record. Returns 1, 0 when there is none, -1 on a Redis
 * failure. rt is always initialised. */
int oh_load(api_req_t *r, const char *sid, oh_rt_t *rt);
/* The same by runtime id (only the session's current runtime is found). */
int oh_load_rid(api_req_t *r, const char *rid, oh_rt_t *rt);
void oh_rt_free(oh_rt_t *rt);
/* Starting or running (what counts against --oh-max-runtimes). */
bool oh_active(const oh_rt_t *rt);
/* Not stopped and not failed: /start returns it instead of making a new one. */
bool oh_live(const oh_rt_t *rt);
/* May the caller see (write: change) rt? */
bool oh_visible(const api_req_t *r, const oh_rt_t *rt, bool write);
/* The runtime object every route answers with (new ref). */
json_object *oh_rt_json(api_req_t *r, const oh_rt_t *rt);
/* "{scheme}://{host}/{rid}" for this request (Host, X-Forwarded-Proto, HTTPS). */
void oh_url(const api_req_t *r, const char *rid, char *out, size_t cap);

/* A new random id: prefix + 2*nbytes hex digits. */
void oh_random_hex(char *out, size_t cap, const char *prefix, size_t nbytes);
/* Runs op (session.pause, session.resume, session.delete) on rt's session (on the gateway
 * owning it now) as its owner, over HTTP. Returns 0, or -1 with e: the gateway's refusal, or
 * why it could not be asked (no session, gateway down, timeout: !api_gw_refused(e)). */
int oh_session_op(api_req_t *r, const oh_rt_t *rt, const char *op, api_err_t *e);
/* Applies the answer to rt's session.create (sent "early": the session's id as soon as it
 * exists): res the session (borrowed), or NULL and the refusal in e. Records the session or the
 * error; a session nobody wants any more (rt stopped or replaced meanwhile) is deleted. */
void oh_apply_create_reply(api_req_t *r, oh_rt_t *rt, json_object *res, const api_err_t *e);
/* Marks rt stopped (kept for OH_STOPPED_TTL_S) and releases its capacity slot. Returns 0,
 * or -1 on a Redis failure. */
int oh_mark_stopped(api_req_t *r, oh_rt_t *rt);
/* Capacity: reserves a slot for sid among the active runtimes. Returns 2 (reserved now: give
 * it back with oh_capacity_release if the start fails), 1 (already held, or no
 * --oh-max-runtimes), 0 at capacity, -1 Redis. */
int oh_capacity_reserve(api_req_t *r, const char *sid);
void oh_capacity_release(api_req_t *r, const char *sid);

/* ---- runtime_api.c ---- */

/* X-API-Key (or Authorization: Bearer) as a sandpipe token. Replies 401 and returns -1.
 * (Error replies are errors.h's: {"detail": msg, "error": {"code", "message"}}.) */
int oh_auth(api_req_t *r);
/* Loads rt again (after a change) and replies it. */
void oh_reply_reloaded(api_req_t *r, oh_rt_t *rt);
/* Resumes paused rt (a capacity slot first: 429 when none). Returns 0, or -1 after replying. */
int oh_resume(api_req_t *r, oh_rt_t *rt);
/* Replies a failed oh_session_op, its message prefixed with what: the gateway's refusal with
 * its code, anything else 503. */
void oh_fail_gateway(api_req_t *r, const api_err_t *e, const char *what);

#endif
