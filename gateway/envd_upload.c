/* envd_upload.c — envd's POST /files (docs/e2b-wire.md 3.7): files written from a multipart
 * form (one "file" part per file, its filename the destination path, or the query's path for
 * one) or from a raw application/octet-stream body (?path=), each into its own file.upload
 * channel of the executor (parents made, the file replaced atomically at its end), one after
 * the other; the answer lists them: [{"path","name","type":"file"}].
 *
 * Streamed: the body is parsed as it arrives (common/multipart.h) and the parts' bytes queued
 * in order; the head part goes to its channel within the executor's credit, and the parser is
 * fed only while the queue holds under ENVD_UPLOAD_HOLD and the connection read only while the
 * unparsed input is under ENVD_UPLOAD_IN, so the gateway holds about a megabyte per upload,
 * never a file. A body sent with Content-Encoding: gzip is inflated as it is parsed (the SDK's
 * gzip option), a bounded piece at a time. An error answers at once: the part being written is
 * cancelled (its temp file goes), the files already written stay (as envd's do), the rest of the
 * body is dropped. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "buf.h"
#include "envd_connect.h"
#include "envd_fs.h"
#include "envd_routes.h"
#include "gw.h"
#include "json_util.h"
#include "metrics.h"
#include "multipart.h"
#include "session.h"
#include "xalloc.h"

#define ENVD_UPLOAD_FEED  (64u * 1024)   /* body bytes parsed at a time */
#define ENVD_UPLOAD_IN    (256u * 1024)  /* unparsed body bytes before reading pauses */
#define ENVD_UPLOAD_HOLD  (1024u * 1024) /* parsed bytes queued before parsing pauses */
#define ENVD_UPLOAD_PARTS 64    /* files queued before parsing pauses (each costs a part_t) */
#define ENVD_UPLOAD_FILES 10000 /* files one request may write (its answer lists each) */

typedef struct part part_t;
struct part {
    part_t *next;
    buf_t data; /* its bytes not yet sent */
    bool ended; /* all its bytes are in data (or sent) */
    char path[ENVD_PATH_MAX];
};

typedef struct {
    uint64_t req; /* 0 once the request is gone */
    char sid[128];
    bool raw, body_ended, parsed_all, finished;
    multipart_t *mp;
    buf_t in;            /* body bytes not parsed yet */
    part_t *head, *tail; /* the queue; head is being written */
    part_t *parsing;     /* the part whose bytes the parser is reading (NULL: a skipped one) */
    size_t held;         /* bytes in the parts' data */
    size_t nparts;       /* parts in the queue */
    unsigned long long received; /* body bytes that came */
    session_stream_t *st;        /* head's channel */
    bool eof_sent, closing;      /* EOF sent on st; st cancelled, its close awaited */
    json_object *written;        /* the answer */
    /* Content-Encoding: gzip: the inflater, and whether it may hold output not taken yet */
    bool gzip, z_open, z_end, z_more;
    z_stream z;
    char *inflated; /* ENVD_UPLOAD_FEED bytes */
} upload_t;

static http_req_t *
request_of(upload_t *u)
{
    return u->req ? http_find(u->req) : NULL;
}

static void
part_free(part_t *p)
{
    buf_free(&p->data);
    free(p);
}

static void
upload_free(upload_t *u)
{
    while (u->head) {
        part_t *p = u->head;
        u->head = p->next;
        part_free(p);
    }
    multipart_free(u->mp);
    if (u->z_open)
        inflateEnd(&u->z);
    free(u->inflated);
    buf_free(&u->in);
    json_object_put(u->written);
    free(u);
}

/* The request ended (answered, or its client went away). */
static void
on_request_gone(void *ud)
{
    upload_t *u = ud;
    u->req = 0;
    u->finished = true;
    if (u->st) {
        if (!u->closing)
            session_stream_cancel(u->st); /* an unfinished file's temp file goes */
        u->closing = true;                /* on_close frees u */
    } else {
        upload_free(u);
    }
}

