/* action_server_upload.c — POST /runtime/{id}/upload_file?destination=&recursive=, as upstream
 * 0.62.0 (action_execution_server.py) answers ActionExecutionClient.copy_to.
 *
 * The multipart body is parsed as it arrives (form.h) and its "file" part streamed to the
 * sandbox with api_xfer_upload: never held whole here. A .zip part is spooled to an unlinked
 * temp file (bounded by --max-upload), checked whole by the zip reader (names, sizes, bombs:
 * common/zip_read.h) before anything is written, then unpacked entry by entry, each entry
 * streamed the same way. Error bodies are upstream's {"detail": ...}: its handler turns every
 * exception, its own 400s included, into a 500 whose detail is str(exception) ("400: ..."),
 * and that is what an OpenHands client sees. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "api.h"
#include "form.h"
#include "action_server.h"
#include "xfer.h"
#include "io.h"
#include "xalloc.h"
#include "zip_read.h"
#include "zip_write.h"

#define RT_ZIP_ENTRIES_MAX 10000        /* entries of an uploaded zip */
#define RT_ZIP_EXPAND_MAX  (4ull << 30) /* bytes an uploaded zip may unpack to */
#define SPOOL_CHUNK        (256u * 1024)

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

/* mkdir -p in the sandbox (file.mkdir): 0, or -code with e (as api_gw_call). */
static int
mkdir_p(api_req_t *r, const char *gw, const char *sid, const char *path, api_err_t *e)
{
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "file.mkdir");
    json_set_str(op, "path", path);
    json_set_bool(op, "parents", true);
    json_object *res = rt_call(r, gw, sid, op, e);
    if (!res)
        return -e->code;
    json_object_put(res);
    return 0;
}

/* Reads a zip entry for api_xfer_upload, keeping the reader's error for the reply. */
typedef struct {
    zip_reader_t *z;
    err_t err;
    bool failed;
} entry_src_t;

static ssize_t
entry_read(void *ud, char *buf, size_t cap)
{
    entry_src_t *s = ud;
    ssize_t k = zip_entry_read(s->z, buf, cap, &s->err);
    if (k < 0)
        s->failed = true;
    return k < 0 ? -1 : k;
}

/* Copies the form's part into an unlinked temp file. Returns the fd, or -1 (form error) or
 * -2 (local I/O error, message in why). */
