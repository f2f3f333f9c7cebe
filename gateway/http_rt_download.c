/* http_rt_download.c — GET /runtime/{id}/download_files?path= (http_rt_download.h). The tree is
 * listed with file.list, walked as os.walk does (a directory's files, then its subdirectories,
 * top-down; bounded in files, depth and name bytes), then each file is streamed from its
 * file.download channel through the zip writer (common/zip_write.h) into the chunked HTTP body.
 * The executor gets credit back only for bytes that left for the socket, and the next file
 * starts once the previous one's bytes left: the gateway holds about one window per download,
 * whatever the tree's size. Errors before the first byte are upstream's {"detail": …} replies
 * (sandpipe-api's texts, docs/api.md). */
#include "http_rt_download.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err_http.h"
#include "http_rt.h"
#include "json_util.h"
#include "metrics.h"
#include "route.h"
#include "session.h"
#include "xalloc.h"
#include "zip_write.h"

#define DL_FILES_MAX   20000                         /* files in one zip */
#define DL_DEPTH_MAX   64                            /* directory levels walked */
#define DL_NAMES_MAX   (8u << 20)                    /* bytes of names kept for one download */
#define DL_ZIP_LEVEL   0                             /* stored, as upstream */
#define ZIP_SIZE_LIMIT (0xffffffffull - (64u << 20)) /* no zip64: room left for headers */

typedef struct {
    char *rel; /* the name in the zip */
    char *abs; /* the path in the sandbox */
    uint32_t mode;
    time_t mtime;
} dl_file_t;

/* A directory being walked: its listing and the next entry to look at for subdirectories. */
typedef struct {
    char *abs, *rel;
    json_object *res;
    size_t next;
    int depth;
} dl_frame_t;

/* One download; outlives its request while a file's channel is open (that channel's on_close
 * always comes, and frees it then). */
typedef struct {
    uint64_t req; /* 0 once the request is gone */
    char sid[128];
    char path[RT_PATH_MAX];
    dl_file_t *v;
    size_t n, cap, name_bytes;
    uint64_t total;
    dl_frame_t *stack;
    size_t depth_n, depth_cap;
    char why[600];
    /* the zip */
    zip_writer_t *zw;
    size_t cur;           /* the file being streamed */
    session_stream_t *st; /* its channel, NULL when none is open */
    bool begun, failed;   /* its entry was started; the stream broke */
    bool wait_drain;      /* the next file starts once the body's bytes left */
    size_t ungranted;     /* its bytes received, not yet granted back */
    err_t err;
} dl_t;

static void
dl_free(dl_t *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].rel);
        free(d->v[i].abs);
    }
    free(d->v);
    for (size_t i = 0; i < d->depth_n; i++) {
        free(d->stack[i].abs);
        free(d->stack[i].rel);
        json_object_put(d->stack[i].res);
    }
    free(d->stack);
    zip_writer_free(d->zw);
    free(d);
}

static http_req_t *
request_of(dl_t *d)
{
    return d->req ? http_find(d->req) : NULL;
}

/* The request ended (answered, or its client went away): an open channel is cancelled, and
 * its on_close frees d. */
static void
on_request_gone(void *ud)
{
    dl_t *d = ud;
    d->req = 0;
    if (d->st)
        session_stream_cancel(d->st);
    else
        dl_free(d);
}

/* ---- the listing ---- */

static uint32_t
mode_bits(json_object *e)
{
    if (strcmp(json_get_str(e, "type", ""), "file"))
        return 0; /* a symlink's own 0777: the writer's 0644 */
    return (uint32_t)strtoul(json_get_str(e, "mode", "0"), NULL, 8) & 07777;
}

/* An entry's name as its bytes (name_b64 when it is not UTF-8), "" when it has none. */
static const char *
entry_name(json_object *e, char out[RT_PATH_MAX])
{
    if (json_get_name(e, "name", out, RT_PATH_MAX, NULL) < 0)
        out[0] = '\0';
    return out;
}

static int
dl_add(dl_t *d, const char *rel, const char *abs, json_object *e)
{
    size_t names = strlen(rel) + strlen(abs) + 2;
    if (d->n >= DL_FILES_MAX || d->name_bytes + names > DL_NAMES_MAX) {
        snprintf(d->why, sizeof d->why, "Too many files to zip: the limit is %d files",
                 DL_FILES_MAX);
        return -1;
    }
    d->total += (uint64_t)json_get_int(e, "size", 0);
    if (d->total >= ZIP_SIZE_LIMIT) {
        snprintf(d->why, sizeof d->why, "The files are over 4 GiB: too large for one zip");
        return -1;
    }
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 64;
        d->v = xrealloc(d->v, d->cap * sizeof *d->v);
    }
    d->v[d->n++] = (dl_file_t){xstrdup(rel), xstrdup(abs), mode_bits(e),
                               (time_t)json_get_double(e, "mtime", 0)};
    d->name_bytes += names;
    return 0;
}

