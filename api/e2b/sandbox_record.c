/* sandbox_record.c — an E2B sandbox as sandpipe keeps it: its session record plus sp:e2b:{SID}
 * (template, metadata, envVars), and its shapes on E2B's wire (SandboxDetail, ListedSandbox).
 * See e2b.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "e2b.h"
#include "json_util.h"
#include "redis.h"
#include "session_record.h"

int
e2b_auth(api_req_t *r, bool write)
{
    const char *key = api_param(r, "HTTP_X_API_KEY");
    if (!key || !*key) {
        api_failf(r, ERR_AUTH, "an X-API-Key header holding a sandpipe token is required");
        return -1;
    }
    jwt_claims_t c;
    err_t err = {0};
    int rc = jwt_verify(g_api.secret, g_api.secret_len, key, (int64_t)time(NULL), &c, &err);
    if (rc < 0) {
        api_failf(r, ERR_AUTH, "invalid API key: %s",
                  rc == -ERR_AUTH_EXPIRED ? "expired" : err.msg);
        return -1;
    }
    r->claims = c;
    r->authed = true;
    if (write && !strcmp(c.role, "viewer")) {
        api_failf(r, ERR_FORBIDDEN, "this API key is read-only");
        return -1;
    }
    return 0;
}

/* A JSON object of strings held in field f of hash h (new ref; {} when absent or not one). */
static json_object *
hash_object(const redisReply *h, const char *f)
{
    for (size_t i = 0; h->type == REDIS_REPLY_ARRAY && i + 1 < h->elements; i += 2) {
        if (strcmp(h->element[i]->str, f) != 0)
            continue;
        err_t err = {0};
        json_object *o = json_parse_lossy(h->element[i + 1]->str, h->element[i + 1]->len, &err);
        if (o && json_object_is_type(o, json_type_object))
            return o;
        json_object_put(o);
    }
    return json_object_new_object();
}

json_object *
e2b_sandbox_load(api_req_t *r, const char *sid, api_err_t *e)
{
    json_object *s = api_session_load(r, sid, e);
    if (!s)
        return NULL;
    const char *status = json_get_str(s, "status", "");
    if (!strcmp(status, "STOPPED") || !strncmp(status, "ERROR", 5) || json_get(s, "ended")) {
        json_object_put(s);
        api_err_set(e, ERR_NOT_FOUND, "Sandbox %.100s not found", sid);
        return NULL;
    }
    redisReply *h = api_redis_cmdf(r, "HGETALL sp:e2b:{%s}", sid);
    if (!h) {
        json_object_put(s);
        api_err_redis(e);
        return NULL;
    }
    const char *tmpl = E2B_DEFAULT_TEMPLATE;
    for (size_t i = 0; h->type == REDIS_REPLY_ARRAY && i + 1 < h->elements; i += 2)
        if (!strcmp(h->element[i]->str, "template"))
            tmpl = h->element[i + 1]->str;
    json_set_str(s, "e2b_template", tmpl);
    json_set(s, "e2b_metadata", hash_object(h, "metadata"));
    freeReplyObject(h);
    return s;
}

int
e2b_sandbox_save(api_req_t *r, const char *sid, double created, const char *tmpl,
                 json_object *metadata, json_object *env_vars, api_err_t *e)
{
    const char *md = json_object_to_json_string_ext(metadata, JSON_C_TO_STRING_PLAIN);
    const char *ev = json_object_to_json_string_ext(env_vars, JSON_C_TO_STRING_PLAIN);
    redisReply *a =
        api_redis_cmdf(r, "HSET sp:e2b:{%s} template %s metadata %s env %s", sid, tmpl, md, ev);
    redisReply *b = a ? api_redis_cmdf(r, "ZADD sp:e2b:sandboxes %f %s", created, sid) : NULL;
    bool ok = a && b && a->type != REDIS_REPLY_ERROR && b->type != REDIS_REPLY_ERROR;
    if (a)
        freeReplyObject(a);
    if (b)
        freeReplyObject(b);
    return ok ? 0 : api_err_redis(e);
}

void
e2b_sandbox_forget(api_req_t *r, const char *sid)
{
    api_redis_post(r, "ZREM sp:e2b:sandboxes %s", sid);
    api_redis_post(r, "DEL sp:e2b:{%s}", sid);
}

const char *
e2b_state(json_object *s)
{
    return !strcmp(json_get_str(s, "status", ""), "PAUSED") ? "paused" : "running";
}

json_object *
e2b_rfc3339(double t)
{
    time_t whole = (time_t)t; /* t > 0: truncation is floor */
    struct tm tm;
    gmtime_r(&whole, &tm);
    char out[64];
    size_t n = strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, sizeof out - n, ".%03dZ", (int)((t - (double)whole) * 1000));
    return json_object_new_string(out);
}

json_object *
e2b_detail(json_object *s)
{
    json_object *o = json_object_new_object();
    const char *tmpl = json_get_str(s, "e2b_template", E2B_DEFAULT_TEMPLATE);
    double created = json_get_double(s, "created", 0);
    int64_t life = json_get_int(s, "max_lifetime", 0);
    json_set_str(o, "sandboxID", json_get_str(s, "id", ""));
    json_set_str(o, "templateID", tmpl);
    json_set_str(o, "alias", tmpl);
    json_set_str(o, "clientID", "sandpipe");
    json_set_str(o, "envdVersion", E2B_ENVD_VERSION);
    json_set(o, "startedAt", e2b_rfc3339(created));
    /* no lifetime (a session made outside this API): as far as E2B can say, 24 h on */
    json_set(o, "endAt", e2b_rfc3339(created + (double)(life > 0 ? life : E2B_TIMEOUT_MAX)));
    json_set_str(o, "state", e2b_state(s));
    /* its limits (the gateway's record of its sandbox); where there is none, this host's
     * CPUs and memory, what the sandbox may use (with several hosts, the API's host's) */
    json_object *lim = json_get(s, "limits");
    int64_t millicores = json_get_int(lim, "cpu_millicores", 0),
            memory = json_get_int(lim, "memory_bytes", 0);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), pages = sysconf(_SC_PHYS_PAGES),
         page = sysconf(_SC_PAGESIZE);
    json_set_int(o, "cpuCount", millicores > 0 ? (millicores + 999) / 1000 : cpus > 0 ? cpus : 1);
    json_set_int(o, "memoryMB", (memory > 0 ? memory : (int64_t)pages * page) >> 20);
    json_set_int(o, "diskSizeMB", json_get_int(lim, "disk_bytes", 0) >> 20); /* 0: no own disk */
    json_object *md = json_get(s, "e2b_metadata");
    json_set(o, "metadata", md ? json_object_get(md) : json_object_new_object());
    e2b_network_describe(json_get(s, "network"), o);
    json_object *lc = json_object_new_object(); /* what its timeout does, and what resumes it */
    json_set_str(lc, "onTimeout",
                 !strcmp(json_get_str(s, "lifetime_action", "stop"), "pause") ? "pause" : "kill");
    json_set(lc, "autoResume", json_object_new_boolean(json_get_int(s, "auto_resume", 0) > 0));
    json_set(o, "lifecycle", lc);
    return o;
}

void
e2b_not_found(api_req_t *r, const char *sid)
{
    api_failf(r, ERR_NOT_FOUND, "Sandbox %.100s not found", sid);
}
