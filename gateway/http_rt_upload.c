/* http_rt_upload.c — POST /runtime/{id}/upload_file (http_rt_upload.h). The multipart body is
 * parsed as it arrives from the HTTP connection (common/multipart.h) and its "file" part streamed
 * into the executor's file.upload channel under the executor's credit; while the channel takes
 * nothing, the connection is not read (lws rx flow control), so the gateway holds one input
 * piece and one parsed piece per upload, never the file. A .zip part is spooled to an unlinked
 * temp file (bounded by --max-upload), checked whole by the zip reader (names, sizes, bombs:
 * common/zip_read.h) before anything is written, then unpacked entry by entry, each entry
 * streamed the same way (http_rt_unzip.c); the spool writes, the check and the inflating run
 * on libuv's threadpool (http_rt_unzip_work.c), never on the loop. Error bodies are upstream's
 * {"detail": …} with sandpipe-api's texts (docs/api.md): its handler turns every exception, its own
 * 400s included, into a 500 whose detail is str(exception) ("400: …"). */
#include "http_rt_upload.h"
#include "http_rt_upload_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "buf.h"
#include "gw.h"
#include "http_rt.h"
#include "json_util.h"
#include "metrics.h"
#include "multipart.h"
#include "route.h"
#include "session.h"
#include "xalloc.h"

static void
ul_free(ul_t *u)
{
    multipart_free(u->mp);
    free(u->filename);
    buf_free(&u->in);
    buf_free(&u->out);
    zip_reader_free(u->z);
    ul_job_free(u);
    if (u->spool >= 0)
        close(u->spool); /* unlinked when made: the spool is gone with it */
    free(u);
}

void
ul_release(ul_t *u)
{
    if (u->job.busy) { /* the worker holds u->z and the spool: it frees u when back */
        u->gone = true;
        ul_job_stop(u);
        return;
    }
    ul_free(u);
}

http_req_t *
ul_request(ul_t *u)
{
    return u->req ? http_find(u->req) : NULL;
}

static void
on_request_gone(void *ud)
{
    ul_t *u = ud;
    u->req = 0;
    u->phase = DONE;
    ul_job_stop(u);
    if (u->st)
        session_stream_cancel(u->st); /* its on_close frees u */
    else
        ul_release(u);
}

/* The upload ends: an open channel is cancelled (an upload's temp file is removed). Returns the
 * request to answer, NULL when it is gone or answered. (The rest of an unread body is read and
 * dropped once the answer is out: http_server.c.) */
static http_req_t *
finish(ul_t *u)
{
    http_req_t *h = ul_request(u);
    u->phase = DONE;
    ul_job_stop(u);
    if (u->st)
        session_stream_cancel(u->st);
    return h && !h->answered ? h : NULL;
}

void
ul_fail(ul_t *u, int code, const char *fmt, ...)
{
    http_req_t *h = finish(u);
    if (!h)
        return;
    char d[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d, sizeof d, fmt, ap);
    va_end(ap);
    http_rt_fail(h, code, d);
}

/* FastAPI's validation error (422), ending the upload. */
static void
invalid(ul_t *u, const char *type, const char *where, const char *field, const char *msg)
{
    http_req_t *h = finish(u);
    if (h)
        http_rt_invalid(h, type, where, field, msg);
}

static void
form_failure(ul_t *u)
{
    if (u->form_err == FORM_TOO_LARGE)
        ul_fail(u, ERR_TOO_BIG, "File too large: uploads are limited to %llu bytes",
                (unsigned long long)g_gw.cfg.upload_max);
    else
        ul_fail(u, ERR_BAD_REQ, "There was an error parsing the body");
}

void
ul_succeed(ul_t *u)
{
    http_req_t *h = finish(u);
    if (!h)
        return;
    json_object *o = json_object_new_object();
    json_set_str(o, "filename", u->filename);
    json_set_str(o, "destination", u->dest);
    json_set_bool(o, "recursive", u->recursive);
    http_answer_json(h, 200, o);
}

