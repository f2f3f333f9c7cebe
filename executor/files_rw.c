/* files_rw.c — file.read (a line range as UTF-8 text), file.write (replace atomically or append,
 * utf-8 or base64 content) and atomic_file_*, the temp-file-and-rename replacement that keeps
 * an existing file's mode and owner. Part of the files module (files.h); see files.c. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "base64.h"
#include "buf.h"
#include "files_int.h"
#include "json_util.h"
#include "utf8.h"

#define FILES_READ_DEFAULT (1024 * 1024)      /* file.read max_bytes default */
#define FILES_READ_LIMIT   (16 * 1024 * 1024) /* largest max_bytes accepted */

/* ---- read ---- */

/* file.read's text: valid UTF-8 without NUL bytes. */
static bool
utf8_text(const char *s, size_t n)
{
    return n == 0 || (!memchr(s, '\0', n) && utf8_valid(s, n));
}

typedef struct {
    int64_t start, end; /* requested range; end -1 = to the last line */
    size_t max;         /* content limit in bytes */
    buf_t content;
    int64_t line;    /* line number of the next byte */
    size_t line_off; /* where the current line starts in content */
    int64_t last;    /* last line (partly) in content */
    bool full;       /* content complete or cut: only count lines from here on */
    bool truncated;
} line_reader_t;

static void
lines_feed(line_reader_t *r, const char *p, size_t n)
{
    const char *end = p + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t seg = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        bool in_range = r->line >= r->start && (r->end < 0 || r->line <= r->end);
        if (in_range && !r->full) {
            if (r->content.len + seg <= r->max) {
                buf_append(&r->content, p, seg);
                r->last = r->line;
            } else {
                /* Cut at a line boundary; a first line longer than max is cut inside. */
                r->full = r->truncated = true;
                if (r->line_off > 0) {
                    r->content.len = r->line_off;
                    r->last = r->line - 1;
                } else {
                    buf_append(&r->content, p, r->max - r->content.len);
                    r->content.len = utf8_complete_prefix(r->content.data, r->content.len);
                    r->last = r->line;
                }
                r->content.data[r->content.len] = '\0';
            }
        } else if (r->end >= 0 && r->line > r->end) {
            r->full = true;
        }
        if (nl) {
            r->line++;
            r->line_off = r->content.len;
        }
        p += seg;
    }
}

json_object *
files_read(const files_ctx_t *c, json_object *req, err_t *err)
{
    char abs[PATH_MAX];
    int64_t max;
    line_reader_t r = {.content = BUF_INIT, .line = 1};
    if (files_req_check(req, err) < 0 ||
        files_req_path(c, req, "path", PATH_FOLLOW, abs, err) < 0 ||
        files_req_int(req, "start_line", 1, &r.start, err) < 0 ||
        files_req_int(req, "end_line", -1, &r.end, err) < 0 ||
        files_req_int(req, "max_bytes", FILES_READ_DEFAULT, &max, err) < 0)
        return NULL;
    if (r.start < 1 || r.end < -1 || (r.end >= 0 && r.end < r.start)) {
        err_set(err, ERR_BAD_REQ, "bad line range %lld..%lld (1-based, end_line -1 = last line)",
                (long long)r.start, (long long)r.end);
        return NULL;
    }
    if (max < 1 || max > FILES_READ_LIMIT) {
        err_set(err, ERR_BAD_REQ, "\"max_bytes\" must be 1..%d", FILES_READ_LIMIT);
        return NULL;
    }
    r.max = (size_t)max;
    int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        files_sys_err(err, errno, "read", abs);
        goto err;
    }
    if (!S_ISREG(st.st_mode)) {
        err_set(err, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "read %s: not a regular file (%s)", abs,
                files_type_name(st.st_mode));
        goto err;
    }
    char chunk[65536];
    int64_t newlines = 0;
    char last_byte = '\n';
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            files_sys_err(err, errno, "read", abs);
            goto err;
        }
        if (n == 0)
            break;
        for (const char *q = chunk; (q = memchr(q, '\n', (size_t)(chunk + n - q))); q++)
            newlines++;
        last_byte = chunk[n - 1];
        lines_feed(&r, chunk, (size_t)n);
    }
    close(fd);
    fd = -1;
    int64_t total = newlines + (last_byte != '\n');
    if (r.start > total && !(r.start == 1 && total == 0)) {
        err_set(err, EINVAL, "read %s: start_line %lld is past the end of the file (%lld lines)",
                abs, (long long)r.start, (long long)total);
        goto err;
    }
    if (!r.truncated)
        r.last = r.end < 0 || r.end > total ? total : r.end;
    if (!utf8_text(r.content.data, r.content.len)) {
        err_set(err, EINVAL, "read %s: binary file, use file.download", abs);
        goto err;
    }
    json_object *o = json_object_new_object();
    json_set_name(o, "path", abs);
    json_set_strn(o, "content", r.content.data ? r.content.data : "", r.content.len);
    json_set_int(o, "total_lines", total);
    json_set_int(o, "start_line", r.start);
    json_set_int(o, "end_line", r.last);
    json_set_bool(o, "truncated", r.truncated);
    buf_free(&r.content);
    return o;
