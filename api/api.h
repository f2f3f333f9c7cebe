/* api.h — sandpipe-api (FastCGI REST): the worker's configuration and the route handlers.
 *
 * A worker is one process running an FCGX_Accept loop (main.c). Each request is an
 * api_req_t (http.h), authenticated by auth.h, routed by the table in routes.c to
 * one handler below. Handlers are synchronous: they read Redis and talk to the owning gateway
 * over HTTP (gateway_client.h), then reply exactly once. No state survives a request except
 * the worker's Redis connection and its kept connections to the gateways. */
#ifndef SP_API_H
#define SP_API_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "gateway_client.h"
#include "http.h"
#include "jwt.h"
#include "redis_addr.h"
#include "redis_password.h"

#define API_VERSION               "0.1.0"
#define API_BODY_MAX_DEFAULT      (8u * 1024 * 1024) /* largest request body read (--max-body) */
#define API_UPLOAD_STREAM_DEFAULT (1ull << 30)       /* streamed uploads (--max-upload) */
#define API_WAIT_MAX_S            600                /* longest a request waits for a gateway */
#define API_OH_START_WAIT_DEFAULT 5000 /* ms /start waits for READY (--oh-start-wait) */

typedef struct {
    const char *redis;        /* "unix:/path", "host:port" or "sentinel://..." (redis_addr.h) */
    redis_addr_t redis_where; /* redis, parsed */
    redis_auth_t redis_auth;  /* --redis-user, --redis-password-file (none: no AUTH) */
    redis_auth_t redis_sentinel_auth; /* --redis-sentinel-user, -password-file (the sentinels') */
    uint8_t secret[JWT_SECRET_MAX];
    size_t secret_len;
    size_t body_max;
    unsigned long long upload_max; /* largest streamed upload (file.upload's max_bytes) */
    int gw_timeout;                /* seconds to wait for a gateway reply (default 60) */
    const char *image_store;       /* --images: runtime images (common/image.h) */
    struct {
        int idle_timeout;  /* --oh-idle-timeout: idle seconds before a runtime is paused */
        int max_runtimes;  /* --oh-max-runtimes: starting + running runtimes (0: no cap) */
        int start_wait_ms; /* --oh-start-wait: /start waits this long for READY (0: never) */
        long long memory, cpu, pids; /* --oh-memory/-cpu/-pids: limits at resource_factor 1 */
    } oh;                            /* the OpenHands Runtime API (api_oh_*.c) */
} api_cfg_t;

extern api_cfg_t g_api;

/* Handles one request end to end (parse, route, reply). Never fails: errors are replies. */
void api_handle(api_req_t *r);

/* Route handlers (routes.c maps method + path pattern to these). params[] holds the
 * pattern's {captures} in order, decoded. Each replies exactly once. */
typedef void (*api_handler_fn)(api_req_t *r, char **params);

void api_sessions_create(api_req_t *r, char **params);
void api_sessions_list(api_req_t *r, char **params);
void api_sessions_get(api_req_t *r, char **params);
void api_sessions_delete(api_req_t *r, char **params);
void api_sessions_pause(api_req_t *r, char **params);
void api_sessions_resume(api_req_t *r, char **params);
void api_actions_submit(api_req_t *r, char **params);
void api_signal_send(api_req_t *r, char **params);
void api_events_list(api_req_t *r, char **params);
/* The files routes, which the session's gateway serves: the API answers what nginx could not
 * route there (files.c). */
void api_files_list(api_req_t *r, char **params);
void api_files_stat(api_req_t *r, char **params);
void api_files_read(api_req_t *r, char **params);
void api_files_write(api_req_t *r, char **params);
void api_files_put(api_req_t *r, char **params); /* BODY_STREAM: the body is never read */
void api_files_mkdir(api_req_t *r, char **params);
void api_files_move(api_req_t *r, char **params);
void api_files_remove(api_req_t *r, char **params);
void api_files_download(api_req_t *r, char **params);
void api_health(api_req_t *r, char **params);
void api_pool(api_req_t *r, char **params);
void api_metrics(api_req_t *r, char **params);
/* The counters every METRICS_HISTORY_STEP_S over the last ?seconds= (metrics_history.c). */
void api_metrics_history(api_req_t *r, char **params);
void api_tokens_create(api_req_t *r, char **params);
/* The live gateway owning the fewest sessions, into out, none of the nskip in skip (those
 * that did not accept a moment ago). 1 found, 0 none, -1 Redis failure. sessions.c. */
