/* files.c — /api/v1/sessions/{id}/files: list, stat, read (text, line ranges), small
 * writes (binary safe: base64 in a file.write op, at most API_UPLOAD_MAX bytes), mkdir, move
 * (rename) and delete through the owning gateway's inbox, and streamed upload (PUT
 * .../files/content, any size up to
 * --max-upload) and download (GET .../files/download) of binary files through api_xfer. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "auth.h"
#include "gateway_client.h"
#include "redis.h"
#include "session_record.h"
#include "xfer.h"
#include "json_util.h"
#include "xalloc.h"

#define PATH_MAX_LEN 4096

/* The gateway of session sid, when r may use it (write: change files) and it can take work.
 * Returns 0, or -1 after replying (404, 403, 409, 503). */
static int
session_gateway(api_req_t *r, const char *sid, bool write, char *gw, size_t cap)
{
    api_err_t e;
    json_object *s = write ? api_session_for_write(r, sid, &e) : api_session_load(r, sid, &e);
    int rc = s ? api_session_live(r, s, gw, cap, &e) : -1;
    json_object_put(s);
    if (rc < 0)
        api_fail(r, &e);
    return rc < 0 ? -1 : 0;
}

/* Runs file op req (borrowed; "session" added) on session sid for r and replies the result.
 * write: the op changes files (viewers refused). */
static void
run_op(api_req_t *r, const char *sid, json_object *req, bool write)
{
    char gw[128];
    if (session_gateway(r, sid, write, gw, sizeof gw) < 0)
        return;
    json_set_str(req, "session", sid);
    api_gw_relay(r, gw, req);
}

/* The required ?path= into out; replies 400 and returns -1 when missing or malformed. */
static int
path_param(api_req_t *r, char *out, size_t cap, const char *def)
{
    int k = api_query(r, "path", out, cap);
    if (k == -1 && def) {
        snprintf(out, cap, "%s", def);
        return 0;
    }
    if (k <= 0) {
        api_failf(r, ERR_BAD_REQ, "query parameter path is required (URL-encoded)");
        return -1;
    }
    return 0;
}

void
api_files_list(api_req_t *r, char **params)
{
    char path[PATH_MAX_LEN];
    if (path_param(r, path, sizeof path, ".") < 0)
        return;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "file.list");
    json_set_str(req, "path", path);
    json_set_bool(req, "hidden", api_query_bool(r, "hidden", true));
    run_op(r, params[0], req, false);
    json_object_put(req);
}

void
api_files_stat(api_req_t *r, char **params)
{
    char path[PATH_MAX_LEN];
    if (path_param(r, path, sizeof path, NULL) < 0)
        return;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "file.stat");
    json_set_str(req, "path", path);
    run_op(r, params[0], req, false);
    json_object_put(req);
}

void
api_files_read(api_req_t *r, char **params)
{
    char path[PATH_MAX_LEN];
    if (path_param(r, path, sizeof path, NULL) < 0)
        return;
    bool ok;
    long long start = api_query_int(r, "start_line", 1, 1, INT32_MAX, &ok);
    if (!ok)
        return;
    long long end = api_query_int(r, "end_line", -1, -1, INT32_MAX, &ok);
    if (!ok)
        return;
    long long max = api_query_int(r, "max_bytes", 512 * 1024, 1, 512 * 1024, &ok);
    if (!ok)
        return;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "file.read");
    json_set_str(req, "path", path);
    json_set_int(req, "start_line", start);
    json_set_int(req, "end_line", end);
    json_set_int(req, "max_bytes", max);
    run_op(r, params[0], req, false);
    json_object_put(req);
}

/* A file.write of the body's bytes (base64), for PUT ...?append=true. */
static void
write_small(api_req_t *r, const char *sid, const char *path, const char *mode)
{
    if (api_req_body(r, API_UPLOAD_MAX) < 0) {
        if (r->body_broken)
            api_failf(r, ERR_BAD_REQ, "the request body was cut short");
        else
            api_failf(r, ERR_TOO_BIG, "append bodies are limited to %u bytes",
                      (unsigned)API_UPLOAD_MAX);
        return;
    }
    size_t cap = 4 * ((r->body_len + 2) / 3) + 1;
    char *b64 = xmalloc(cap);
    EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)(r->body ? r->body : ""),
                    (int)r->body_len);
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "file.write");
    json_set_str(req, "path", path);
    json_set_str(req, "content", b64);
    json_set_str(req, "encoding", "base64");
    json_set_bool(req, "append", true);
    if (*mode)
        json_set_str(req, "mode", mode);
    free(b64);
    run_op(r, sid, req, true);
    json_object_put(req);
}

/* POST: a JSON body {"path","content","encoding","mode","append"} passed to file.write as it
 * is (content at most API_UPLOAD_MAX bytes). */
