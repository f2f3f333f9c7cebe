/* action_server_download.c — GET /runtime/{id}/download_files?path=, as upstream 0.62.0
 * (action_execution_server.py) answers ActionExecutionClient.copy_from: a zip of the files
 * under path, names relative to it. The tree is listed with file.list (bounded in files,
 * depth and name bytes), then each file is streamed through api_xfer_download into the zip
 * writer (common/zip_write.h), whose output goes straight to FastCGI: the archive is never
 * held whole here. Errors before the first byte are upstream's {"detail": ...} replies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "action_server.h"
#include "xfer.h"
#include "xalloc.h"
#include "zip_write.h"

#define RT_DL_FILES_MAX 20000      /* files in one download_files zip */
#define RT_DL_DEPTH_MAX 64         /* directory levels walked */
#define RT_DL_NAMES_MAX (8u << 20) /* bytes of names kept for one download */
#define RT_ZIP_LEVEL    0          /* stored, as upstream: deflate costs the worker ~3x the time */
#define ZIP_SIZE_LIMIT  (0xffffffffull - (64u << 20)) /* no zip64: room left for headers */

typedef struct {
    char *rel; /* the name in the zip */
    char *abs; /* the path in the sandbox */
    uint32_t mode;
    time_t mtime;
} dl_file_t;

typedef struct {
    api_req_t *r;
    const char *gw, *sid;
    dl_file_t *v;
    size_t n, cap, name_bytes;
    uint64_t total; /* file sizes as listed */
    char why[600];  /* why the walk failed */
} dl_list_t;

static void
dl_list_free(dl_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].rel);
        free(l->v[i].abs);
    }
    free(l->v);
}

/* file.list of path: its result, or NULL with e (as api_gw_call). */
static json_object *
list_dir(dl_list_t *l, const char *path, api_err_t *e)
{
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "file.list");
    json_set_str(op, "path", path);
    json_set_bool(op, "hidden", true);
    return rt_call(l->r, l->gw, l->sid, op, e);
}

/* A regular file's permission bits; 0 (the writer's 0644) for a symlink's own 0777. */
static uint32_t
mode_bits(json_object *e)
{
    if (strcmp(json_get_str(e, "type", ""), "file"))
        return 0;
    return (uint32_t)strtoul(json_get_str(e, "mode", "0"), NULL, 8) & 07777;
}

static int
dl_add(dl_list_t *l, const char *rel, const char *abs, json_object *e)
{
    size_t names = strlen(rel) + strlen(abs) + 2;
    if (l->n >= RT_DL_FILES_MAX || l->name_bytes + names > RT_DL_NAMES_MAX) {
        snprintf(l->why, sizeof l->why, "Too many files to zip: the limit is %d files",
                 RT_DL_FILES_MAX);
        return -1;
    }
    l->total += (uint64_t)json_get_int(e, "size", 0);
    if (l->total >= ZIP_SIZE_LIMIT) {
        snprintf(l->why, sizeof l->why, "The files are over 4 GiB: too large for one zip");
        return -1;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (dl_file_t){xstrdup(rel), xstrdup(abs), mode_bits(e),
                               (time_t)json_get_double(e, "mtime", 0)};
    l->name_bytes += names;
    return 0;
}

/* Adds the files under abs (listed in res, taken) as os.walk does: a directory's files, then
 * its subdirectories, top-down. Symlinks are followed for files (their target is read), not
 * for directories. Returns 0, or -1 with l->why set. */
static int
walk(dl_list_t *l, const char *abs, const char *rel, json_object *res, int depth)
{
    json_object *entries = json_get(res, "entries");
    int rc = 0;
    if (json_get_bool(res, "truncated", false)) {
        snprintf(l->why, sizeof l->why, "Too many entries in %.400s", abs);
        rc = -1;
    }
    size_t n = entries ? json_object_array_length(entries) : 0;
    char cabs[RT_PATH_MAX], crel[RT_PATH_MAX];
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        for (size_t i = 0; i < n && rc == 0; i++) {
            json_object *e = json_object_array_get_idx(entries, i);
            const char *name = json_get_str(e, "name", ""), *type = json_get_str(e, "type", "");
            bool dir = !strcmp(type, "directory");
            if (dir != (pass == 1) || (!dir && strcmp(type, "file") && strcmp(type, "symlink")))
                continue;
            if (rt_join(cabs, sizeof cabs, abs, name) < 0 ||
                rt_join(crel, sizeof crel, rel, name) < 0) {
                snprintf(l->why, sizeof l->why, "Path too long under %.400s", abs);
                rc = -1;
            } else if (!dir) {
                rc = dl_add(l, crel, cabs, e);
            } else if (depth >= RT_DL_DEPTH_MAX) {
                snprintf(l->why, sizeof l->why, "Directories nested too deep under %.400s", abs);
                rc = -1;
            } else {
                api_err_t fail;
                json_object *sub = list_dir(l, cabs, &fail);
                bool refused = !sub && api_gw_refused(&fail);
                if (sub) {
                    rc = walk(l, cabs, crel, sub, depth + 1);
                } else if (!refused || fail.code != ERR_NOT_FOUND) {
                    /* A directory gone since its parent was listed is skipped, as os.walk does. */
                    snprintf(l->why, sizeof l->why, "%.*s", (int)sizeof l->why - 1,
                             refused ? fail.msg : "Runtime did not answer");
                    rc = -1;
                }
            }
        }
    }
    json_object_put(res);
    return rc;
}

