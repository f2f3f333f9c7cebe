/* api_files.c — /api/v1/sessions/{id}/files: list, stat, read (text, line ranges) and write
 * (binary safe: the body travels base64-encoded in a file.write op) through the owning
 * gateway's inbox. Streamed upload/download of large or binary reads is not here yet: the
 * gateway inbox has no file.upload/file.download ops (redis/README.md lists them as planned);
 * writes are limited to API_UPLOAD_MAX bytes. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_auth.h"
#include "api_redis.h"
#include "json_util.h"
#include "xalloc.h"

#define PATH_MAX_LEN 4096

/* Runs file op req (borrowed; "session" added) on session sid for r and replies the result.
 * write: the op changes files (viewers refused). */
static void
run_op(api_req_t *r, const char *sid, json_object *req, bool write)
{
    json_object *s = write ? api_session_for_write(r, sid) : NULL;
    if (!write) {
        bool found;
        s = api_session_load(r, sid, &found);
        if (!s && !found)
            api_error(r, 404, "not_found", "no session %.100s", sid);
    }
    char gw[128];
    if (!s || api_session_live(r, s, gw, sizeof gw) < 0) {
        json_object_put(s);
        return;
    }
    json_object_put(s);
    json_set_str(req, "session", sid);
    json_object *res, *err;
    int rc = api_gw_call(r, gw, req, g_api.gw_timeout, &res, &err);
    if (rc == API_GW_OK) {
        api_reply_json(r, 200, res);
    } else {
        api_gw_reply_failure(r, rc, err);
        json_object_put(err);
    }
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
        api_error(r, 400, "bad_request", "query parameter path is required (URL-encoded)");
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

/* PUT: the body is the file's bytes, ?path=&mode=&append=. POST: a JSON body
 * {"path","content","encoding","mode","append"} passed to file.write as it is. */
void
api_files_write(api_req_t *r, char **params)
{
    json_object *req;
    if (!strcmp(r->method, "POST")) {
        req = api_body_object(r);
        if (!req)
            return;
        json_object *p = json_get(req, "path"), *c = json_get(req, "content");
        if (!p || !json_object_is_type(p, json_type_string) || !c ||
            !json_object_is_type(c, json_type_string)) {
            json_object_put(req);
            api_error(r, 400, "bad_request", "path and content must be strings");
            return;
        }
        if (json_object_get_string_len(c) > (int)(API_UPLOAD_MAX * 4 / 3 + 4)) {
            json_object_put(req);
            api_error(r, 413, "too_large", "content over %u bytes: upload in parts with append",
                      (unsigned)API_UPLOAD_MAX);
            return;
        }
    } else {
        char path[PATH_MAX_LEN], mode[8] = "";
        if (path_param(r, path, sizeof path, NULL) < 0)
            return;
        if (r->body_len > API_UPLOAD_MAX) {
            api_error(r, 413, "too_large", "body over %u bytes: upload in parts with append=true",
                      (unsigned)API_UPLOAD_MAX);
            return;
        }
        if (api_query(r, "mode", mode, sizeof mode) == -2) {
            api_error(r, 400, "bad_request", "malformed mode");
            return;
        }
        size_t cap = 4 * ((r->body_len + 2) / 3) + 1;
        char *b64 = xmalloc(cap);
        EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)(r->body ? r->body : ""),
                        (int)r->body_len);
        req = json_object_new_object();
        json_set_str(req, "path", path);
        json_set_str(req, "content", b64);
        json_set_str(req, "encoding", "base64");
        json_set_bool(req, "append", api_query_bool(r, "append", false));
        if (*mode)
            json_set_str(req, "mode", mode);
        free(b64);
    }
    json_set_str(req, "op", "file.write");
    run_op(r, params[0], req, true);
    json_object_put(req);
}
