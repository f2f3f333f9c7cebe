/* file_req.h — the executor op behind each /api/v1/sessions/{id}/files route, built from the
 * request's query and body with the REST API's texts (docs/api.md): what the gateway's HTTP
 * routes (gateway/http_relay.c, gateway/http_upload.c, gateway/http_files.c) check before they
 * run the op. Pure: no I/O, nothing kept. */
#ifndef SP_FILE_REQ_H
#define SP_FILE_REQ_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define FILE_REQ_PATH_MAX  4096          /* a path's bytes, its NUL included */
#define FILE_REQ_WRITE_MAX (512u * 1024) /* file.write content (POST, PUT ?append=true) */
#define FILE_REQ_READ_MAX  (512 * 1024)  /* GET …/files/content's max_bytes */

/* A request's query: get(src, name) is the decoded value of name ("" for a bare name), or NULL
 * when the query has none. */
typedef struct {
    const char *(*get)(const void *src, const char *name);
    const void *src;
} file_req_query_t;

/* Each returns the op (new ref, "op" set) or NULL with err (ERR_BAD_REQ or ERR_TOO_BIG, the API's
 * message). */
json_object *file_req_list(const file_req_query_t *q, err_t *err);     /* GET …/files */
json_object *file_req_stat(const file_req_query_t *q, err_t *err);     /* GET …/files/stat */
json_object *file_req_read(const file_req_query_t *q, err_t *err);     /* GET …/files/content */
json_object *file_req_remove(const file_req_query_t *q, err_t *err);   /* DELETE …/files */
json_object *file_req_download(const file_req_query_t *q, err_t *err); /* GET …/files/download */
/* POST …/files/content, …/files/mkdir, …/files/move: body is the request's JSON object
 * (borrowed). */
json_object *file_req_write(json_object *body, err_t *err);
json_object *file_req_mkdir(json_object *body, err_t *err);
json_object *file_req_move(json_object *body, err_t *err);
/* PUT …/files/content: the file.upload op ({"path","mode"?,"parents","max_bytes"}, max_bytes at
 * most upload_max), or with ?append=true (*append set) the fields of the file.write that
 * file_req_append completes. */
json_object *file_req_upload(const file_req_query_t *q, unsigned long long upload_max, bool *append,
                             err_t *err);
/* The append's file.write: its fields (taken) plus len bytes of body as base64. */
json_object *file_req_append(json_object *fields, const void *body, size_t len);

/* A query flag as the API reads it ("", true, 1, yes / false, 0, no; def otherwise). */
bool file_req_bool(const file_req_query_t *q, const char *name, bool def);
/* A query integer in [lo, hi] (def when absent); < 0 with err when malformed. */
int file_req_int(const file_req_query_t *q, const char *name, long long def, long long lo,
                 long long hi, long long *out, err_t *err);
/* A download's Content-Disposition: filename="…" keeps printable ASCII but quotes and
 * backslashes, filename* the exact name (RFC 6266/5987). */
void file_req_disposition(char *out, size_t cap, const char *path);

#endif