static int
spool(api_form_t *f, char *why, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    char name[512];
    snprintf(name, sizeof name, "%s/sandpipe-upload-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(name);
    if (fd < 0) {
        snprintf(why, cap, "cannot spool the upload: %s", strerror(errno));
        return -2;
    }
    unlink(name);
    char *buf = xmalloc(SPOOL_CHUNK);
    ssize_t k;
    int rc = 0;
    while ((k = api_form_read(f, buf, SPOOL_CHUNK)) > 0) {
        if ((rc = io_write_all(fd, buf, (size_t)k)) < 0) {
            snprintf(why, cap, "cannot spool the upload: %s", strerror(-rc));
            break;
        }
    }
    free(buf);
    if (k < 0 || rc < 0) {
        close(fd);
        return k < 0 ? -1 : -2;
    }
    return fd;
}

/* Replies for a form that failed mid-way (api_form_error). */
static void
form_failure(api_req_t *r, int why)
{
    switch (why) {
    case API_FORM_TOO_LARGE:
        api_failf(r, ERR_TOO_BIG, "File too large: uploads are limited to %llu bytes",
                  g_api.upload_max);
        break;
    case API_FORM_BROKEN: api_failf(r, ERR_BAD_REQ, "The request body was cut short"); break;
    default: api_failf(r, ERR_BAD_REQ, "There was an error parsing the body"); break;
    }
}

/* Unpacks the zip in the form's part into dest. Returns 0, or -1 after replying. */
static int
unpack(api_req_t *r, const char *gw, const char *sid, api_form_t *f, const char *dest)
{
    char why[512] = "";
    int fd = spool(f, why, sizeof why);
    if (fd < 0) {
        if (fd == -1)
            form_failure(r, api_form_error(f));
        else
            api_failf(r, ERR_INTERNAL, "%s", why);
        return -1;
    }
    zip_limits_t lim = {RT_ZIP_ENTRIES_MAX, g_api.upload_max, RT_ZIP_EXPAND_MAX};
    zip_reader_t *z = NULL;
    err_t zerr = {0};
    char d[700], target[RT_PATH_MAX];
    int rc = 0;
    if (zip_reader_open_fd(&z, fd, &lim, &zerr) < 0) {
        snprintf(d, sizeof d, "%s is not a valid zip file: %s", api_form_filename(f), zerr.msg);
        api_failf(r, ERR_INTERNAL, "%s", d);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < zip_reader_count(z); i++) {
        const zip_entry_t *e = zip_reader_entry(z, i);
        if (rt_join(target, sizeof target, dest, e->path) < 0) {
            api_failf(r, ERR_INTERNAL, "zip entry path too long: %.200s", e->path);
            rc = -1;
            break;
        }
        api_err_t err = {0};
        bool ok;
        entry_src_t src = {.z = z};
        if (e->is_dir) {
            ok = mkdir_p(r, gw, sid, target, &err) == 0;
        } else if (zip_entry_open(z, i, &src.err) < 0) {
            src.failed = true;
            ok = false;
        } else {
            json_object *op = json_object_new_object();
            json_set_str(op, "path", target);
            json_set_bool(op, "parents", true);
            json_set_int(op, "max_bytes", (int64_t)(e->size ? e->size : 1));
            if (e->mode) {
                char mode[16];
                snprintf(mode, sizeof mode, "%04o", (unsigned)e->mode);
                json_set_str(op, "mode", mode);
            }
            api_xfer_source_t from = {entry_read, &src};
            json_object *res = api_xfer_upload(r, gw, sid, op, &from, &err);
            json_object_put(op);
            ok = res != NULL;
            json_object_put(res);
        }
        if (src.failed) {
            snprintf(d, sizeof d, "%s is not a valid zip file: %s", api_form_filename(f),
                     src.err.msg);
            api_failf(r, ERR_INTERNAL, "%s", d);
            rc = -1;
        } else if (!ok) {
            rt_gw_failure(r, &err);
            rc = -1;
        }
    }
    zip_reader_free(z);
    close(fd);
    return rc;
}

/* Streams the form's part to path. Returns 0, or -1 after replying. */
static int
upload_one(api_req_t *r, const char *gw, const char *sid, api_form_t *f, const char *path)
{
    json_object *op = json_object_new_object();
    json_set_str(op, "path", path);
    json_set_bool(op, "parents", true);
    json_set_int(op, "max_bytes", (int64_t)g_api.upload_max);
    api_xfer_source_t from = {api_form_read, f};
    api_err_t e;
    json_object *res = api_xfer_upload(r, gw, sid, op, &from, &e);
    json_object_put(op);
    if (res) {
        json_object_put(res);
        return 0;
    }
    if (api_form_error(f))
        form_failure(r, api_form_error(f));
    else
        rt_gw_failure(r, &e);
    return -1;
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* POST ?destination=&recursive=, multipart field "file". The part goes to
 * destination/filename, or, for a .zip (recursive or not, as upstream), is unpacked into
 * destination. A destination must be absolute, as upstream's os.path.isabs check. */
void
api_rt_upload_file(api_req_t *r, char **params)
{
    char gw[128];
    json_object *s = api_rt_session_authed(r, params[0], gw, sizeof gw, true);
    if (!s)
        return;
    json_object_put(s);
    const char *sid = params[0];
    char dest[RT_PATH_MAX], flag[16];
    int k = api_query(r, "destination", dest, sizeof dest);
    if (k == -1)
        strcpy(dest, "/");
    else if (k < 0) {
        rt_invalid(r, "string_type", "query", "destination", "Input should be a valid string");
        return;
    }
    bool recursive = false;
    k = api_query(r, "recursive", flag, sizeof flag);
    if (k == -2 || (k >= 0 && py_bool(flag, &recursive) < 0)) {
        rt_invalid(r, "bool_parsing", "query", "recursive",
                   "Input should be a valid boolean, unable to interpret input");
        return;
    }
    api_form_t *f;
    int fr = api_form_open(&f, r, "file", g_api.upload_max);
    if (fr == API_FORM_MISSING) {
        rt_invalid(r, "missing", "body", "file", "Field required");
        return;
    }
    if (fr < 0) {
        form_failure(r, fr);
        return;
    }
    const char *filename = api_form_filename(f);
    char path[RT_PATH_MAX];
    api_err_t e;
    if (!filename) {
        rt_invalid(r, "value_error", "body", "file",
                   "Expected UploadFile, received: <class 'str'>");
    } else if (dest[0] != '/') {
        /* upstream's HTTPException(400), caught and re-raised as a 500 by its except clause */
        api_failf(r, ERR_INTERNAL, "400: Destination must be an absolute path");
    } else if (mkdir_p(r, gw, sid, dest, &e) < 0) {
        rt_gw_failure(r, &e);
    } else if (ends_with(filename, ".zip")) {
        if (unpack(r, gw, sid, f, dest) < 0)
            goto done;
    } else if (recursive) {
        api_failf(r, ERR_INTERNAL, "400: Recursive uploads must be zip files");
    } else if (rt_join(path, sizeof path, dest, filename) < 0) {
        api_failf(r, ERR_INTERNAL, "File name too long");
    } else if (upload_one(r, gw, sid, f, path) < 0) {
        goto done;
    }
    if (!r->status) {
        json_object *o = json_object_new_object();
        json_set_str(o, "filename", filename);
        json_set_str(o, "destination", dest);
        json_set_bool(o, "recursive", recursive);
        api_reply_json(r, 200, o);
    }
done:
    api_form_free(f);
}
