/* api.h — sandpipe-api (FastCGI REST): the worker's configuration and the route handlers.
 *
 * A worker is one process running an FCGX_Accept loop (api_main.c). Each request is an
 * api_req_t (api_http.h), authenticated by api_auth.h, routed by the table in api_routes.c to
 * one handler below. Handlers are synchronous: they read Redis and talk to the owning gateway
 * through its inbox (api_redis.h), then reply exactly once. No state survives a request except
 * the worker's Redis connection. */
#ifndef SP_API_H
#define SP_API_H

#include <stddef.h>
#include <stdint.h>

#include "api_http.h"
#include "jwt.h"

#define API_VERSION          "0.1.0"
#define API_BODY_MAX_DEFAULT (8u * 1024 * 1024) /* largest request body read (--max-body) */
#define API_UPLOAD_MAX       (512u * 1024)      /* file.write content through the inbox */
#define API_WAIT_MAX_S       600                /* longest a request waits for a gateway */

typedef struct {
    const char *redis; /* "unix:/path" or "host:port" */
    uint8_t secret[JWT_SECRET_MAX];
    size_t secret_len;
    size_t body_max;
    int gw_timeout; /* seconds to wait for a gateway reply (default 60) */
} api_cfg_t;

extern api_cfg_t g_api;

/* Handles one request end to end (parse, route, reply). Never fails: errors are replies. */
void api_handle(api_req_t *r);

/* Queues an OpenHands action (borrowed) on session sid through gateway gw's inbox; on API_GW_OK
 * *res is {"seq":S} (new ref) and the "actions" metric counted; else as api_gw_call. */
int api_action_submit(api_req_t *r, const char *gw, const char *sid, json_object *action,
                      json_object **res, json_object **err);

/* Route handlers (api_routes.c maps method + path pattern to these). params[] holds the
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
void api_health(api_req_t *r, char **params);
void api_pool(api_req_t *r, char **params);
void api_metrics(api_req_t *r, char **params);
void api_tokens_create(api_req_t *r, char **params);
void api_rt_alive(api_req_t *r, char **params);
void api_rt_server_info(api_req_t *r, char **params);
void api_rt_execute_action(api_req_t *r, char **params);
void api_rt_list_files(api_req_t *r, char **params);
void api_rt_vscode_token(api_req_t *r, char **params);
void api_rt_unsupported(api_req_t *r, char **params);

/* Loads session sid for a change by r: replies 404 (not visible), 403 (read-only token) or 503
 * and returns NULL; else the session object (new ref). api_sessions.c. */
json_object *api_session_for_write(api_req_t *r, const char *sid);

/* Checks that session s (borrowed) can take work now: not STOPPED (409) and its gateway alive
 * (503). Copies the gateway id into gw. Returns 0, or -1 after replying. api_actions.c. */
int api_session_live(api_req_t *r, json_object *s, char *gw, size_t cap);

/* Waits (XREAD BLOCK on the session's stream, from 0-seq) for the observation event of the
 * action with sequence number seq, up to timeout_ms. Returns the event (new ref) or NULL:
 * *why set to "timeout", "redis" or "ended" (the session stopped first). api_actions.c. */
json_object *api_wait_observation(api_req_t *r, const char *sid, uint64_t seq, int timeout_ms,
                                  const char **why);

#endif