/* ---- the form ---- */

static int
on_part(void *ud, const multipart_part_t *p)
{
    ul_t *u = ud;
    if (u->where == BEFORE && !strcmp(p->name, "file")) {
        u->where = IN_PART;
        u->filename = p->filename ? xstrdup(p->filename) : NULL;
    }
    return 0;
}

static int
on_data(void *ud, const char *p, size_t n)
{
    ul_t *u = ud;
    if (u->where != IN_PART)
        return 0;
    u->part_bytes += n;
    if (u->part_bytes > g_gw.cfg.upload_max) {
        u->form_err = FORM_TOO_LARGE;
        return -1;
    }
    buf_append(&u->out, p, n);
    return 0;
}

static int
on_part_end(void *ud)
{
    ul_t *u = ud;
    if (u->where == IN_PART)
        u->where = AFTER;
    return 0;
}

static const multipart_cb_t form_cb = {on_part, on_data, on_part_end};

/* ---- the channel ---- */

static void
on_writable(void *ud)
{
    ul_pump(ud);
}

static void
on_close(void *ud, json_object *res)
{
    ul_t *u = ud;
    u->st = NULL;
    if (!ul_request(u) || u->phase == DONE) {
        if (!ul_request(u))
            ul_release(u);
        return;
    }
    json_object *err = json_get(res, "error");
    if (err && u->form_err)
        form_failure(u);
    else if (err)
        ul_fail(u, ERR_INTERNAL, "%s", json_get_str(err, "message", "the upload failed"));
    else if (!u->eof_sent) /* a hostile or broken executor: nothing would move the upload on */
        ul_fail(u, ERR_INTERNAL, "the executor ended the upload before its end");
    else if (u->phase == UNPACK)
        ul_next_entry(u);
    else
        ul_succeed(u);
}

static const session_stream_cbs_t stream_cbs = {
    .on_json = NULL,
    .on_data = NULL,
    .on_writable = on_writable,
};

/* Opens a file.upload channel to path. */
int
ul_open_upload(ul_t *u, const char *path, unsigned long long max, uint32_t mode)
{
    gw_session_t *s = session_find(u->sid);
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "file.upload");
    json_set_name(op, "path", path);
    json_set_bool(op, "parents", true);
    json_set_int(op, "max_bytes", (int64_t)max);
    if (mode) {
        char m[16];
        snprintf(m, sizeof m, "%04o", (unsigned)mode);
        json_set_str(op, "mode", m);
    }
    err_t err = {0};
    u->eof_sent = false;
    u->st = s ? session_stream_open(s, op, &stream_cbs, on_close, u, true, &err) : NULL;
    json_object_put(op);
    if (!u->st) {
        ul_fail(u, ERR_INTERNAL, "%s", s ? err.msg : "Runtime disconnected");
        return -1;
    }
    return 0;
}

/* Hands u->out to the channel within its credit. True when all of it went. */
bool
ul_drain(ul_t *u)
{
    while (u->out.len && u->st) {
        ssize_t k = session_stream_send(u->st, u->out.data, u->out.len);
        if (k < 0) {
            ul_fail(u, ERR_INTERNAL, "the executor stopped taking the upload");
            return false;
        }
        if (k == 0)
            return false; /* on_writable goes on */
        metrics_transfer(true, (size_t)k);
        buf_consume(&u->out, (size_t)k);
    }
    return u->out.len == 0;
}

