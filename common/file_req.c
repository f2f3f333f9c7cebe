/* file_req.c — the files routes' ops from their queries and bodies (file_req.h). The texts are
 * the REST API's (docs/api.md), which clients and tests match. */
#include "file_req.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base64.h"
#include "json_util.h"
#include "xalloc.h"

static json_object *
new_op(const char *name)
{
    json_object *op = json_object_new_object();
    json_set_str(op, "op", name);
    return op;
}

/* ?path=, def when absent (NULL: required); NULL with err when missing or empty. */
static const char *
query_path(const file_req_query_t *q, const char *def, err_t *err)
{
    const char *v = q->get(q->src, "path");
    if (!v && def)
        return def;
    if (!v || !*v || strlen(v) >= FILE_REQ_PATH_MAX) {
        err_set(err, ERR_BAD_REQ, "query parameter path is required (URL-encoded)");
        return NULL;
    }
    return v;
}

bool
file_req_bool(const file_req_query_t *q, const char *name, bool def)
{
    const char *v = q->get(q->src, name);
    if (!v)
        return def;
    if (!*v || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"))
        return true;
    if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no"))
        return false;
    return def;
}

int
file_req_int(const file_req_query_t *q, const char *name, long long def, long long lo, long long hi,
             long long *out, err_t *err)
{
    const char *v = q->get(q->src, name);
    *out = def;
    if (!v)
        return 0;
    char *end = NULL;
    errno = 0;
    long long n = *v ? strtoll(v, &end, 10) : 0;
    if (!*v || errno || *end || n < lo || n > hi)
        return err_set(err, ERR_BAD_REQ, "query parameter %s must be an integer in [%lld, %lld]",
                       name, lo, hi);
    *out = n;
    return 0;
}

json_object *
file_req_list(const file_req_query_t *q, err_t *err)
{
    const char *path = query_path(q, ".", err);
    if (!path)
        return NULL;
    json_object *op = new_op("file.list");
    json_set_name(op, "path", path);
    json_set_bool(op, "hidden", file_req_bool(q, "hidden", true));
    return op;
}

json_object *
file_req_stat(const file_req_query_t *q, err_t *err)
{
    const char *path = query_path(q, NULL, err);
    if (!path)
        return NULL;
    json_object *op = new_op("file.stat");
    json_set_name(op, "path", path);
    return op;
}

json_object *
file_req_read(const file_req_query_t *q, err_t *err)
{
    const char *path = query_path(q, NULL, err);
    long long start, end, max;
    if (!path || file_req_int(q, "start_line", 1, 1, INT32_MAX, &start, err) < 0 ||
        file_req_int(q, "end_line", -1, -1, INT32_MAX, &end, err) < 0 ||
        file_req_int(q, "max_bytes", FILE_REQ_READ_MAX, 1, FILE_REQ_READ_MAX, &max, err) < 0)
        return NULL;
    json_object *op = new_op("file.read");
    json_set_name(op, "path", path);
    json_set_int(op, "start_line", start);
    json_set_int(op, "end_line", end);
    json_set_int(op, "max_bytes", max);
    return op;
}

json_object *
file_req_remove(const file_req_query_t *q, err_t *err)
{
    const char *path = query_path(q, NULL, err);
    if (!path)
        return NULL;
    json_object *op = new_op("file.remove");
    json_set_name(op, "path", path);
    json_set_bool(op, "recursive", file_req_bool(q, "recursive", false));
    return op;
}

json_object *
file_req_download(const file_req_query_t *q, err_t *err)
{
    const char *path = query_path(q, NULL, err);
    long long offset, length;
    if (!path || file_req_int(q, "offset", 0, 0, INT64_MAX, &offset, err) < 0 ||
        file_req_int(q, "length", -1, -1, INT64_MAX, &length, err) < 0)
        return NULL;
    json_object *op = new_op("file.download");
    json_set_name(op, "path", path);
    json_set_int(op, "offset", offset);
    json_set_int(op, "length", length);
    return op;
}

/* A body field naming a path: name, or name_b64 for a name's exact bytes (json_get_name), of
 * 1..FILE_REQ_PATH_MAX-1 bytes, into out. 0, or -1 with err. */
static int
body_path(json_object *body, const char *name, char out[FILE_REQ_PATH_MAX], err_t *err)
{
    err_t why = {0};
    int n = json_get_name(body, name, out, FILE_REQ_PATH_MAX, &why);
    if (n > 0)
        return 0;
    char b64[64];
    snprintf(b64, sizeof b64, "%s_b64", name);
    if (n < 0 && n != -ERR_NOT_FOUND && json_get(body, b64)) /* its own words about the bytes */
        err_set(err, ERR_BAD_REQ, "%s", why.msg);
    else
        err_set(err, ERR_BAD_REQ, "%s must be a path (a non-empty string)", name);
    return -1;
}

json_object *
file_req_write(json_object *body, err_t *err)
{
    json_object *c = json_get(body, "content");
    char path[FILE_REQ_PATH_MAX];
    if (!c || !json_object_is_type(c, json_type_string)) {
        err_set(err, ERR_BAD_REQ, "path and content must be strings");
        return NULL;
    }
    if (body_path(body, "path", path, err) < 0)
        return NULL;
    if (json_object_get_string_len(c) > (int)(FILE_REQ_WRITE_MAX * 4 / 3 + 4)) {
        err_set(err, ERR_TOO_BIG, "content over %u bytes: use PUT (streamed)",
                (unsigned)FILE_REQ_WRITE_MAX);
        return NULL;
    }
    /* the body's fields as they are ("encoding", "mode", "append"): file.write reads them */
    json_object *op = json_object_new_object();
    json_object_object_foreach(body, k, v) json_set(op, k, json_object_get(v));
    json_object_object_del(op, "path_b64");
    json_set_name(op, "path", path);
    json_set_str(op, "op", "file.write");
    return op;
}

/* A body boolean (def when absent), or -1 with err. */
static int
body_bool(json_object *body, const char *name, bool def, err_t *err)
{
    json_object *v = json_get(body, name);
    if (!v)
        return def;
    if (!json_object_is_type(v, json_type_boolean)) {
        err_set(err, ERR_BAD_REQ, "%s must be a boolean", name);
        return -1;
    }
    return json_object_get_boolean(v);
}

json_object *
file_req_mkdir(json_object *body, err_t *err)
{
    char path[FILE_REQ_PATH_MAX];
    int parents =
        body_path(body, "path", path, err) == 0 ? body_bool(body, "parents", true, err) : -1;
    if (parents < 0)
        return NULL;
    json_object *mode = json_get(body, "mode");
    if (mode && !json_object_is_type(mode, json_type_string)) {
        err_set(err, ERR_BAD_REQ, "mode must be an octal string (\"0755\")");
        return NULL;
    }
    json_object *op = new_op("file.mkdir");
    json_set_name(op, "path", path);
    json_set_bool(op, "parents", parents);
    if (mode)
        json_set(op, "mode", json_object_get(mode));
    return op;
}

json_object *
file_req_move(json_object *body, err_t *err)
{
    char from[FILE_REQ_PATH_MAX], to[FILE_REQ_PATH_MAX];
    int overwrite = body_path(body, "from", from, err) == 0 && body_path(body, "to", to, err) == 0
                        ? body_bool(body, "overwrite", false, err)
                        : -1;
    if (overwrite < 0)
        return NULL;
    json_object *op = new_op("file.move");
    json_set_name(op, "from", from);
    json_set_name(op, "to", to);
    json_set_bool(op, "overwrite", overwrite);
    return op;
}

json_object *
file_req_upload(const file_req_query_t *q, unsigned long long upload_max, bool *append, err_t *err)
{
    const char *path = query_path(q, NULL, err);
    if (!path)
        return NULL;
    const char *mode = q->get(q->src, "mode");
    if (mode && strlen(mode) >= 8) { /* the API's 8-byte field */
        err_set(err, ERR_BAD_REQ, "malformed mode");
        return NULL;
    }
    *append = file_req_bool(q, "append", false);
    json_object *op;
    if (*append) {
        op = new_op("file.write");
        json_set_name(op, "path", path);
        json_set_str(op, "encoding", "base64");
        json_set_bool(op, "append", true);
    } else {
        long long max;
        if (file_req_int(q, "max_bytes", (long long)upload_max, 0, (long long)upload_max, &max,
                         err) < 0)
            return NULL;
        op = new_op("file.upload");
        json_set_name(op, "path", path);
        json_set_bool(op, "parents", file_req_bool(q, "parents", true));
        json_set_int(op, "max_bytes", max);
    }
    if (mode && *mode)
        json_set_str(op, "mode", mode);
    return op;
}

json_object *
file_req_append(json_object *fields, const void *body, size_t len)
{
    char *b64 = xmalloc(BASE64_ENCODED_LEN(len) + 1);
    b64[base64_encode(body, len, b64)] = '\0';
    json_set_str(fields, "content", b64);
    free(b64);
    return fields;
}

void
file_req_disposition(char *out, size_t cap, const char *path)
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