int api_gateway_pick(api_req_t *r, char *out, size_t cap, char (*skip)[128], size_t nskip);

#define API_CREATE_TRIES 3 /* gateways a create tries when the picked one does not accept */

/* session.create of req (borrowed; "op" and "params" set) on a live gateway, picked again
 * while the picked one does not accept (a gateway killed moments ago still has its
 * heartbeat): as api_gw_call, with ERR_NO_GATEWAY when none is running. sessions.c. */
json_object *api_gateway_create(api_req_t *r, api_gw_call_t *c, api_err_t *e);

/* A create's key (hex): the gateway records the session under sp:create:<key>. */
#define API_CREATE_KEY_LEN 32
void api_create_key(char out[API_CREATE_KEY_LEN + 1]);
/* What became of the create keyed key that gateway gw took and did not answer (e holds why):
 * the session once READY (early: once it exists and has not failed), or NULL with e:
 * ERR_GATEWAY_DOWN (none was recorded and gw is gone; or the session failed: its id and reason
 * in the message), ERR_TIMEOUT (still starting at deadline, a monotonic time, at least 10 s
 * away), ERR_UNAVAILABLE. create_outcome.c. */
json_object *api_create_outcome(api_req_t *r, const char *gw, const char *key, bool early,
                                double deadline, api_err_t *e);

/* The OpenHands Runtime API under /openhands (api_oh_*.c; docs/api.md). */
void api_oh_start(api_req_t *r, char **params);
void api_oh_sessions_get(api_req_t *r, char **params);
void api_oh_batch(api_req_t *r, char **params);
void api_oh_runtime_get(api_req_t *r, char **params);
void api_oh_pause(api_req_t *r, char **params);
void api_oh_resume(api_req_t *r, char **params);
void api_oh_stop(api_req_t *r, char **params);
void api_oh_list(api_req_t *r, char **params);
void api_oh_registry_prefix(api_req_t *r, char **params);
void api_oh_image_exists(api_req_t *r, char **params);
void api_oh_build(api_req_t *r, char **params);
void api_oh_build_status(api_req_t *r, char **params);
/* A runtime's own URL, /{runtime_id}/…: taken as /runtime/{runtime_id}/… (api_handle calls
 * this before routing: the action server's flavour for what nginx could not route). */
void api_oh_path_form(api_req_t *r);
/* api_session_load (session_record.h) for a change by r: also ERR_FORBIDDEN (a read-only
 * token). sessions.c. */
json_object *api_session_for_write(api_req_t *r, const char *sid, api_err_t *e);

/* Checks that session s (borrowed) can take work now: 0, or -code with e: ERR_SESSION_ENDED
 * (stopped), ERR_GATEWAY_DOWN, ERR_UNAVAILABLE. Copies the gateway id into gw. actions.c. */
int api_session_live(api_req_t *r, json_object *s, char *gw, size_t cap, api_err_t *e);
/* api_session_for_write, then api_session_live: the gateway of a session r may change and that
 * can take work now (0), or -code with e. actions.c. */
int api_session_gateway_for_write(api_req_t *r, const char *sid, char *gw, size_t cap,
                                  api_err_t *e);

/* An OpenHands action to run and wait for (api_action_run). */
typedef struct {
    const char *gw, *sid; /* the session and its gateway */
    json_object *action;  /* borrowed */
    int timeout_ms;       /* how long its observation may take */
    uint64_t seq;         /* out: the action's sequence number once queued */
    bool queued;          /* out: the gateway queued it (a failure after that is the wait's) */
} api_action_run_t;

/* Runs a->action on session a->sid and waits up to a->timeout_ms for its observation event
 * (new ref), followed on the session's event stream once the gateway queued it. NULL with e: before
 * queued, as api_gw_call (ERR_SESSION_ENDED: the gateway's "the session stopped first"); after,
 * ERR_TIMEOUT, ERR_UNAVAILABLE (Redis) or ERR_SESSION_ENDED. actions.c. */
json_object *api_action_run(api_req_t *r, api_action_run_t *a, api_err_t *e);

#endif