/* ---- the part's way ---- */

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static int
spool_open(ul_t *u)
{
    const char *tmp = getenv("TMPDIR");
    char name[512];
    snprintf(name, sizeof name, "%s/sandpipe-upload-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    u->spool = mkstemp(name);
    if (u->spool < 0) {
        ul_fail(u, ERR_INTERNAL, "cannot spool the upload: %s", strerror(errno));
        return -1;
    }
    unlink(name);
    return 0;
}

/* A spool write is back. */
void
ul_spooled(ul_t *u)
{
    if (u->job.rc < 0) {
        ul_fail(u, ERR_INTERNAL, "%s", u->job.err.msg);
        return;
    }
    ul_pump(u);
}

/* destination exists: the part goes to destination/filename, or a .zip is unpacked there. */
static void
on_dest_made(void *ud, json_object *res)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    ul_t *u = h ? h->ud : NULL;
    if (!u || u->phase != PREP)
        return;
    json_object *err = json_get(res, "error");
    char path[RT_PATH_MAX];
    if (err) {
        ul_fail(u, ERR_INTERNAL, "%s", json_get_str(err, "message", "mkdir failed"));
    } else if (ends_with(u->filename, ".zip")) {
        if (spool_open(u) == 0) {
            u->phase = SPOOL;
            ul_pump(u);
        }
    } else if (u->recursive) {
        ul_fail(u, ERR_INTERNAL, "400: Recursive uploads must be zip files");
    } else if (http_rt_join(path, sizeof path, u->dest, u->filename) < 0) {
        ul_fail(u, ERR_INTERNAL, "File name too long");
    } else if (ul_open_upload(u, path, g_gw.cfg.upload_max, 0) == 0) {
        u->phase = STREAM;
        ul_pump(u);
    }
}

/* The part's headers are in: what upstream checks before it writes anything. */
static void
prepare(ul_t *u)
{
    http_req_t *h = ul_request(u);
    u->phase = PREP;
    if (!u->filename) {
        invalid(u, "value_error", "body", "file", "Expected UploadFile, received: <class 'str'>");
        return;
    }
    if (u->dest[0] != '/') {
        /* upstream's HTTPException(400), caught and re-raised as a 500 by its except clause */
        ul_fail(u, ERR_INTERNAL, "400: Destination must be an absolute path");
        return;
    }
    gw_session_t *s = session_find(u->sid);
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "file.mkdir");
    json_set_name(op, "path", u->dest);
    json_set_bool(op, "parents", true);
    err_t err = {0};
    if (!s || session_exec_op(s, op, on_dest_made, (void *)(uintptr_t)h->id, &err) < 0)
        ul_fail(u, ERR_INTERNAL, "%s", s ? err.msg : "Runtime disconnected");
    json_object_put(op);
}

/* Moves what can move: the part's parsed bytes to the channel (or the spool), body bytes into
 * the parser while the part's way takes them; the connection is read again once the input
 * held is small. */
void
ul_pump(ul_t *u)
{
    http_req_t *h = ul_request(u);
    if (!h || u->phase == DONE)
        return;
    if (u->phase == UNPACK) {
        ul_pump_entry(u);
        return;
    }
    if (u->phase == CHECK)
        return; /* ul_checked goes on */
    for (;;) {
        if (u->phase == STREAM && !ul_drain(u))
            break;
        if (u->phase == SPOOL) {
            if (u->out.len && !u->job.busy)
                ul_job_spool(u);
            if (u->out.len >= UL_SPOOL_MAX)
                break; /* the worker is behind: ul_spooled goes on */
        }
        if (u->phase == DONE || u->phase == ROUTING || u->phase == PREP)
            break;
        if (u->parse_failed) /* after the part: the rest of the body does not matter */
            buf_clear(&u->in);
        if (!u->in.len)
            break;
        size_t n = u->in.len < UL_FEED ? u->in.len : UL_FEED;
        err_t err = {0};
        int rc = multipart_feed(u->mp, u->in.data, n, &err);
        buf_consume(&u->in, n);
        if (rc < 0) {
            u->parse_failed = true;
            if (u->where != AFTER) {
                if (!u->form_err)
                    u->form_err = FORM_MALFORMED;
                form_failure(u);
                return;
            }
        }
        if (u->phase == PARSING && u->where != BEFORE) {
            prepare(u);
            if (u->phase == DONE)
                return;
        }
    }
    if (u->phase == DONE)
        return;
    /* the part ended and went: the channel closes with the file's result */
    if (u->where == AFTER && !u->out.len) {
        if (u->phase == STREAM && u->st && !u->eof_sent) {
            u->eof_sent = true;
            if (session_stream_eof(u->st) < 0)
                ul_fail(u, ERR_INTERNAL, "the executor stopped taking the upload");
        } else if (u->phase == SPOOL && !u->job.busy) {
            ul_unpack(u);
            return;
        }
    }
    h = ul_request(u);
    if (!h || u->phase == DONE)
        return;
    if (h->body_done && !u->in.len && u->where != AFTER && u->phase != PREP &&
        u->phase != ROUTING) {
        /* the body ended before the part did, or without one */
        err_t err = {0};
        bool broken = multipart_finish(u->mp, &err) < 0 || u->where == IN_PART;
        if (broken && !u->form_err)
            u->form_err = FORM_MALFORMED;
        if (u->form_err)
            form_failure(u);
        else
            invalid(u, "missing", "body", "file", "Field required");
        return;
    }
    http_body_flow(h, u->in.len < UL_IN_MAX);
}

