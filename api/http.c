/* http.c — request parsing and replies for sandpipe-api. See http.h. */
#include "http.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "hex.h"
#include "json_util.h"
#include "pct_decode.h"
#include "xalloc.h"

const char *
api_param(const api_req_t *r, const char *cgi_name)
{
    return FCGX_GetParam(cgi_name, r->fcgi->envp);
}

void
api_req_read(api_req_t *r, FCGX_Request *fcgi)
{
    memset(r, 0, sizeof *r);
    r->fcgi = fcgi;
    r->content_len = -1;
    r->method = api_param(r, "REQUEST_METHOD");
    if (!r->method)
        r->method = "GET";
    const char *uri = api_param(r, "REQUEST_URI");
    if (!uri || !*uri)
        uri = api_param(r, "DOCUMENT_URI");
    if (!uri)
        uri = "/";
    const char *q = strchr(uri, '?');
    r->path = xstrndup(uri, q ? (size_t)(q - uri) : strlen(uri));
    r->query = q ? q + 1 : "";

    const char *cl = api_param(r, "CONTENT_LENGTH");
    if (!cl || !*cl)
        return;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(cl, &end, 10);
    if (errno || *end || cl[0] == '-' || n > (unsigned long long)INT64_MAX) {
        r->body_too_big = true; /* unreadable length: treat as unacceptable */
        r->body_end = true;
        return;
    }
    r->content_len = (long long)n;
    r->body_end = n == 0;
}

long
api_body_read(api_req_t *r, char *buf, size_t cap)
{
    if (r->body_broken)
        return -1;
    if (r->body_end || cap == 0)
        return 0;
    if (r->content_len >= 0 && (unsigned long long)r->content_len - r->body_taken < cap)
        cap = (size_t)((unsigned long long)r->content_len - r->body_taken);
    if (cap > INT32_MAX)
        cap = INT32_MAX;
    /* FCGX_GetStr returns less than asked only at the end of stdin or on an error. */
    int k = FCGX_GetStr(buf, (int)cap, r->fcgi->in);
    if (k < 0)
        k = 0;
    r->body_taken += (unsigned long long)k;
    if ((size_t)k < cap) {
        /* A clean end is nginx's empty stdin record; a closed socket is an error. */
        if (FCGX_GetError(r->fcgi->in) ||
            (r->content_len >= 0 && r->body_taken < (unsigned long long)r->content_len)) {
            r->body_broken = true;
            return k ? k : -1;
        }
        r->body_end = true;
    } else if (r->content_len >= 0 && r->body_taken == (unsigned long long)r->content_len) {
        r->body_end = true;
    }
    return k;
}

int
api_req_body(api_req_t *r, size_t max)
{
    if (r->body_too_big)
        return -1;
    if (r->content_len > (long long)max) {
        r->body_too_big = true;
        return -1;
    }
    size_t cap = r->content_len >= 0 ? (size_t)r->content_len : 4096;
    r->body = xrealloc(r->body, cap + 1);
    for (;;) {
        if (r->body_len == cap) {
            if (r->body_end || r->content_len >= 0)
                break;
            if (cap >= max + 1) { /* one byte past the limit read: too big */
                r->body_too_big = true;
                return -1;
            }
            cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            r->body = xrealloc(r->body, cap + 1);
        }
        long k = api_body_read(r, r->body + r->body_len, cap - r->body_len);
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        r->body_len += (size_t)k;
    }
    if (r->body_len > max) {
        r->body_too_big = true;
        return -1;
    }
    r->body[r->body_len] = '\0';
    return 0;
}

void
api_req_free(api_req_t *r)
{
    free(r->path);
    free(r->body);
    r->path = r->body = NULL;
}

int
api_query(const api_req_t *r, const char *name, char *out, size_t cap)
{
    size_t nlen = strlen(name);
    const char *p = r->query;
    while (p && *p) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len > nlen && !strncmp(p, name, nlen) && p[nlen] == '=') {
            int k = pct_decode(p + nlen + 1, len - nlen - 1, out, cap);
            return k < 0 ? -2 : k;
        }
        if (len == nlen && !strncmp(p, name, nlen)) {
            if (cap)
                out[0] = '\0';
            return 0;
        }
        p = amp ? amp + 1 : NULL;
    }
    return -1;
}

long long
api_query_int(api_req_t *r, const char *name, long long def, long long lo, long long hi, bool *ok)
{
    char v[32];
    *ok = true;
    int k = api_query(r, name, v, sizeof v);
    if (k == -1)
        return def;
    char *end = NULL;
    errno = 0;
    long long n = k > 0 ? strtoll(v, &end, 10) : 0;
    if (k <= 0 || errno || *end || n < lo || n > hi) {
        *ok = false;
        api_failf(r, ERR_BAD_REQ, "query parameter %s must be an integer in [%lld, %lld]", name, lo,
                  hi);
        return -1;
    }
    return n;
}

bool
api_query_bool(const api_req_t *r, const char *name, bool def)
{
    char v[16];
    int k = api_query(r, name, v, sizeof v);
    if (k < 0)
        return def;
    if (k == 0 || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"))
        return true;
    if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no"))
        return false;
    return def;
}

json_object *
api_body_object(api_req_t *r)
{
    if (r->body_too_big || r->body_len > API_JSON_BODY_MAX) {
        api_failf(r, ERR_TOO_BIG, "request body over %u bytes", (unsigned)API_JSON_BODY_MAX);
        return NULL;
    }
    if (!r->body || r->body_len == 0) {
        api_failf(r, ERR_BAD_REQ, "a JSON object body is required");
        return NULL;
    }
    err_t err = {0};
    json_object *o = json_parse(r->body, r->body_len, &err);
    if (!o) {
        api_failf(r, ERR_BAD_REQ, "%s%s",
                  err.code == EILSEQ ? "the body is " : "malformed JSON: ", err.msg);
        return NULL;
    }
    if (!json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        api_failf(r, ERR_BAD_REQ, "the body must be a JSON object");
        return NULL;
    }
    return o;
}

const char *
api_status_text(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Unknown";
    }
}

void
api_reply_raw_with(api_req_t *r, int status, const char *content_type, const char *headers,
                   const char *body, size_t len)
{
    if (r->status)
        return;
    r->status = status;
    /* libfcgi's own printf knows no %zu: format the head here. */
    char head[512];
    int n = snprintf(head, sizeof head,
                     "Status: %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\n%s\r\n",
                     status, api_status_text(status), content_type, len, headers ? headers : "");
    if (n < 0 || (size_t)n >= sizeof head) { /* headers too long: the caller's fault */
        n = snprintf(head, sizeof head, "Status: 500 %s\r\nContent-Length: 0\r\n\r\n",
                     api_status_text(500));
        len = 0;
    }
    FCGX_PutStr(head, n, r->fcgi->out);
    if (len)
        FCGX_PutStr(body, (int)len, r->fcgi->out);
}

void
api_reply_raw(api_req_t *r, int status, const char *content_type, const char *body, size_t len)
{
    api_reply_raw_with(r, status, content_type, NULL, body, len);
}

void
api_reply_json_with(api_req_t *r, int status, const char *headers, json_object *body)
{
    size_t len = 0;
    char *fixed; /* a text from Redis or a gateway that was not UTF-8 */
    const char *t = json_valid_text(json_text(body, &len), &len, &fixed);
    api_reply_raw_with(r, status, "application/json", headers, t, len);
    free(fixed);
    json_object_put(body);
}

void
api_reply_json(api_req_t *r, int status, json_object *body)
{
    api_reply_json_with(r, status, NULL, body);
}