/* Streams the zip: the writer's output goes straight to FastCGI. */
typedef struct {
    api_req_t *r;
    zip_writer_t *zw;
    const dl_file_t *f;
    bool begun;
    err_t err;
} dl_stream_t;

static int
zip_to_fcgi(void *ud, const void *p, size_t n)
{
    api_req_t *r = ud;
    return FCGX_PutStr(p, (int)n, r->fcgi->out) == (int)n ? 0 : -EPIPE;
}

static int
dl_header(void *ud, json_object *header)
{
    (void)header;
    dl_stream_t *d = ud;
    d->begun = true;
    return zip_writer_begin(d->zw, d->f->rel, d->f->mode, d->f->mtime, &d->err) < 0 ? -1 : 0;
}

static int
dl_write(void *ud, const char *p, size_t n)
{
    dl_stream_t *d = ud;
    return zip_writer_write(d->zw, p, n, &d->err) < 0 ? -1 : 0;
}

static void
send_head(api_req_t *r, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char name[256], head[512];
    size_t k = 0;
    for (const unsigned char *c = (const unsigned char *)base; *c && k + 1 < sizeof name; c++)
        name[k++] = *c >= 0x20 && *c < 0x7f && *c != '"' && *c != '\\' ? (char)*c : '_';
    name[k] = '\0';
    int n = snprintf(head, sizeof head,
                     "Status: 200 OK\r\nContent-Type: application/zip\r\n"
                     "Content-Disposition: attachment; filename=\"%s.zip\"\r\n"
                     "Cache-Control: no-store\r\n\r\n",
                     name);
    r->status = 200;
    FCGX_PutStr(head, n, r->fcgi->out);
}

/* Writes every listed file into the zip. A file that cannot be opened any more (gone since
 * the listing, a symlink to a directory or out of the sandbox) is left out; a failure once a
 * file's bytes started leaves the zip without its central directory, so the client's unzip
 * fails instead of yielding a silently short file. */
static void
stream_zip(api_req_t *r, dl_list_t *l)
{
    zip_writer_t *zw = zip_writer_new(zip_to_fcgi, r, RT_ZIP_LEVEL);
    for (size_t i = 0; i < l->n; i++) {
        dl_stream_t d = {.r = r, .zw = zw, .f = &l->v[i]};
        json_object *op = json_object_new_object();
        json_set_str(op, "path", l->v[i].abs);
        json_set_int(op, "offset", 0);
        json_set_int(op, "length", -1);
        api_xfer_sink_t to = {dl_header, dl_write, &d};
        api_err_t e = {.msg = "?"};
        json_object *res = api_xfer_download(r, l->gw, l->sid, op, &to, &e);
        json_object_put(op);
        bool ok = res != NULL;
        json_object_put(res);
        if (ok && !d.begun && dl_header(&d, NULL) < 0)
            ok = false;
        if (ok && zip_writer_end(zw, &d.err) < 0)
            ok = false;
        if (!ok && d.begun) {
            fprintf(stderr, "sandpipe-api: download_files %s: %s: zip cut short\n", l->v[i].abs,
                    d.err.msg[0] ? d.err.msg : e.msg);
            zip_writer_free(zw);
            return;
        }
    }
    err_t ferr = {0};
    if (zip_writer_finish(zw, &ferr) < 0)
        fprintf(stderr, "sandpipe-api: download_files: %s\n", ferr.msg);
    zip_writer_free(zw);
}

/* GET ?path=: a zip of the file, or of the files under the directory (names relative to it). */
void
api_rt_download_files(api_req_t *r, char **params)
{
    char gw[128];
    json_object *s = api_rt_session_authed(r, params[0], gw, sizeof gw, false);
    if (!s)
        return;
    json_object_put(s);
    char path[RT_PATH_MAX];
    int k = api_query(r, "path", path, sizeof path);
    if (k == -1) {
        rt_invalid(r, "missing", "query", "path", "Field required");
        return;
    }
    if (k < 0) {
        rt_invalid(r, "string_type", "query", "path", "Input should be a valid string");
        return;
    }
    if (!path[0]) {
        api_failf(r, ERR_INTERNAL, "400: Path must be an absolute path");
        return;
    }
    dl_list_t l = {.r = r, .gw = gw, .sid = params[0]};
    api_err_t e;
    json_object *res = list_dir(&l, path, &e);
    if (res) {
        if (walk(&l, json_get_str(res, "path", path), "", res, 0) < 0) {
            api_failf(r, ERR_INTERNAL, "%s", l.why);
            goto done;
        }
    } else if (api_gw_refused(&e) && e.code == ENOTDIR) {
        /* A file: one entry named after it (upstream's os.walk gives an empty zip). */
        json_object *op = json_object_new_object();
        json_set_str(op, "op", "file.stat");
        json_set_str(op, "path", path);
        json_object *st = rt_call(r, gw, params[0], op, &e);
        const char *base = strrchr(path, '/');
        int added = st ? dl_add(&l, base ? base + 1 : path, path, st) : -1;
        if (!st)
            rt_gw_failure(r, &e);
        else if (added < 0)
            api_failf(r, ERR_INTERNAL, "%s", l.why);
        json_object_put(st);
        if (added < 0)
            goto done;
    } else {
        if (api_gw_refused(&e) && e.code == ERR_NOT_FOUND)
            api_failf(r, ERR_INTERNAL, "404: File not found");
        else
            rt_gw_failure(r, &e);
        goto done;
    }
    send_head(r, path);
    stream_zip(r, &l);
done:
    dl_list_free(&l);
}
