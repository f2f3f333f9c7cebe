/* ctl_msg.c — control request and answer bodies (ctl_msg.h). */
#include "ctl_msg.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "xalloc.h"

/* A member that is absent or a string: its text ("" when absent), or NULL when ill-typed. */
static const char *
opt_str(json_object *o, const char *key)
{
    json_object *v = json_get(o, key);
    if (!v)
        return "";
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

json_object *
ctl_request_decode(const char *body, size_t len, ctl_request_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    err_t perr = {0};
    json_object *o = json_parse(body, len, &perr);
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        err_set(err, ERR_BAD_REQ, "a control request is a JSON object");
        return NULL;
    }
    json_object *op = json_get(o, "op");
    size_t n = op && json_object_is_type(op, json_type_string)
                   ? (size_t)json_object_get_string_len(op)
                   : 0;
    const char *owner = opt_str(o, "owner"), *role = opt_str(o, "role"),
               *viewer = opt_str(o, "viewer_session");
    const char *why = NULL;
    if (n == 0 || n > CTL_OP_MAX || strlen(json_object_get_string(op)) != n)
        why = "\"op\" must be a string of 1 to 64 bytes";
    else if (!owner || !role || !viewer)
        why = "\"owner\", \"role\" and \"viewer_session\" must be strings";
    else if (strcmp(role, "admin") && strcmp(role, "user") && strcmp(role, "viewer"))
        why = "\"role\" must be \"admin\", \"user\" or \"viewer\"";
    if (why) {
        json_object_put(o);
        err_set(err, ERR_BAD_REQ, "%s", why);
        return NULL;
    }
    *out = (ctl_request_t){json_object_get_string(op), owner, role, viewer};
    return o;
}

int
ctl_answer_decode(const char *body, size_t len, json_object **result, json_object **error,
                  err_t *err)
{
    *result = *error = NULL;
    err_t perr = {0};
    json_object *m = json_parse_lossy(body, len, &perr); /* the gateway's words, carried */
    json_object *ok = json_get(m, "ok");
    if (!m || !json_object_is_type(m, json_type_object) || !ok ||
        !json_object_is_type(ok, json_type_boolean)) {
        json_object_put(m);
        return err_set(err, ERR_PROTO, "the gateway's answer is not {\"ok\":...}");
    }
    if (json_object_get_boolean(ok)) {
        json_object *r = json_get(m, "result");
        *result = r ? json_object_get(r) : json_object_new_object();
        json_object_put(m);
        return 1;
    }
    json_object *e = json_get(m, "error");
    if (!e || !json_object_is_type(e, json_type_object) ||
        !json_object_is_type(json_get(e, "message"), json_type_string)) {
        json_object_put(m);
        return err_set(err, ERR_PROTO, "the gateway's refusal has no error message");
    }
    *error = json_object_get(e);
    json_object_put(m);
    return 0;
}

static char *
answer(bool ok, json_object *v, size_t *len)
{
    json_object *m = json_object_new_object();
    json_set_bool(m, "ok", ok);
    json_set(m, ok ? "result" : "error", v);
    size_t n;
    const char *t = json_text(m, &n);
    char *s = xmalloc(n + 1);
    memcpy(s, t, n + 1);
    json_object_put(m);
    if (len)
        *len = n;
    return s;
}

char *
ctl_answer_ok(json_object *result, size_t *len)
{
    return answer(true, result ? result : json_object_new_object(), len);
}

char *
ctl_answer_fail(json_object *error, size_t *len)
{
    return answer(false, error, len);
}