static bool
is_dir(json_object *e)
{
    return !strcmp(json_get_str(e, "type", ""), "directory");
}

/* Pushes directory abs (its listing res, taken) and adds its files. 0, or -1 with why. */
static int
push(dl_t *d, const char *abs, const char *rel, json_object *res, int depth)
{
    if (d->depth_n == d->depth_cap) {
        d->depth_cap = d->depth_cap ? d->depth_cap * 2 : 8;
        d->stack = xrealloc(d->stack, d->depth_cap * sizeof *d->stack);
    }
    d->stack[d->depth_n++] = (dl_frame_t){xstrdup(abs), xstrdup(rel), res, 0, depth};
    if (json_get_bool(res, "truncated", false)) {
        snprintf(d->why, sizeof d->why, "Too many entries in %.400s", abs);
        return -1;
    }
    json_object *entries = json_get(res, "entries");
    size_t n = entries ? json_object_array_length(entries) : 0;
    char cabs[RT_PATH_MAX], crel[RT_PATH_MAX], name[RT_PATH_MAX];
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(entries, i);
        const char *type = json_get_str(e, "type", "");
        entry_name(e, name);
        if (is_dir(e) || (strcmp(type, "file") && strcmp(type, "symlink")))
            continue;
        if (http_rt_join(cabs, sizeof cabs, abs, name) < 0 ||
            http_rt_join(crel, sizeof crel, rel, name) < 0) {
            snprintf(d->why, sizeof d->why, "Path too long under %.400s", abs);
            return -1;
        }
        if (dl_add(d, crel, cabs, e) < 0)
            return -1;
    }
    return 0;
}

static void walk(http_req_t *h);
static void zip_start(http_req_t *h);

static int
list_op(http_req_t *h, const char *path, session_op_cb cb)
{
    dl_t *d = h->ud;
    gw_session_t *s = session_find(d->sid);
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "file.list");
    json_set_name(op, "path", path);
    json_set_bool(op, "hidden", true);
    err_t err = {0};
    int rc = s ? session_probe_op(s, op, cb, (void *)(uintptr_t)h->id, &err) : -1;
    json_object_put(op);
    if (rc < 0)
        http_rt_fail(h, ERR_INTERNAL, s ? err.msg : "Runtime disconnected");
    return rc;
}

/* A subdirectory's listing: walked, or skipped when it went away since its parent was listed
 * (as os.walk does). */
static void
on_sub_listed(void *ud, json_object *res)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    dl_t *d = h->ud;
    json_object *err = json_get(res, "error");
    dl_frame_t *top = &d->stack[d->depth_n - 1];
    if (err && err_from_gateway_name(json_get_str(err, "code", "")) != ERR_NOT_FOUND) {
        http_rt_fail(h, ERR_INTERNAL, json_get_str(err, "message", "Runtime did not answer"));
        return;
    }
    if (!err) {
        json_object *entries = json_get(top->res, "entries");
        json_object *e = json_object_array_get_idx(entries, top->next - 1);
        char cabs[RT_PATH_MAX], crel[RT_PATH_MAX], name[RT_PATH_MAX];
        entry_name(e, name);
        int depth = top->depth + 1;
        http_rt_join(cabs, sizeof cabs, top->abs, name); /* checked before the listing */
        http_rt_join(crel, sizeof crel, top->rel, name);
        if (push(d, cabs, crel, json_object_get(res), depth) < 0) {
            http_rt_fail(h, ERR_INTERNAL, d->why);
            return;
        }
    }
    walk(h);
}

