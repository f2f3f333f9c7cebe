/* form.c — multipart/form-data request bodies, streamed (see form.h). The push parser
 * (common/multipart.c) is driven one body chunk at a time; the wanted part's bytes from that
 * chunk wait in pending until api_form_read takes them, so pending never holds more than a
 * chunk plus a delimiter. */
#include "form.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "multipart.h"
#include "xalloc.h"

#define FORM_CHUNK (64u * 1024)

enum { BEFORE, IN_PART, AFTER };

struct api_form {
    api_req_t *r;
    multipart_t *mp;
    const char *field;
    int where; /* BEFORE, IN_PART or AFTER the wanted part */
    char *filename;
    bool has_filename;
    buf_t pending;
    unsigned long long bytes, max;
    int error;
    char *chunk;
};

static int
on_part(void *ud, const multipart_part_t *p)
{
    api_form_t *f = ud;
    if (f->where == BEFORE && !strcmp(p->name, f->field)) {
        f->where = IN_PART;
        f->has_filename = p->filename != NULL;
        f->filename = xstrdup(p->filename ? p->filename : "");
    }
    return 0;
}

static int
on_data(void *ud, const char *p, size_t n)
{
    api_form_t *f = ud;
    if (f->where != IN_PART)
        return 0;
    f->bytes += n;
    if (f->bytes > f->max) {
        f->error = API_FORM_TOO_LARGE;
        return -1;
    }
    buf_append(&f->pending, p, n);
    return 0;
}

static int
on_part_end(void *ud)
{
    api_form_t *f = ud;
    if (f->where == IN_PART)
        f->where = AFTER;
    return 0;
}

static const multipart_cb_t form_cb = {on_part, on_data, on_part_end};

/* Feeds one more chunk of the body to the parser. Returns 1, 0 at the body's end, or an
 * API_FORM_ error (also kept in f->error). */
static int
pump(api_form_t *f)
{
    if (f->error)
        return f->error;
    long k = api_body_read(f->r, f->chunk, FORM_CHUNK);
    if (k < 0)
        return f->error = API_FORM_BROKEN;
    err_t err = {0};
    if (k == 0) {
        if (multipart_finish(f->mp, &err) < 0)
            return f->error = API_FORM_MALFORMED;
        return 0;
    }
    if (multipart_feed(f->mp, f->chunk, (size_t)k, &err) < 0)
        return f->error = f->error ? f->error : API_FORM_MALFORMED;
    return 1;
}

int
api_form_open(api_form_t **out, api_req_t *r, const char *field, unsigned long long max)
{
    *out = NULL;
    char boundary[MULTIPART_BOUNDARY_MAX + 1];
    if (multipart_boundary(api_param(r, "CONTENT_TYPE"), boundary, sizeof boundary) < 0)
        return API_FORM_MISSING;
    api_form_t *f = xcalloc(1, sizeof *f);
    f->r = r;
    f->field = field;
    f->max = max;
    f->chunk = xmalloc(FORM_CHUNK);
    f->mp = multipart_new(boundary, &form_cb, f);
    int rc;
    while (f->where == BEFORE && (rc = pump(f)) > 0)
        ;
    if (f->where == BEFORE) {
        rc = f->error ? f->error : API_FORM_MISSING;
        api_form_free(f);
        return rc;
    }
    *out = f;
    return API_FORM_OK;
}

void
api_form_free(api_form_t *f)
{
    if (!f)
        return;
    multipart_free(f->mp);
    buf_free(&f->pending);
    free(f->filename);
    free(f->chunk);
    free(f);
}

const char *
api_form_filename(const api_form_t *f)
{
    return f->has_filename ? f->filename : NULL;
}

ssize_t
api_form_read(void *ud, char *buf, size_t cap)
{
    api_form_t *f = ud;
    while (f->pending.len == 0 && f->where == IN_PART) {
        int rc = pump(f);
        if (rc <= 0 && f->where == IN_PART) {
            if (rc == 0) /* the body ended inside the part: no closing delimiter */
                f->error = API_FORM_MALFORMED;
            return -1;
        }
    }
    /* An error found after the part's bytes (later parts) does not concern this part. */
    size_t n = f->pending.len < cap ? f->pending.len : cap;
    if (n) {
        memcpy(buf, f->pending.data, n);
        buf_consume(&f->pending, n);
    }
    return (ssize_t)n;
}

int
api_form_error(const api_form_t *f)
{
    return f->error;
}
