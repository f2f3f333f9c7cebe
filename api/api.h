/* api.h — sandpipe-api (FastCGI REST): the worker's configuration and the route handlers.
 *
 * A worker is one process running an FCGX_Accept loop (main.c). Each request is an
 * api_req_t (http.h), authenticated by auth.h, routed by the table in routes.c to
 * one handler below. Handlers are synchronous: they read Redis and talk to the owning gateway
 * through its inbox (redis.h), then reply exactly once. No state survives a request except
 * the worker's Redis connection. */
#ifndef SP_API_H
#define SP_API_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "jwt.h"

#define API_VERSION               "0.1.0"
#define API_BODY_MAX_DEFAULT      (8u * 1024 * 1024) /* largest request body read (--max-body) */
#define API_UPLOAD_MAX            (512u * 1024)      /* file.write content through the inbox */
#define API_UPLOAD_STREAM_DEFAULT (1ull << 30)       /* streamed uploads (--max-upload) */
#define API_WAIT_MAX_S            600                /* longest a request waits for a gateway */
#define API_OH_START_WAIT_DEFAULT 5000 /* ms /start waits for READY (--oh-start-wait) */

typedef struct {
    const char *redis; /* "unix:/path" or "host:port" */
    uint8_t secret[JWT_SECRET_MAX];
    size_t secret_len;
    size_t body_max;
    unsigned long long upload_max; /* largest streamed upload (file.upload's max_bytes) */
    int gw_timeout;                /* seconds to wait for a gateway reply (default 60) */
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

/* Queues an OpenHands action (borrowed) on session sid through gateway gw's inbox; on API_GW_OK
 * *res is {"seq":S} (new ref) and the "actions" metric counted; else as api_gw_call. */
int api_action_submit(api_req_t *r, const char *gw, const char *sid, json_object *action,
                      json_object **res, json_object **err);

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
void api_files_list(api_req_t *r, char **params);
void api_files_stat(api_req_t *r, char **params);
void api_files_read(api_req_t *r, char **params);
void api_files_write(api_req_t *r, char **params);
void api_files_put(api_req_t *r, char **params);      /* streamed body (BODY_STREAM) */
void api_files_download(api_req_t *r, char **params); /* raw bytes, streamed */
void api_health(api_req_t *r, char **params);
void api_pool(api_req_t *r, char **params);
void api_metrics(api_req_t *r, char **params);
void api_tokens_create(api_req_t *r, char **params);
void api_rt_alive(api_req_t *r, char **params);
void api_rt_server_info(api_req_t *r, char **params);
void api_rt_execute_action(api_req_t *r, char **params);
void api_rt_list_files(api_req_t *r, char **params);
void api_rt_vscode_token(api_req_t *r, char **params);
void api_rt_upload_file(api_req_t *r, char **params);    /* streamed body (BODY_STREAM) */
void api_rt_download_files(api_req_t *r, char **params); /* a zip, streamed */
/* The session behind a /runtime/{id}/ capture (sid, PARAM_MAX bytes, may be rewritten to the
 * session id of a runtime id) once X-Session-API-Key is checked for a read (write false) or a
 * change; its gateway id into gw. Replies (404, 403, 502, 503) and returns NULL on failure;
 * else the session (new ref). action_server.c. */
json_object *api_rt_session_authed(api_req_t *r, char *sid, char *gw, size_t cap, bool write);

/* The live gateway owning the fewest sessions, into out. 1 found, 0 none, -1 Redis failure.
 * sessions.c. */
int api_gateway_pick(api_req_t *r, char *out, size_t cap);

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
/* A runtime's own URL, /{runtime_id}/…: served as /runtime/{runtime_id}/… (api_handle calls
 * this before routing), plus its unauthenticated /health and /ready. */
void api_oh_path_form(api_req_t *r);
void api_oh_health(api_req_t *r, char **params);
void api_oh_ready(api_req_t *r, char **params);
/* For /runtime/{id}/ (action_server.c): when id is a runtime id, copies its sandpipe session id
 * into sid (id itself otherwise). Returns 1, 0 unknown or stopped, 2 still starting, -1 Redis.
 * key receives the runtime's session API key ("" for a plain session id). */
int api_oh_runtime_session(api_req_t *r, const char *id, char *sid, size_t cap, char *key,
                           size_t keycap, char *owner, size_t ownercap);

/* Loads session sid for a change by r: replies 404 (not visible), 403 (read-only token) or 503
 * and returns NULL; else the session object (new ref). sessions.c. */
json_object *api_session_for_write(api_req_t *r, const char *sid);

/* Checks that session s (borrowed) can take work now: not STOPPED (409) and its gateway alive
 * (503). Copies the gateway id into gw. Returns 0, or -1 after replying. actions.c. */
int api_session_live(api_req_t *r, json_object *s, char *gw, size_t cap);

/* Runs an OpenHands action (borrowed) on session sid (check_gw: check gateway gw's heartbeat
 * in the same round trip, *rc API_GW_DEAD when gone) and waits up to timeout_ms for its
 * observation event (new ref), which the gateway sends back itself (inbox "action" with
 * "wait"); an action running longer than that first wait is followed on the stream
 * (api_wait_observation). NULL: *rc is not API_GW_OK (*err as api_gw_call; "session_ended"
 * when the session stopped first), or *why says why (as api_wait_observation). *seq_out is
 * the action's sequence number once queued. actions.c. */
json_object *api_action_run(api_req_t *r, const char *gw, bool check_gw, const char *sid,
                            json_object *action, int timeout_ms, uint64_t *seq_out, int *rc,
                            json_object **err, const char **why);

/* Waits (XREAD BLOCK on the session's stream, from 0-seq) for the observation event of the
 * action with sequence number seq, up to timeout_ms. Returns the event (new ref) or NULL:
 * *why set to "timeout", "redis" or "ended" (the session stopped first). actions.c. */
json_object *api_wait_observation(api_req_t *r, const char *sid, uint64_t seq, int timeout_ms,
                                  const char **why);

#endif
