/* envd_connect.c — Connect RPC's JSON codec on the gateway's HTTP side (envd_connect.h). */
#include "envd_connect.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "envd_routes.h"
#include "envd_wire.h"
#include "envd_token.h"
#include "gw.h"
#include "json_util.h"
#include "session.h"

static const struct {
    const char *name;
    int status;
} codes[] = {
    [ENVD_CANCELED] = {"canceled", 499},
    [ENVD_UNKNOWN] = {"unknown", 500},
    [ENVD_INVALID_ARGUMENT] = {"invalid_argument", 400},
    [ENVD_DEADLINE_EXCEEDED] = {"deadline_exceeded", 504},
    [ENVD_NOT_FOUND] = {"not_found", 404},
    [ENVD_ALREADY_EXISTS] = {"already_exists", 409},
    [ENVD_PERMISSION_DENIED] = {"permission_denied", 403},
    [ENVD_RESOURCE_EXHAUSTED] = {"resource_exhausted", 429},
    [ENVD_FAILED_PRECONDITION] = {"failed_precondition", 400},
    [ENVD_UNIMPLEMENTED] = {"unimplemented", 501},
    [ENVD_INTERNAL] = {"internal", 500},
    [ENVD_UNAVAILABLE] = {"unavailable", 503},
    [ENVD_UNAUTHENTICATED] = {"unauthenticated", 401},
};

const char *
envd_code_name(envd_code_t c)
{
    return codes[c].name;
}

int
envd_code_status(envd_code_t c)
{
    return codes[c].status;
}

envd_code_t
envd_code_of(int e)
{
    switch (e) {
    case ENOENT:
    case ERR_NOT_FOUND: return ENVD_NOT_FOUND;
    case EEXIST: return ENVD_ALREADY_EXISTS;
    case EACCES:
    case EPERM:
    case ERR_ESCAPE:
    case ERR_FORBIDDEN: return ENVD_PERMISSION_DENIED;
    case EINVAL:
    case ENOTDIR:
    case EISDIR:
    case ERR_BAD_REQ:
    case ERR_PROTO: return ENVD_INVALID_ARGUMENT;
    case ERR_TOO_BIG:
    case ERR_AT_CAPACITY:
    case ENOSPC: return ENVD_RESOURCE_EXHAUSTED;
    case ERR_BUSY:
    case ERR_UNAVAILABLE:
    case ERR_SESSION_ENDED: return ENVD_UNAVAILABLE;
    case ERR_TIMEOUT: return ENVD_DEADLINE_EXCEEDED;
    case ERR_AUTH:
    case ERR_AUTH_EXPIRED: return ENVD_UNAUTHENTICATED;
    case ERR_NOT_IMPLEMENTED: return ENVD_UNIMPLEMENTED;
    default: return ENVD_INTERNAL;
    }
}

envd_code_t
envd_code_of_name(const char *name)
{
    /* err_name's words back to a code: errno values, then the project's */
    for (int e = 1; e < ERR_LAST; e++)
        if ((e < 134 || e > ERR_BASE) && !strcmp(err_name(e), name))
            return envd_code_of(e);
    return ENVD_INTERNAL;
}

/* Whether h's Content-Type is want (parameters such as "; charset=utf-8" aside). */
static bool
ctype_is(const http_req_t *h, const char *want)
{
    size_t n = strlen(want);
    return !strncasecmp(h->content_type, want, n) &&
           (h->content_type[n] == '\0' || h->content_type[n] == ';');
}

json_object *
envd_request(http_req_t *h, bool stream)
{
    const char *want = stream ? "application/connect+json" : "application/json";
    if (h->body_too_big) {
        envd_fail(h, ENVD_RESOURCE_EXHAUSTED, "request body over %u bytes", HTTP_BODY_MAX);
        return NULL;
    }
    if (!ctype_is(h, want)) {
        /* Connect's answer to a codec it does not speak is 415; the SDK sends JSON only */
        json_object *o = json_object_new_object();
        json_set_str(o, "code", "unimplemented");
        char m[400];
        snprintf(m, sizeof m, "content type %.200s: this server speaks %s (Connect's JSON codec)",
                 h->content_type[0] ? h->content_type : "(none)", want);
        json_set_str(o, "message", m);
        http_answer_json(h, 415, o);
        return NULL;
    }
    const uint8_t *msg = (const uint8_t *)(h->body ? h->body : "");
    size_t len = h->body_len;
    char why[160];
    if (stream) {
        uint8_t flags;
        if (envd_envelope_parse(msg, len, &flags, &msg, &len, why, sizeof why) < 0) {
            envd_stream_fail(h, ENVD_INVALID_ARGUMENT, "%s", why);
            return NULL;
        }
    }
    err_t err = {0};
    json_object *o = len ? json_parse((const char *)msg, len, &err) : json_object_new_object();
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        if (stream)
            envd_stream_fail(h, ENVD_INVALID_ARGUMENT, "the request message is not a JSON object");
        else
            envd_fail(h, ENVD_INVALID_ARGUMENT, "the request message is not a JSON object");
        return NULL;
    }
    return o;
}

static void
refuse(http_req_t *h, bool stream, envd_code_t c, const char *msg)
{
    if (stream)
        envd_stream_fail(h, c, "%s", msg);
    else
        envd_fail(h, c, "%s", msg);
}

