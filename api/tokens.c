/* tokens.c — POST /api/v1/tokens: an admin mints a token for someone else (jwt_sign with the
 * secret the API was started with). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "buf.h"
#include "json_util.h"
#include "redis.h"

void
api_tokens_create(api_req_t *r, char **params)
{
    (void)params;
    json_object *body = api_body_object(r);
    if (!body)
        return;
    jwt_claims_t c = {0};
    json_object *sub = json_get(body, "sub"), *role = json_get(body, "role"),
                *sess = json_get(body, "session"), *ttl = json_get(body, "ttl");
    const char *why = NULL;
    if (!sub || !json_object_is_type(sub, json_type_string) || !*json_object_get_string(sub) ||
        json_object_get_string_len(sub) >= (int)sizeof c.sub)
        why = "sub must be a non-empty string under 128 bytes";
    else if (!role || !json_object_is_type(role, json_type_string) ||
             (strcmp(json_object_get_string(role), "admin") &&
              strcmp(json_object_get_string(role), "user") &&
              strcmp(json_object_get_string(role), "viewer")))
        why = "role must be \"admin\", \"user\" or \"viewer\"";
    else if (sess && (!json_object_is_type(sess, json_type_string) ||
                      json_object_get_string_len(sess) >= (int)sizeof c.session))
        why = "session must be a string";
    else if (!strcmp(json_object_get_string(role), "viewer") &&
             (!sess || !*json_object_get_string(sess)))
        why = "a viewer token needs a session";
    else if (ttl && (!json_object_is_type(ttl, json_type_int) || json_object_get_int64(ttl) < 1 ||
                     json_object_get_int64(ttl) > 366LL * 86400))
        why = "ttl must be an integer number of seconds in [1, 31622400]";
    if (why) {
        json_object_put(body);
        api_failf(r, ERR_BAD_REQ, "%s", why);
        return;
    }
    snprintf(c.sub, sizeof c.sub, "%s", json_object_get_string(sub));
    snprintf(c.role, sizeof c.role, "%s", json_object_get_string(role));
    if (sess)
        snprintf(c.session, sizeof c.session, "%s", json_object_get_string(sess));
    c.iat = (int64_t)time(NULL);
    c.exp = c.iat + (ttl ? json_object_get_int64(ttl) : 3600);
    json_object_put(body);
    char *tok = jwt_sign(g_api.secret, g_api.secret_len, &c);
    if (!tok) {
        api_failf(r, ERR_BAD_REQ, "these claims cannot be signed (control characters?)");
        return;
    }
    json_object *o = json_object_new_object();
    json_set_str(o, "token", tok);
    json_set_str(o, "sub", c.sub);
    json_set_str(o, "role", c.role);
    if (*c.session)
        json_set_str(o, "session", c.session);
    json_set_int(o, "exp", c.exp);
    free(tok);
    api_reply_json(r, 201, o);
}