/* Answers status and stops: the channel of the part being written is cancelled. */
static void fail(upload_t *u, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void
fail(upload_t *u, int status, const char *fmt, ...)
{
    http_req_t *h = request_of(u);
    u->finished = true;
    if (u->st && !u->closing) {
        u->closing = true;
        session_stream_cancel(u->st);
    }
    if (!h || h->answered)
        return;
    char m[ENVD_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    envd_http_fail(h, status, "%s", m);
}

/* ---- the form ---- */

static bool
queued(const upload_t *u, const char *path)
{
    for (part_t *p = u->head; p; p = p->next)
        if (!strcmp(p->path, path))
            return true;
    size_t n = json_object_array_length(u->written);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(json_get_str(json_object_array_get_idx(u->written, i), "path", ""), path))
            return true;
    return false;
}

/* A new file: queued, its bytes read into it from now. */
static int
part_begin(upload_t *u, const char *path)
{
    http_req_t *h = request_of(u);
    gw_session_t *s = session_find(u->sid);
    if (!h || !s) {
        fail(u, 502, "sandbox %.100s is not running", u->sid);
        return -1;
    }
    if (u->nparts + json_object_array_length(u->written) >= ENVD_UPLOAD_FILES) {
        fail(u, 413, "one upload writes at most %d files: send the rest in another",
             ENVD_UPLOAD_FILES);
        return -1;
    }
    part_t *p = xcalloc(1, sizeof *p);
    if (envd_files_path(h, s, path, p->path) < 0) {
        u->finished = true;
        free(p);
        return -1;
    }
    if (queued(u, p->path)) {
        fail(u, 400,
             "you cannot upload multiple files to the same path '%s' in one upload request, only "
             "the first specified file was uploaded",
             p->path);
        free(p);
        return -1;
    }
    if (u->tail)
        u->tail->next = p;
    else
        u->head = p;
    u->tail = p;
    u->parsing = p;
    u->nparts++;
    return 0;
}

static int
on_form_part(void *ud, const multipart_part_t *mp)
{
    upload_t *u = ud;
    u->parsing = NULL;
    if (strcmp(mp->name, "file") != 0)
        return 0; /* envd reads the "file" parts only */
    const char *q = http_arg(request_of(u), "path");
    if (!q && !mp->filename) {
        fail(u, 400,
             "error getting multipart custom part file name: a \"file\" part without "
             "a filename, and no ?path=");
        return -1;
    }
    return part_begin(u, q ? q : mp->filename) < 0 ? -1 : 0;
}

static int
on_form_data(void *ud, const char *p, size_t n)
{
    upload_t *u = ud;
    if (!u->parsing)
        return 0;
    buf_append(&u->parsing->data, p, n);
    u->held += n;
    return 0;
}

static int
on_form_part_end(void *ud)
{
    upload_t *u = ud;
    if (u->parsing)
        u->parsing->ended = true;
    u->parsing = NULL;
    return 0;
}

static const multipart_cb_t form_cb = {on_form_part, on_form_data, on_form_part_end};

/* ---- the channels ---- */

static void pump(upload_t *u);

static void
on_writable(void *ud)
{
    pump(ud);
}

static void
on_close(void *ud, json_object *res)
{
    upload_t *u = ud;
    u->st = NULL;
    bool was_closing = u->closing;
    u->closing = false;
    if (!request_of(u)) {
        upload_free(u);
        return;
    }
    if (was_closing || u->finished)
        return;
    part_t *p = u->head;
    if (json_get(res, "error")) {
        char m[ENVD_TEXT_MAX];
        int status = envd_files_status(res, p->path, m, sizeof m);
        fail(u, status, "%s", m);
        return;
    }
    if (!u->eof_sent) { /* a hostile or broken executor: nothing would move the upload on */
        fail(u, 500, "the sandbox's executor ended the upload of %s before its end", p->path);
        return;
    }
    json_object *e = json_object_new_object();
    json_set_str(e, "path", p->path);
    json_set_str(e, "name", envd_path_base(p->path));
    json_set_str(e, "type", "file");
    json_object_array_add(u->written, e);
    u->head = p->next;
    u->nparts--;
    if (!u->head)
        u->tail = NULL;
    part_free(p);
    u->eof_sent = false;
    pump(u);
}

static const session_stream_cbs_t stream_cbs = {.on_writable = on_writable};

static int
open_head(upload_t *u)
{
    gw_session_t *s = session_find(u->sid);
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "file.upload");
    json_set_str(op, "path", u->head->path);
    json_set_bool(op, "parents", true);
    json_set_int(op, "max_bytes", (int64_t)g_gw.cfg.upload_max);
    err_t err = {0};
    u->st = s ? session_stream_open(s, op, &stream_cbs, on_close, u, true, &err) : NULL;
    json_object_put(op);
    if (!u->st) {
        fail(u, 502, "%s", s ? err.msg : "the sandbox is not running");
        return -1;
    }
    return 0;
}