void
api_files_write(api_req_t *r, char **params)
{
    json_object *req = api_body_object(r);
    if (!req)
        return;
    json_object *p = json_get(req, "path"), *c = json_get(req, "content");
    if (!p || !json_object_is_type(p, json_type_string) || !c ||
        !json_object_is_type(c, json_type_string)) {
        json_object_put(req);
        api_failf(r, ERR_BAD_REQ, "path and content must be strings");
        return;
    }
    if (json_object_get_string_len(c) > (int)(API_UPLOAD_MAX * 4 / 3 + 4)) {
        json_object_put(req);
        api_failf(r, ERR_TOO_BIG, "content over %u bytes: use PUT (streamed)",
                  (unsigned)API_UPLOAD_MAX);
        return;
    }
    json_set_str(req, "op", "file.write");
    run_op(r, params[0], req, true);
    json_object_put(req);
}

/* A JSON body's field name as a string of 1..PATH_MAX_LEN bytes, or NULL after replying 400. */
static const char *
body_path(api_req_t *r, json_object *body, const char *name)
{
    json_object *v = json_get(body, name);
    int n = v && json_object_is_type(v, json_type_string) ? json_object_get_string_len(v) : 0;
    if (n <= 0 || n >= PATH_MAX_LEN) {
        api_failf(r, ERR_BAD_REQ, "%s must be a path (a non-empty string)", name);
        return NULL;
    }
    return json_object_get_string(v);
}

/* A JSON body's boolean field (def when absent), or -1 after replying 400. */
static int
body_bool(api_req_t *r, json_object *body, const char *name, bool def)
{
    json_object *v = json_get(body, name);
    if (!v)
        return def;
    if (!json_object_is_type(v, json_type_boolean)) {
        api_failf(r, ERR_BAD_REQ, "%s must be a boolean", name);
        return -1;
    }
    return json_object_get_boolean(v);
}

/* POST .../files/mkdir {"path","parents":true,"mode":"0755"}: file.mkdir. */
void
api_files_mkdir(api_req_t *r, char **params)
{
    json_object *body = api_body_object(r);
    if (!body)
        return;
    const char *path = body_path(r, body, "path");
    int parents = path ? body_bool(r, body, "parents", true) : -1;
    json_object *mode = json_get(body, "mode");
    if (parents >= 0 && mode && !json_object_is_type(mode, json_type_string)) {
        api_failf(r, ERR_BAD_REQ, "mode must be an octal string (\"0755\")");
        parents = -1;
    }
    if (parents >= 0) {
        json_object *req = json_object_new_object();
        json_set_str(req, "op", "file.mkdir");
        json_set_str(req, "path", path);
        json_set_bool(req, "parents", parents);
        if (mode)
            json_set(req, "mode", json_object_get(mode));
        run_op(r, params[0], req, true);
        json_object_put(req);
    }
    json_object_put(body);
}

/* POST .../files/move {"from","to","overwrite":false}: file.move (rename(2) semantics). */
void
api_files_move(api_req_t *r, char **params)
{
    json_object *body = api_body_object(r);
    if (!body)
        return;
    const char *from = body_path(r, body, "from");
    const char *to = from ? body_path(r, body, "to") : NULL;
    int overwrite = to ? body_bool(r, body, "overwrite", false) : -1;
    if (overwrite >= 0) {
        json_object *req = json_object_new_object();
        json_set_str(req, "op", "file.move");
        json_set_str(req, "from", from);
        json_set_str(req, "to", to);
        json_set_bool(req, "overwrite", overwrite);
        run_op(r, params[0], req, true);
        json_object_put(req);
    }
    json_object_put(body);
}

/* DELETE .../files?path=&recursive=false: file.remove (a symlink is removed, not followed). */
void
api_files_remove(api_req_t *r, char **params)
{
    char path[PATH_MAX_LEN];
    if (path_param(r, path, sizeof path, NULL) < 0)
        return;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "file.remove");
    json_set_str(req, "path", path);
    json_set_bool(req, "recursive", api_query_bool(r, "recursive", false));
    run_op(r, params[0], req, true);
    json_object_put(req);
}

/* The request body as an upload's source, refusing bytes past the limit. */
typedef struct {
    api_req_t *r;
    unsigned long long max, total;
    bool too_large;
} body_source_t;

static ssize_t
body_source_read(void *ud, char *buf, size_t cap)
{
    body_source_t *b = ud;
    long k = api_body_read(b->r, buf, cap);
    if (k > 0 && (b->total += (unsigned long long)k) > b->max) {
        b->too_large = true;
        return -1;
    }
    return k;
}

/* PUT: the body is the file's bytes, streamed; ?path=&mode=&parents=&max_bytes=, or
 * ?append=true for a small write appended through file.write. */
