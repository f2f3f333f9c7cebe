/* auth.h — who is asking: Bearer JWT (jwt_verify) and the role rules of the REST API.
 *
 * Roles: admin (everything), user (its own sessions: owner == sub), viewer (read-only, the one
 * session named in its token). The rules mirror the gateway's, which checks them again. */
#ifndef SP_API_AUTH_H
#define SP_API_AUTH_H

#include <stdbool.h>

#include "http.h"

/* Verifies the Authorization header. Returns 0 and sets r->claims/r->authed, or replies 401
 * (missing, malformed, forged, alg other than HS256, expired) and returns -1. */
int api_auth_bearer(api_req_t *r);

/* Verifies token for use on session sid (the /runtime/ X-Session-API-Key): valid signature
 * and time, and a role that may see sid owned by owner (write: may act on it). Fills r->claims
 * on success. Returns 0 or -1 (no reply sent). */
int api_auth_session_key(api_req_t *r, const char *token, const char *sid, const char *owner,
                         bool write);

/* May the authenticated caller see (write: change) session sid owned by owner? */
bool api_may_see(const api_req_t *r, const char *sid, const char *owner);
bool api_may_write(const api_req_t *r, const char *sid, const char *owner);
bool api_is_admin(const api_req_t *r);

#endif