gw_session_t *
envd_session(http_req_t *h, const char *sid, bool stream)
{
    char m[300];
    if (!envd_token_matches(g_gw.secret, g_gw.secret_len, sid, h->access_token)) {
        refuse(h, stream, ENVD_UNAUTHENTICATED,
               h->access_token[0] ? "X-Access-Token is not this sandbox's envdAccessToken"
                                  : "X-Access-Token is missing: send the sandbox's envdAccessToken "
                                    "(create and connect answer it)");
        return NULL;
    }
    gw_session_t *s = envd_running(sid, true, m, sizeof m);
    if (!s && !envd_wait_woken(h, sid))
        refuse(h, stream, ENVD_UNAVAILABLE, m);
    return s;
}

/* Runs h's route again (its session's auto-resume is through): served now, or answered why
 * not. A request whose client went away meanwhile is gone. */
static void
redispatch(uint64_t id)
{
    http_req_t *h = http_find(id);
    if (h && !h->answered)
        http_dispatch(h);
}

bool
envd_wait_woken(http_req_t *h, const char *sid)
{
    return session_when_woken(session_find(sid), redispatch, h->id) == 0;
}

gw_session_t *
envd_running(const char *sid, bool wake, char *why, size_t cap)
{
    gw_session_t *s = session_find(sid);
    /* E2B's autoResume: a call holding the sandbox's token resumes it */
    session_status_t st = wake ? session_wake(s) : s ? session_status(s) : SESSION_STOPPED;
    if (st == SESSION_READY)
        return s;
    if (st == SESSION_PAUSED)
        snprintf(why, cap, "sandbox %.100s is paused: connect to it (resume) first", sid);
    else if (st == SESSION_STOPPED)
        snprintf(why, cap, "sandbox %.100s is not running", sid);
    else
        snprintf(why, cap, "sandbox %.100s is not ready (%s)", sid, session_status_text(st));
    return NULL;
}

int
envd_user(const http_req_t *h, char *out, size_t cap)
{
    return envd_basic_user(h->authorization, out, cap);
}

uint64_t
envd_deadline_ms(const http_req_t *h)
{
    const char *t = h->connect_timeout;
    if (!t[0] || strspn(t, "0123456789") != strlen(t) || strlen(t) > 10)
        return 0;
    return strtoull(t, NULL, 10);
}

unsigned
envd_keepalive_s(const http_req_t *h)
{
    unsigned long v = strtoul(h->keepalive, NULL, 10);
    return v >= 1 && v < ENVD_KEEPALIVE ? (unsigned)v : ENVD_KEEPALIVE;
}

void
envd_answer(http_req_t *h, json_object *msg)
{
    size_t len;
    const char *t = json_text(msg, &len);
    http_answer(h, 200, "application/json", t, len);
    json_object_put(msg);
}

static void
vfail(http_req_t *h, envd_code_t c, const char *fmt, va_list ap)
{
    char m[ENVD_TEXT_MAX];
    vsnprintf(m, sizeof m, fmt, ap);
    json_object *o = json_object_new_object();
    json_set_str(o, "code", envd_code_name(c));
    json_set_str(o, "message", m);
    http_answer_json(h, envd_code_status(c), o);
}

void
envd_fail(http_req_t *h, envd_code_t c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(h, c, fmt, ap);
    va_end(ap);
}

void
envd_fail_result(http_req_t *h, json_object *result)
{
    json_object *e = json_get(result, "error");
    envd_fail(h, envd_code_of_name(json_get_str(e, "code", "internal")), "%s",
              json_get_str(e, "message", "the sandbox's executor failed"));
}

void
envd_http_fail(http_req_t *h, int status, const char *fmt, ...)
{
    char m[ENVD_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    json_object *o = json_object_new_object();
    json_set_int(o, "code", status);
    json_set_str(o, "message", m);
    http_answer_json(h, status, o);
}

void
envd_stream_head(http_req_t *h)
{
    http_stream_head(h, 200, "application/connect+json", HTTP_STREAM_CHUNKED, NULL);
}

static void
send_text(http_req_t *h, uint8_t flags, const char *t, size_t len)
{
    uint8_t head[ENVD_HEAD_LEN] = {flags, (uint8_t)(len >> 24), (uint8_t)(len >> 16),
                                   (uint8_t)(len >> 8), (uint8_t)len};
    http_stream_write(h, head, sizeof head);
    http_stream_write(h, t, len);
}

static void
send_envelope(http_req_t *h, uint8_t flags, json_object *msg)
{
    size_t len;
    const char *t = json_text(msg, &len);
    send_text(h, flags, t, len);
    json_object_put(msg);
}

void
envd_stream_send_text(http_req_t *h, const char *msg, size_t len)
{
    send_text(h, 0, msg, len);
}

void
envd_stream_send(http_req_t *h, json_object *msg)
{
    send_envelope(h, 0, msg);
}

void
envd_stream_end(http_req_t *h, const envd_code_t *code, const char *msg)
{
    json_object *o = json_object_new_object();
    if (code) {
        json_object *e = json_object_new_object();
        json_set_str(e, "code", envd_code_name(*code));
        json_set_str(e, "message", msg ? msg : "");
        json_set(o, "error", e);
    }
    send_envelope(h, ENVD_FLAG_END, o);
    http_stream_end(h);
}

void
envd_stream_fail(http_req_t *h, envd_code_t c, const char *fmt, ...)
{
    char m[ENVD_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    envd_stream_head(h);
    envd_stream_end(h, &c, m);
}

/* ---- GET /health ---- */

void
envd_health(http_req_t *h, const char *sid)
{
    /* no token: it tells only whether a sandbox of this id runs, as E2B's proxy does */
    char why[200];
    if (envd_running(sid, false, why, sizeof why)) /* asking is no use of it */
        http_answer(h, 204, "text/plain", "", 0);
    else
        envd_http_fail(h, 502, "%s", why); /* the SDK's isRunning() reads 502 as false */
}
