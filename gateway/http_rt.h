/* http_rt.h — what the OpenHands action server's routes on the session's own gateway share
 * (http_actions.c execute_action, http_runtime.c, http_rt_download.c, http_rt_upload.c): the
 * {"detail": …} answers, FastAPI's validation error, the checks every /runtime/{id}/ route makes
 * of its session and of X-Session-API-Key, with sandpipe-api's texts (api/openhands/
 * action_server.c, now in git history, was the reference; docs/api.md, "/runtime/{session}/"). */
#ifndef SP_HTTP_RT_H
#define SP_HTTP_RT_H

#include <stdbool.h>

#include "http_server.h"
#include "jwt.h"
#include "route.h"
#include "session.h"

#define RT_PATH_MAX 4096

/* {"detail": detail} with code's action-server status. */
void http_rt_fail(http_req_t *h, int code, const char *detail);
void http_rt_failf(http_req_t *h, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* {"detail":"Invalid request parameters","errors":[{type, loc:[where, field], msg}]} (422), as
 * FastAPI's validation errors; field may be NULL. */
void http_rt_invalid(http_req_t *h, const char *type, const char *where, const char *field,
                     const char *msg);
/* Whether route r's session may be served: otherwise answers (404 unknown or stopped, 503
 * starting/paused/Redis, 502 broken) and returns false. r NULL: Redis did not answer. */
bool http_rt_live(http_req_t *h, const route_t *r);
/* r's session when this gateway runs it, else answers 502 "Runtime disconnected: …" (NULL). */
gw_session_t *http_rt_here(http_req_t *h, const route_t *r);
/* X-Session-API-Key: the runtime's own key (its owner, into c) or a token for the session that
 * may read (write: change) it. False when it answered 403 "Invalid API Key". */
bool http_rt_authed(http_req_t *h, const route_t *r, bool write, jwt_claims_t *c);
/* dir + "/" + name into out ("" dir: name alone). 0, or -1 when it does not fit. */
int http_rt_join(char *out, size_t cap, const char *dir, const char *name);

#endif