err:
    if (fd >= 0)
        close(fd);
    buf_free(&r.content);
    return NULL;
}

/* ---- write ---- */

/* Creates the parent directory of abs when parents is set. */
static int
make_parent(const char *abs, bool parents, err_t *err)
{
    char dir[PATH_MAX];
    bool created;
    snprintf(dir, sizeof dir, "%s", abs);
    char *slash = strrchr(dir, '/');
    if (!parents || slash == dir)
        return 0;
    *slash = '\0';
    return files_mkdir_parents(dir, FILES_DIR_MODE, false, &created, err);
}

/* Appends in place: cheap for large files; a failed append is cut back to the old size. */
static int
append_file(const char *abs, const char *p, size_t n, mode_t mode, bool set_mode, off_t *size,
            err_t *err)
{
    struct stat st;
    int rc = 0;
    int fd = open(abs, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode);
    if (fd < 0 || fstat(fd, &st) < 0) {
        rc = files_sys_err(err, errno, "append to", abs);
    } else if ((rc = io_write_all(fd, p, n)) < 0) {
        err_set(err, -rc, "append to %s: %s", abs, strerror(-rc));
        if (ftruncate(fd, st.st_size) < 0) { /* best effort */
        }
    } else if (set_mode && fchmod(fd, mode) < 0) {
        rc = files_sys_err(err, errno, "chmod", abs);
    } else {
        *size = st.st_size + (off_t)n;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

json_object *
files_write(const files_ctx_t *c, json_object *req, err_t *err)
{
    char abs[PATH_MAX];
    const char *content, *encoding;
    size_t len;
    bool append, parents;
    mode_t mode = FILES_FILE_MODE;
    int has_mode;
    buf_t decoded = BUF_INIT;
    off_t size = 0;
    if (files_req_check(req, err) < 0 ||
        files_req_path(c, req, "path", PATH_FOLLOW, abs, err) < 0 ||
        files_req_str(req, "content", &content, &len, err) < 0 ||
        files_req_str(req, "encoding", &encoding, NULL, err) < 0 ||
        files_req_bool(req, "append", false, &append, err) < 0 ||
        files_req_bool(req, "parents", true, &parents, err) < 0 ||
        (has_mode = files_req_mode(req, &mode, err)) < 0)
        return NULL;
    if (!content) {
        err_set(err, ERR_BAD_REQ, "\"content\" is required");
        return NULL;
    }
    if (encoding && !strcmp(encoding, "base64")) {
        size_t n = 0;
        if (base64_decode(content, len, buf_reserve(&decoded, BASE64_DECODED_MAX(len)), &n) < 0) {
            err_set(err, ERR_BAD_REQ, "write %s: \"content\" is not valid base64", abs);
            goto err;
        }
        buf_advance(&decoded, n);
        content = decoded.data ? decoded.data : "";
        len = decoded.len;
    } else if (encoding && strcmp(encoding, "utf-8") && strcmp(encoding, "utf8")) {
        err_set(err, ERR_BAD_REQ, "\"encoding\" must be \"utf-8\" or \"base64\"");
        return NULL;
    }
    struct stat st;
    if (stat(abs, &st) == 0 && !S_ISREG(st.st_mode)) {
        err_set(err, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "write %s: not a regular file (%s)",
                abs, files_type_name(st.st_mode));
        goto err;
    }
    if (make_parent(abs, parents, err) < 0)
        goto err;
    if (append) {
        if (append_file(abs, content, len, mode, has_mode, &size, err) < 0)
            goto err;
    } else {
        atomic_file_t af;
        if (atomic_file_open(&af, abs, mode, err) < 0)
            goto err;
        /* An explicit mode wins over the existing file's, which atomic_file_open kept. */
        if (has_mode && fchmod(af.fd, mode) < 0) {
            files_sys_err(err, errno, "chmod", abs);
            atomic_file_abort(&af);
            goto err;
        }
        if (atomic_file_write(&af, content, len, err) < 0 || atomic_file_commit(&af, err) < 0) {
            atomic_file_abort(&af);
            goto err;
        }
        size = (off_t)len;
    }
    buf_free(&decoded);
    json_object *o = json_object_new_object();
    json_set_name(o, "path", abs);
    json_set_int(o, "size", size);
    return o;
err:
    buf_free(&decoded);
    return NULL;
}

/* ---- atomic replacement ---- */

int
atomic_file_open(atomic_file_t *af, const char *abs_path, mode_t default_mode, err_t *err)
{
    struct stat st;
    mode_t mode = default_mode;
    af->fd = -1;
    af->tmp[0] = '\0';
    const char *slash = strrchr(abs_path, '/');
    int n = snprintf(af->path, sizeof af->path, "%s", abs_path);
    if (!slash || !slash[1])
        return err_set(err, EINVAL, "atomic write %s: not an absolute file path", abs_path);
    /* ".<name>.spXXXXXX" beside the target; long names are shortened to stay under NAME_MAX. */
    int m = snprintf(af->tmp, sizeof af->tmp, "%.*s/.%.200s.spXXXXXX", (int)(slash - abs_path),
                     abs_path, slash + 1);
    if (n < 0 || (size_t)n >= sizeof af->path || m < 0 || (size_t)m >= sizeof af->tmp) {
        af->tmp[0] = '\0';
        return err_set(err, ENAMETOOLONG, "atomic write %s: path too long", abs_path);
    }
    af->fd = mkostemp(af->tmp, O_CLOEXEC);
    if (af->fd < 0) {
        int e = errno;
        af->tmp[0] = '\0';
        if (e == ENOENT)
            return err_set(err, e, "write %s: parent directory does not exist", abs_path);
        return files_sys_err(err, e, "write", abs_path);
    }
    if (stat(abs_path, &st) == 0) {
        mode = st.st_mode & 07777;
        /* Keep the owner where we may (root, or our own group); otherwise the writer owns it. */
        if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
            fchown(af->fd, st.st_uid, st.st_gid) < 0 && fchown(af->fd, (uid_t)-1, st.st_gid) < 0) {
            /* not permitted: keep ours */
        }
    }
    /* After fchown, which may clear set-id bits. mkostemp made it 0600. */
    if (fchmod(af->fd, mode) < 0) {
        int e = errno;
        atomic_file_abort(af);
        return files_sys_err(err, e, "chmod temp file for", abs_path);
    }
    return 0;
}

int
atomic_file_write(atomic_file_t *af, const void *p, size_t n, err_t *err)
{
    struct stat st;
    /* A write by an unprivileged process clears the set-id bits atomic_file_open gave the
     * temp file: put them back, or "mode kept" would not hold for a setuid/setgid file. */
    bool set_id = fstat(af->fd, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID));
    int rc = io_write_all(af->fd, p, n);
    if (rc < 0)
        return err_set(err, -rc, "write %s: %s", af->path, strerror(-rc));
    if (set_id && fchmod(af->fd, st.st_mode & 07777) < 0)
        return files_sys_err(err, errno, "chmod temp file for", af->path);
    return 0;
}

int
atomic_file_commit(atomic_file_t *af, err_t *err)
{
    int fd = af->fd;
    af->fd = -1;
    if (close(fd) < 0) {
        int e = errno;
        atomic_file_abort(af);
        return files_sys_err(err, e, "write", af->path);
    }
    if (rename(af->tmp, af->path) < 0) {
        int e = errno;
        atomic_file_abort(af);
        return files_sys_err(err, e, "rename temp file onto", af->path);
    }
    af->tmp[0] = '\0';
    return 0;
}

void
atomic_file_abort(atomic_file_t *af)
{
    if (af->fd >= 0)
        close(af->fd);
    af->fd = -1;
    if (af->tmp[0])
        unlink(af->tmp);
    af->tmp[0] = '\0';
}