/* The next subdirectory of the deepest directory, depth first; the zip once none is left. */
static void
walk(http_req_t *h)
{
    dl_t *d = h->ud;
    while (d->depth_n) {
        dl_frame_t *top = &d->stack[d->depth_n - 1];
        json_object *entries = json_get(top->res, "entries");
        size_t n = entries ? json_object_array_length(entries) : 0;
        while (top->next < n && !is_dir(json_object_array_get_idx(entries, top->next)))
            top->next++;
        if (top->next == n) {
            free(top->abs);
            free(top->rel);
            json_object_put(top->res);
            d->depth_n--;
            continue;
        }
        json_object *e = json_object_array_get_idx(entries, top->next++);
        char cabs[RT_PATH_MAX], crel[RT_PATH_MAX], name[RT_PATH_MAX];
        entry_name(e, name);
        if (http_rt_join(cabs, sizeof cabs, top->abs, name) < 0 ||
            http_rt_join(crel, sizeof crel, top->rel, name) < 0) {
            http_rt_failf(h, ERR_INTERNAL, "Path too long under %.400s", top->abs);
            return;
        }
        if (top->depth >= DL_DEPTH_MAX) {
            http_rt_failf(h, ERR_INTERNAL, "Directories nested too deep under %.400s", top->abs);
            return;
        }
        list_op(h, cabs, on_sub_listed);
        return;
    }
    zip_start(h);
}

/* The path is a file: one entry named after it (upstream's os.walk gives an empty zip). */
static void
on_stat(void *ud, json_object *res)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    dl_t *d = h->ud;
    json_object *err = json_get(res, "error");
    if (err) {
        http_rt_fail(h, ERR_INTERNAL, json_get_str(err, "message", "Runtime did not answer"));
        return;
    }
    const char *base = strrchr(d->path, '/');
    if (dl_add(d, base ? base + 1 : d->path, d->path, res) < 0) {
        http_rt_fail(h, ERR_INTERNAL, d->why);
        return;
    }
    zip_start(h);
}

static void
on_root_listed(void *ud, json_object *res)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    dl_t *d = h->ud;
    json_object *err = json_get(res, "error");
    int code = err ? err_from_gateway_name(json_get_str(err, "code", "")) : 0;
    if (!err) {
        char root[RT_PATH_MAX];
        if (json_get_name(res, "path", root, sizeof root, NULL) < 0)
            snprintf(root, sizeof root, "%s", d->path);
        if (push(d, root, "", json_object_get(res), 0) < 0) {
            http_rt_fail(h, ERR_INTERNAL, d->why);
            return;
        }
        walk(h);
    } else if (code == ENOTDIR) {
        gw_session_t *s = session_find(d->sid);
        json_object *op = json_object_new_object();
        json_set_str(op, "op", "file.stat");
        json_set_name(op, "path", d->path);
        err_t e = {0};
        if (!s || session_probe_op(s, op, on_stat, ud, &e) < 0)
            http_rt_fail(h, ERR_INTERNAL, s ? e.msg : "Runtime disconnected");
        json_object_put(op);
    } else if (code == ERR_NOT_FOUND) {
        http_rt_fail(h, ERR_INTERNAL, "404: File not found");
    } else {
        http_rt_fail(h, ERR_INTERNAL, json_get_str(err, "message", "Runtime did not answer"));
    }
}

/* ---- the zip ---- */

static int
zip_sink(void *ud, const void *p, size_t n)
{
    http_req_t *h = request_of(ud);
    if (!h)
        return -EPIPE;
    http_stream_write(h, p, n);
    return 0;
}

static void next_file(dl_t *d);

static void
on_sent(void *ud, size_t n)
{
    dl_t *d = ud;
    size_t g = n < d->ungranted ? n : d->ungranted;
    if (g && d->st) {
        d->ungranted -= g;
        session_stream_grant(d->st, g);
    }
    http_req_t *h = request_of(d);
    if (d->wait_drain && h && h->pending_len == 0) {
        d->wait_drain = false;
        next_file(d);
    }
}

static void
on_json(void *ud, json_object *msg)
{
    dl_t *d = ud;
    if (d->begun || d->failed || strcmp(json_get_str(msg, "event", ""), "size") != 0)
        return;
    const dl_file_t *f = &d->v[d->cur];
    d->begun = true;
    if (zip_writer_begin(d->zw, f->rel, f->mode, f->mtime, &d->err) < 0)
        d->failed = true;
}

static void
on_data(void *ud, const uint8_t *p, size_t n)
{
    dl_t *d = ud;
    metrics_transfer(false, n);
    d->ungranted += n;
    if (!d->failed && d->begun && zip_writer_write(d->zw, p, n, &d->err) < 0)
        d->failed = true;
    http_req_t *h = request_of(d);
    if (h && h->pending_len == 0 && d->st) { /* nothing waits for the socket: grant at once */
        session_stream_grant(d->st, d->ungranted);
        d->ungranted = 0;
    }
}

/* The file's channel closed: its entry ends (or the file is left out when it could not be
 * opened any more: gone since the listing, a symlink to a directory or out of the sandbox); a
 * failure once its bytes started cuts the zip short, so the client's unzip fails instead of
 * yielding a silently short file. */