/* The head part's bytes to its channel, within its credit. False while it waits for credit or
 * for its close. */
static bool
drain_head(upload_t *u)
{
    part_t *p = u->head;
    if (!u->st && open_head(u) < 0)
        return false;
    while (p->data.len) {
        ssize_t k = session_stream_send(u->st, p->data.data, p->data.len);
        if (k < 0) {
            fail(u, 502, "the sandbox's executor stopped taking the upload of %s", p->path);
            return false;
        }
        if (k == 0)
            return false; /* on_writable goes on */
        metrics_transfer(true, (size_t)k);
        buf_consume(&p->data, (size_t)k);
        u->held -= (size_t)k;
    }
    if (p->ended && !u->eof_sent) {
        u->eof_sent = true;
        if (session_stream_eof(u->st) < 0) {
            fail(u, 502, "the sandbox's executor stopped taking the upload of %s", p->path);
            return false;
        }
    }
    return false; /* its close moves the queue on */
}

/* Decoded body bytes to the parts: -1 once answered. */
static int
feed(upload_t *u, const char *p, size_t n)
{
    if (u->raw) {
        buf_append(&u->tail->data, p, n);
        u->held += n;
        return 0;
    }
    err_t err = {0};
    if (multipart_feed(u->mp, p, n, &err) < 0) {
        if (!u->finished)
            fail(u, 400, "error reading form: %s", err.msg);
        return -1;
    }
    return 0;
}

/* Inflates up to ENVD_UPLOAD_FEED bytes of the gzip body and feeds them: -1 once answered, 0
 * when it made no progress (more input needed), 1 when it did. */
static int
inflate_some(upload_t *u)
{
    if (u->z_end) { /* bytes after the gzip stream: not part of any file */
        buf_clear(&u->in);
        u->z_more = false;
        return 0;
    }
    size_t n = u->in.len < ENVD_UPLOAD_FEED ? u->in.len : ENVD_UPLOAD_FEED;
    u->z.next_in = (Bytef *)u->in.data;
    u->z.avail_in = (uInt)n;
    u->z.next_out = (Bytef *)u->inflated;
    u->z.avail_out = ENVD_UPLOAD_FEED;
    int rc = inflate(&u->z, Z_NO_FLUSH);
    size_t used = n - u->z.avail_in, made = ENVD_UPLOAD_FEED - u->z.avail_out;
    buf_consume(&u->in, used);
    u->z_more = u->z.avail_out == 0; /* it may hold more output */
    if (rc == Z_STREAM_END) {
        u->z_end = true;
        u->z_more = false;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail(u, 400, "error decompressing request body: %s", u->z.msg ? u->z.msg : "not gzip data");
        return -1;
    }
    if (made && feed(u, u->inflated, made) < 0)
        return -1;
    return used || made ? 1 : 0;
}

/* Parses what came, within the queue's bound. */
static void
parse(upload_t *u)
{
    while ((u->in.len || (u->gzip && u->z_more)) && u->held < ENVD_UPLOAD_HOLD &&
           u->nparts < ENVD_UPLOAD_PARTS && !u->finished) {
        if (u->gzip) {
            int rc = inflate_some(u);
            if (rc < 0)
                return;
            if (rc == 0)
                break;
            continue;
        }
        size_t n = u->in.len < ENVD_UPLOAD_FEED ? u->in.len : ENVD_UPLOAD_FEED;
        if (feed(u, u->in.data, n) < 0)
            return;
        buf_consume(&u->in, n);
    }
    if (u->body_ended && !u->in.len && !(u->gzip && u->z_more) && !u->finished && !u->parsed_all) {
        err_t err = {0};
        u->parsed_all = true;
        if (u->gzip && !u->z_end)
            fail(u, 400, "error decompressing request body: unexpected EOF");
        else if (u->raw)
            u->tail->ended = true; /* the one part: not written yet, it was never ended */
        else if (multipart_finish(u->mp, &err) < 0)
            fail(u, 400, "error reading form: %s", err.msg);
    }
}

