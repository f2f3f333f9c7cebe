/* auth.c — Bearer tokens and role rules for sandpipe-api. See auth.h. */
#include "auth.h"

#include <string.h>
#include <time.h>

#include "api.h"
#include "err.h"

static int
verify(api_req_t *r, const char *token, err_t *err)
{
    jwt_claims_t c;
    int rc = jwt_verify(g_api.secret, g_api.secret_len, token, (int64_t)time(NULL), &c, err);
    if (rc < 0)
        return rc;
    r->claims = c;
    r->authed = true;
    return 0;
}

int
api_auth_bearer(api_req_t *r)
{
    const char *token = NULL;
    int rc = jwt_bearer_from_header(api_param(r, "HTTP_AUTHORIZATION"), &token);
    if (rc == -ERR_NOT_FOUND) {
        api_failf(r, ERR_AUTH, "an Authorization: Bearer token is required");
        return -1;
    }
    if (rc < 0) {
        api_failf(r, ERR_AUTH, "the Authorization header must be \"Bearer <token>\"");
        return -1;
    }
    err_t err = {0};
    rc = verify(r, token, &err);
    if (rc == -ERR_AUTH_EXPIRED) {
        api_failf(r, ERR_AUTH_EXPIRED, "the token has expired");
        return -1;
    }
    if (rc < 0) {
        api_failf(r, ERR_AUTH, "invalid token: %s", err.msg);
        return -1;
    }
    return 0;
}

bool
api_is_admin(const api_req_t *r)
{
    return r->authed && !strcmp(r->claims.role, "admin");
}

bool
api_may_see(const api_req_t *r, const char *sid, const char *owner)
{
    if (!r->authed)
        return false;
    if (!strcmp(r->claims.role, "admin"))
        return true;
    if (!strcmp(r->claims.role, "viewer"))
        return !strcmp(r->claims.session, sid);
    return !strcmp(r->claims.role, "user") && owner && !strcmp(owner, r->claims.sub);
}

bool
api_may_write(const api_req_t *r, const char *sid, const char *owner)
{
    return api_may_see(r, sid, owner) && strcmp(r->claims.role, "viewer") != 0;
}

int
api_auth_session_key(api_req_t *r, const char *token, const char *sid, const char *owner,
                     bool write)
{
    if (!token || !*token)
        return -1;
    err_t err = {0};
    if (verify(r, token, &err) < 0)
        return -1;
    bool ok = write ? api_may_write(r, sid, owner) : api_may_see(r, sid, owner);
    if (!ok) {
        r->authed = false;
        memset(&r->claims, 0, sizeof r->claims);
        return -1;
    }
    return 0;
}