void
api_files_put(api_req_t *r, char **params)
{
    char path[PATH_MAX_LEN], mode[8] = "";
    if (path_param(r, path, sizeof path, NULL) < 0)
        return;
    if (api_query(r, "mode", mode, sizeof mode) == -2) {
        api_failf(r, ERR_BAD_REQ, "malformed mode");
        return;
    }
    if (api_query_bool(r, "append", false)) {
        write_small(r, params[0], path, mode);
        return;
    }
    bool ok;
    long long max = api_query_int(r, "max_bytes", (long long)g_api.upload_max, 0,
                                  (long long)g_api.upload_max, &ok);
    if (!ok)
        return;
    if (r->content_len > max) {
        api_failf(r, ERR_TOO_BIG, "the file is over %lld bytes", max);
        return;
    }
    char gw[128];
    if (session_gateway(r, params[0], true, gw, sizeof gw) < 0)
        return;
    json_object *op = json_object_new_object();
    json_set_str(op, "path", path);
    if (*mode)
        json_set_str(op, "mode", mode);
    json_set_bool(op, "parents", api_query_bool(r, "parents", true));
    json_set_int(op, "max_bytes", max);
    body_source_t src = {.r = r, .max = (unsigned long long)max};
    api_xfer_source_t from = {body_source_read, &src};
    api_err_t e;
    json_object *res = api_xfer_upload(r, gw, params[0], op, &from, &e);
    json_object_put(op);
    if (res)
        api_reply_json(r, 200, res);
    else if (src.too_large)
        api_failf(r, ERR_TOO_BIG, "the file is over %lld bytes", max);
    else if (r->body_broken)
        api_failf(r, ERR_BAD_REQ, "the request body was cut short");
    else
        api_fail(r, &e);
}

/* A download's sink: the FastCGI response, headers sent when the size is known. */
typedef struct {
    api_req_t *r;
    const char *path;
} download_sink_t;

/* filename="..." keeps printable ASCII but quotes and backslashes; filename* has the exact
 * name (RFC 6266/5987) for clients that read it. */
static void
disposition(char *out, size_t cap, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base && base[1] ? base + 1 : path;
    char plain[256], exact[768];
    size_t p = 0, e = 0;
    for (const unsigned char *c = (const unsigned char *)base; *c && p + 1 < sizeof plain; c++)
        plain[p++] = *c >= 0x20 && *c < 0x7f && *c != '"' && *c != '\\' ? (char)*c : '_';
    plain[p] = '\0';
    for (const unsigned char *c = (const unsigned char *)base; *c && e + 4 < sizeof exact; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("!#$&+-.^_`|~", *c))
            exact[e++] = (char)*c;
        else
            e += (size_t)snprintf(exact + e, 4, "%%%02X", *c);
    }
    exact[e] = '\0';
    snprintf(out, cap, "attachment; filename=\"%s\"; filename*=UTF-8''%s", plain, exact);
}

static int
download_header(void *ud, json_object *header)
{
    download_sink_t *d = ud;
    long long bytes = json_get_int(header, "bytes", -1);
    if (bytes < 0)
        return -1;
    char disp[1200], head[1400];
    disposition(disp, sizeof disp, d->path);
    int n = snprintf(head, sizeof head,
                     "Status: 200 OK\r\nContent-Type: application/octet-stream\r\n"
                     "Content-Length: %lld\r\nContent-Disposition: %s\r\n"
                     "Cache-Control: no-store\r\n\r\n",
                     bytes, disp);
    d->r->status = 200;
    return FCGX_PutStr(head, n, d->r->fcgi->out) == n ? 0 : -1;
}

static int
download_write(void *ud, const char *p, size_t n)
{
    download_sink_t *d = ud;
    if (FCGX_PutStr(p, (int)n, d->r->fcgi->out) != (int)n)
        return -1;
    return 0;
}

/* GET ?path=&offset=&length=: the raw bytes. Errors before the first byte are JSON; a failure
 * after it cuts the response short (the client sees fewer bytes than Content-Length). */
void
api_files_download(api_req_t *r, char **params)
{
    char path[PATH_MAX_LEN];
    if (path_param(r, path, sizeof path, NULL) < 0)
        return;
    bool ok;
    long long offset = api_query_int(r, "offset", 0, 0, INT64_MAX, &ok);
    if (!ok)
        return;
    long long length = api_query_int(r, "length", -1, -1, INT64_MAX, &ok);
    if (!ok)
        return;
    char gw[128];
    if (session_gateway(r, params[0], false, gw, sizeof gw) < 0)
        return;
    json_object *op = json_object_new_object();
    json_set_str(op, "path", path);
    json_set_int(op, "offset", offset);
    json_set_int(op, "length", length);
    download_sink_t sink = {.r = r, .path = path};
    api_xfer_sink_t to = {download_header, download_write, &sink};
    api_err_t e;
    json_object *res = api_xfer_download(r, gw, params[0], op, &to, &e);
    json_object_put(op);
    if (!res && !r->status)
        api_fail(r, &e);
    json_object_put(res);
}