static void
pump(upload_t *u)
{
    http_req_t *h = request_of(u);
    if (!h || u->finished)
        return;
    parse(u);
    if (u->finished)
        return;
    if (u->head)
        drain_head(u);
    if (u->finished)
        return;
    if (u->parsed_all && !u->head && !u->st) {
        u->finished = true;
        http_answer_json(h, 200, json_object_get(u->written));
        return;
    }
    if (!u->body_ended)
        http_body_flow(h, u->in.len < ENVD_UPLOAD_IN);
}

static void
on_body(void *ud, const void *p, size_t n)
{
    upload_t *u = ud;
    if (u->finished)
        return; /* answered: the rest is dropped */
    u->received += n;
    buf_append(&u->in, p, n);
    pump(u);
}

static void
on_body_end(void *ud)
{
    upload_t *u = ud;
    http_req_t *h = request_of(u);
    if (u->finished || !h)
        return;
    if (h->has_length && u->received < h->content_length) {
        fail(u, 400, "the request body was cut short");
        return;
    }
    u->body_ended = true;
    pump(u);
}

/* Whether h's Content-Type is t (its parameters aside). */
static bool
ctype_is(const http_req_t *h, const char *t)
{
    size_t n = strlen(t);
    return !strncasecmp(h->content_type, t, n) &&
           (!h->content_type[n] || h->content_type[n] == ';' || h->content_type[n] == ' ');
}

bool
envd_files_post_streams(const http_req_t *h)
{
    (void)h;
    return true;
}

void
envd_files_post(http_req_t *h, const char *sid)
{
    gw_session_t *s = envd_files_session(h, sid, "write");
    if (!s)
        return;
    upload_t *u = xcalloc(1, sizeof *u);
    u->req = h->id;
    snprintf(u->sid, sizeof u->sid, "%s", sid);
    u->written = json_object_new_array();
    h->ud = u;
    h->free_ud = on_request_gone;
    char boundary[MULTIPART_BOUNDARY_MAX + 1];
    if (!strcasecmp(h->content_encoding, "gzip")) {
        u->gzip = true;
        u->inflated = xmalloc(ENVD_UPLOAD_FEED);
        if (inflateInit2(&u->z, 16 + MAX_WBITS) != Z_OK) { /* 16: the gzip wrapper */
            fail(u, 500, "no inflater for the gzip body");
            return;
        }
        u->z_open = true;
    } else if (h->content_encoding[0] && strcasecmp(h->content_encoding, "identity") != 0) {
        fail(u, 400, "unsupported Content-Encoding %.40s: send gzip or none", h->content_encoding);
        return;
    }
    if (ctype_is(h, "application/octet-stream")) {
        const char *q = http_arg(h, "path");
        if (!q) {
            fail(u, 400, "path query parameter is required for raw body upload");
            return;
        }
        u->raw = true;
        if (part_begin(u, q) < 0)
            return;
    } else if (!strncasecmp(h->content_type, "multipart/", 10)) {
        if (multipart_boundary(h->content_type, boundary, sizeof boundary) < 0) {
            fail(u, 400, "error parsing multipart form: no usable boundary in %.200s",
                 h->content_type);
            return;
        }
        u->mp = multipart_new(boundary, &form_cb, u);
    } else {
        fail(u, 400,
             "unsupported content type: %.200s, expected multipart/form-data or "
             "application/octet-stream",
             h->content_type);
        return;
    }
    http_body_sink(h, on_body, on_body_end); /* what came so far, then reading resumes */
    if (http_find(u->req) == h && !h->answered)
        pump(u);
}