static void
on_file_close(void *ud, json_object *res)
{
    dl_t *d = ud;
    d->st = NULL;
    d->ungranted = 0;
    http_req_t *h = request_of(d);
    if (!h) {
        dl_free(d); /* the request went first */
        return;
    }
    json_object *err = json_get(res, "error");
    const dl_file_t *f = &d->v[d->cur];
    if (!err && !d->failed && !d->begun &&
        zip_writer_begin(d->zw, f->rel, f->mode, f->mtime, &d->err) == 0)
        d->begun = true;
    bool ok = !err && !d->failed && d->begun && zip_writer_end(d->zw, &d->err) == 0;
    if (!ok && d->begun) {
        fprintf(stderr, "sandpipe-gateway: download_files %s: %s: zip cut short\n", f->abs,
                d->err.msg[0] ? d->err.msg : json_get_str(err, "message", "?"));
        http_stream_fail(h);
        return;
    }
    d->cur++;
    if (h->pending_len)
        d->wait_drain = true; /* on_sent goes on */
    else
        next_file(d);
}

static const session_stream_cbs_t stream_cbs = {
    .on_json = on_json,
    .on_data = on_data,
    .on_writable = NULL,
};

static void
next_file(dl_t *d)
{
    http_req_t *h = request_of(d);
    if (!h)
        return;
    gw_session_t *s = session_find(d->sid);
    while (d->cur < d->n) {
        d->begun = d->failed = false;
        d->err = (err_t){0};
        json_object *op = json_object_new_object();
        json_set_str(op, "op", "file.download");
        json_set_name(op, "path", d->v[d->cur].abs);
        json_set_int(op, "offset", 0);
        json_set_int(op, "length", -1);
        err_t err = {0};
        d->st = s ? session_stream_open(s, op, &stream_cbs, on_file_close, d, false, &err) : NULL;
        json_object_put(op);
        if (d->st)
            return;
        d->cur++; /* could not start: left out, as a file that cannot be opened */
    }
    err_t ferr = {0};
    if (zip_writer_finish(d->zw, &ferr) < 0) {
        fprintf(stderr, "sandpipe-gateway: download_files: %s\n", ferr.msg);
        http_stream_fail(h);
        return;
    }
    http_stream_end(h);
}

static void
zip_start(http_req_t *h)
{
    dl_t *d = h->ud;
    const char *base = strrchr(d->path, '/');
    base = base ? base + 1 : d->path;
    char name[256], extra[512];
    size_t k = 0;
    for (const unsigned char *c = (const unsigned char *)base; *c && k + 1 < sizeof name; c++)
        name[k++] = *c >= 0x20 && *c < 0x7f && *c != '"' && *c != '\\' ? (char)*c : '_';
    name[k] = '\0';
    snprintf(extra, sizeof extra,
             "content-disposition: attachment; filename=\"%s.zip\"\r\ncache-control: no-store\r\n",
             name);
    http_stream_head(h, 200, "application/zip", HTTP_STREAM_CHUNKED, extra);
    h->on_sent = on_sent;
    d->zw = zip_writer_new(zip_sink, d, DL_ZIP_LEVEL);
    next_file(d);
}

/* ---- the route ---- */

static void
on_route(void *ud, const route_t *r)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    dl_t *d = h->ud;
    jwt_claims_t c;
    if (!http_rt_live(h, r) || !http_rt_authed(h, r, false, &c) || !http_rt_here(h, r))
        return;
    snprintf(d->sid, sizeof d->sid, "%s", r->sid);
    const char *path = http_arg(h, "path");
    if (!path) {
        http_rt_invalid(h, "missing", "query", "path", "Field required");
        return;
    }
    if (path[0] != '/') {
        /* upstream's os.path.isabs check (a 400 its except clause re-raises as a 500), as
         * upload_file's: a relative path would resolve against a working directory the caller
         * does not see. */
        http_rt_fail(h, ERR_INTERNAL, "400: Path must be an absolute path");
        return;
    }
    if (strlen(path) >= sizeof d->path) {
        http_rt_invalid(h, "string_type", "query", "path", "Input should be a valid string");
        return;
    }
    snprintf(d->path, sizeof d->path, "%s", path);
    list_op(h, d->path, on_root_listed);
}

void
http_rt_download_files(http_req_t *h, const char *id)
{
    dl_t *d = xcalloc(1, sizeof *d);
    d->req = h->id;
    h->ud = d;
    h->free_ud = on_request_gone;
    route_resolve(id, on_route, (void *)(uintptr_t)h->id);
}
