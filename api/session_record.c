/* session_record.c — a session's record as the API reads it: sp:session:{sid} turned into the
 * WebSocket API's session object, with who may see it. See session_record.h and redis/README.md. */
#include "session_record.h"

#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "json_util.h"
#include "redis.h"

static const redisReply *
hash_field(const redisReply *h, const char *name)
{
    if (!h || h->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (size_t i = 0; i + 1 < h->elements; i += 2)
        if (h->element[i]->type == REDIS_REPLY_STRING && !strcmp(h->element[i]->str, name))
            return h->element[i + 1];
    return NULL;
}

json_object *
api_session_from_hash(const redisReply *h)
{
    static const char *const strs[] = {"id", "owner", "status", "profile", "gateway"};
    json_object *o = json_object_new_object();
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        const redisReply *v = hash_field(h, strs[i]);
        json_set_str(o, strs[i], v && v->str ? v->str : "");
    }
    const redisReply *sb = hash_field(h, "sandbox");
    const char *provider = "";
    json_object *sbj = NULL;
    if (sb && sb->str) {
        err_t err = {0};
        sbj = json_parse_lossy(sb->str, sb->len, &err);
        provider = json_get_str(sbj, "provider", "");
    }
    json_set_str(o, "provider", provider);
    if (json_get_str(sbj, "image", "")[0]) /* the runtime image its sandbox runs */
        json_set_str(o, "image", json_get_str(sbj, "image", ""));
    if (json_get_str(sbj, "warning", "")[0]) /* degraded isolation, as the gateway reports it */
        json_set_str(o, "warning", json_get_str(sbj, "warning", ""));
    json_object *lim = json_object_new_object(); /* what its sandbox runs under; 0: no limit */
    static const char *const limits[] = {"memory_bytes", "cpu_millicores", "disk_bytes"};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        int64_t v = json_get_int(sbj, limits[i], 0);
        json_set_int(lim, limits[i], v > 0 ? v : 0);
    }
    json_set(o, "limits", lim);
    json_object_put(sbj);
    const redisReply *v = hash_field(h, "created");
    json_set(o, "created", json_object_new_double(v && v->str ? atof(v->str) : 0.0));
    v = hash_field(h, "idle_timeout");
    json_set_int(o, "idle_timeout", v && v->str ? atoll(v->str) : 0);
    v = hash_field(h, "max_lifetime");
    json_set_int(o, "max_lifetime", v && v->str ? atoll(v->str) : 0);
    /* what its idle timeout and its lifetime's end do, and what a request resuming it gives */
    v = hash_field(h, "idle_action");
    json_set_str(o, "idle_action", v && v->str && !strcmp(v->str, "pause") ? "pause" : "stop");
    v = hash_field(h, "lifetime_action");
    json_set_str(o, "lifetime_action", v && v->str && !strcmp(v->str, "pause") ? "pause" : "stop");
    v = hash_field(h, "auto_resume");
    json_set_int(o, "auto_resume", v && v->str && atoll(v->str) > 0 ? atoll(v->str) : 0);
    v = hash_field(h, "plugins");
    json_object *plugins = NULL;
    if (v && v->str) {
        err_t err = {0};
        plugins = json_parse_lossy(v->str, v->len, &err);
    }
    if (!plugins || !json_object_is_type(plugins, json_type_array)) {
        json_object_put(plugins);
        plugins = json_object_new_array();
    }
    json_set(o, "plugins", plugins);
    v = hash_field(h, "plugin_status"); /* the gateway's sanitized copy (session_plugins.c) */
    json_object *pst = NULL;
    if (v && v->str) {
        err_t err = {0};
        pst = json_parse_lossy(v->str, v->len, &err);
    }
    if (!pst || !json_object_is_type(pst, json_type_object)) {
        json_object_put(pst);
        pst = json_object_new_object();
    }
    json_set(o, "plugin_status", pst);
    v = hash_field(h, "network"); /* its normalised policy (docs/api.md "Network") */
    json_object *net = NULL;
    if (v && v->str) {
        err_t err = {0};
        net = json_parse_lossy(v->str, v->len, &err);
    }
    if (!net || !json_object_is_type(net, json_type_object) || !json_get_str(net, "mode", NULL)) {
        json_object_put(net);
        net = json_tokener_parse("{\"mode\":\"none\"}");
    }
    json_set(o, "network", net);
    v = hash_field(h, "ended");
    if (v && v->str)
        json_set(o, "ended", json_object_new_double(atof(v->str)));
    return o;
}

int64_t
api_session_last_seq(api_req_t *r, const char *sid)
{
    redisReply *x = api_redis_cmdf(r, "XREVRANGE sp:session:{%s}:events + - COUNT 1", sid);
    int64_t seq = 0;
    if (x && x->type == REDIS_REPLY_ARRAY && x->elements == 1 &&
        x->element[0]->type == REDIS_REPLY_ARRAY && x->element[0]->elements >= 1) {
        const char *id = x->element[0]->element[0]->str;
        const char *dash = id ? strchr(id, '-') : NULL;
        seq = dash ? atoll(dash + 1) : 0;
    }
    if (x)
        freeReplyObject(x);
    return seq;
}

json_object *
api_session_load(api_req_t *r, const char *sid, api_err_t *e)
{
    if (!*sid || strlen(sid) > 100 || strpbrk(sid, "{}\r\n "))
        goto not_found;
    if (!api_redis_get(r, false)) {
        api_err_redis(e);
        return NULL;
    }
    redisReply *h = api_redis_cmdf(r, "HGETALL sp:session:{%s}", sid);
    if (!h) {
        api_err_redis(e);
        return NULL;
    }
    if (h->type != REDIS_REPLY_ARRAY || h->elements == 0) {
        freeReplyObject(h);
        goto not_found;
    }
    const redisReply *owner = hash_field(h, "owner");
    if (!api_may_see(r, sid, owner && owner->str ? owner->str : "")) {
        freeReplyObject(h);
        goto not_found;
    }
    json_object *s = api_session_from_hash(h);
    freeReplyObject(h);
    json_set_int(s, "last_seq", api_session_last_seq(r, sid));
    return s;
not_found:
    api_err_set(e, ERR_NOT_FOUND, "no session %.100s", sid);
    return NULL;
}