static void
on_body(void *ud, const void *p, size_t n)
{
    ul_t *u = ud;
    if (u->phase == DONE || u->phase == CHECK || u->phase == UNPACK)
        return; /* answered, or after the zip's part: the rest is dropped */
    buf_append(&u->in, p, n);
    ul_pump(u);
}

static void
on_body_end(void *ud)
{
    ul_t *u = ud;
    if (u->phase == DONE)
        return;
    ul_pump(u);
}

/* A query boolean as pydantic reads one. 0, or -1 when it is none of its spellings. */
static int
py_bool(const char *v, bool *out)
{
    static const char *yes[] = {"1", "on", "t", "true", "y", "yes"};
    static const char *no[] = {"0", "off", "f", "false", "n", "no"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (!strcasecmp(v, yes[i]))
            return *out = true, 0;
        if (!strcasecmp(v, no[i]))
            return *out = false, 0;
    }
    return -1;
}

static void
on_route(void *ud, const route_t *r)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    ul_t *u = h->ud;
    jwt_claims_t c;
    if (!http_rt_live(h, r) || !http_rt_authed(h, r, true, &c) || !http_rt_here(h, r)) {
        finish(u);
        return;
    }
    snprintf(u->sid, sizeof u->sid, "%s", r->sid);
    const char *dest = http_arg(h, "destination"), *flag = http_arg(h, "recursive");
    if (dest && strlen(dest) >= sizeof u->dest) {
        invalid(u, "string_type", "query", "destination", "Input should be a valid string");
        return;
    }
    snprintf(u->dest, sizeof u->dest, "%s", dest ? dest : "/");
    if (flag && py_bool(flag, &u->recursive) < 0) {
        invalid(u, "bool_parsing", "query", "recursive",
                "Input should be a valid boolean, unable to interpret input");
        return;
    }
    char boundary[MULTIPART_BOUNDARY_MAX + 1];
    if (multipart_boundary(h->content_type, boundary, sizeof boundary) < 0) {
        invalid(u, "missing", "body", "file", "Field required");
        return;
    }
    u->mp = multipart_new(boundary, &form_cb, u);
    u->phase = PARSING;
    ul_pump(u);
}

void
http_rt_upload_file(http_req_t *h, const char *id)
{
    ul_t *u = xcalloc(1, sizeof *u);
    u->req = h->id;
    u->spool = -1;
    atomic_init(&u->job.cancel, false);
    h->ud = u;
    h->free_ud = on_request_gone;
    uint64_t req = h->id;
    http_body_sink(h, on_body, on_body_end); /* may hand on what came with the headers */
    if (http_find(req) == h)
        route_resolve(id, on_route, (void *)(uintptr_t)req);
}

bool
http_rt_upload_streams(const http_req_t *h)
{
    (void)h;
    return true;
}
