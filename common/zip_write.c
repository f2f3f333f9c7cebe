/* zip_write.c — streaming .zip writer (see zip_write.h). Owns one z_stream, reset per entry,
 * and the list of finished entries for the central directory. A sink failure is sticky: every
 * later call returns the same error. */
#include "zip_write.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "utf8.h"
#include "xalloc.h"
#include "zip_format.h"

#define OUT_CHUNK    (64u * 1024)
#define ENTRIES_MAX  0xffffu
#define NAME_LEN_MAX 0xffffu

typedef struct {
    char *name;
    uint16_t flags, method, dos_time, dos_date;
    uint32_t crc, csize, size, offset, ext_attr;
} entry_t;

struct zip_writer {
    zip_sink_fn sink;
    void *ud;
    int level;
    uint64_t offset;
    int failed; /* sticky error code (< 0) once the sink or a limit failed */
    err_t fail_err;
    bool finished;
    bool open;   /* an entry is between begin and end */
    entry_t cur; /* the open entry */
    uint64_t cur_csize, cur_size;
    z_stream zs;
    bool zs_ready;
    unsigned char *out;
    entry_t *entries;
    size_t n, cap;
};

zip_writer_t *
zip_writer_new(zip_sink_fn sink, void *ud, int level)
{
    zip_writer_t *w = xcalloc(1, sizeof *w);
    w->sink = sink;
    w->ud = ud;
    w->level = level < 0 ? 0 : level > 9 ? 9 : level;
    w->out = xmalloc(OUT_CHUNK);
    return w;
}

void
zip_writer_free(zip_writer_t *w)
{
    if (!w)
        return;
    if (w->zs_ready)
        deflateEnd(&w->zs);
    for (size_t i = 0; i < w->n; i++)
        free(w->entries[i].name);
    if (w->open)
        free(w->cur.name);
    free(w->entries);
    free(w->out);
    free(w);
}

uint64_t
zip_writer_offset(const zip_writer_t *w)
{
    return w->offset;
}

/* Records a failure so that every later call reports it too. */
static int
fail(zip_writer_t *w, err_t *err, int code, const char *msg)
{
    w->failed = code < 0 ? code : -code;
    err_set(&w->fail_err, code, "%s", msg);
    return err_set(err, code, "%s", msg);
}

static int
check_failed(zip_writer_t *w, err_t *err)
{
    if (!w->failed)
        return 0;
    if (err)
        *err = w->fail_err;
    return w->failed;
}

static int
emit(zip_writer_t *w, const void *p, size_t n, err_t *err)
{
    if (!n)
        return 0;
    if (w->offset + n > ZIP_U32_MAX)
        return fail(w, err, EFBIG, "zip archive over 4 GiB (zip64 is not supported)");
    int rc = w->sink(w->ud, p, n);
    if (rc < 0)
        return fail(w, err, rc, "zip output failed");
    w->offset += n;
    return 0;
}

static bool
name_ok(const char *name)
{
    size_t len = strlen(name);
    return len > 0 && len <= NAME_LEN_MAX && name[0] != '/';
}

/* The UTF-8 flag (bit 11) says what a name that is not ASCII is. A name that is not UTF-8
 * either (a sandbox's file name is any bytes) goes without it, byte for byte: its reader
 * takes it as CP437, which gives every byte back, rather than as UTF-8, which cannot. */
static bool
name_is_utf8_not_ascii(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] >= 0x80)
            return utf8_valid(name, n);
    return false;
}

int
zip_writer_begin(zip_writer_t *w, const char *name, uint32_t mode, time_t mtime, err_t *err)
{
    int rc = check_failed(w, err);
    if (rc < 0)
        return rc;
    if (w->open || w->finished)
        return err_set(err, EINVAL, "zip entry already open or archive finished");
    if (!name_ok(name))
        return err_set(err, EINVAL, "bad zip entry name");
    if (w->n >= ENTRIES_MAX)
        return fail(w, err, EFBIG, "zip archive over 65535 entries (zip64 is not supported)");
    size_t len = strlen(name);
    bool dir = name[len - 1] == '/';
    entry_t *e = &w->cur;
    memset(e, 0, sizeof *e);
    e->flags = ZIP_FLAG_DESCRIPTOR | (name_is_utf8_not_ascii(name) ? ZIP_FLAG_UTF8 : 0);
    e->method = dir || w->level == 0 ? ZIP_METHOD_STORE : ZIP_METHOD_DEFLATE;
    zip_dos_time(mtime, &e->dos_date, &e->dos_time);
    uint32_t perm = (mode & 07777) ? (mode & 07777) : dir ? 0755 : 0644;
    e->ext_attr = ((uint32_t)(dir ? S_IFDIR : S_IFREG) | perm) << 16 | (dir ? 0x10 : 0);
    e->offset = (uint32_t)w->offset;

    unsigned char h[ZIP_LOCAL_LEN], *p = h;
    p = zip_put32(p, ZIP_SIG_LOCAL);
    p = zip_put16(p, ZIP_VERSION_NEEDED);
    p = zip_put16(p, e->flags);
    p = zip_put16(p, e->method);
    p = zip_put16(p, e->dos_time);
    p = zip_put16(p, e->dos_date);
    p = zip_put32(p, 0); /* crc, sizes: in the data descriptor */
    p = zip_put32(p, 0);
    p = zip_put32(p, 0);
    p = zip_put16(p, (uint16_t)len);
    zip_put16(p, 0); /* extra field length */
    if ((rc = emit(w, h, sizeof h, err)) < 0 || (rc = emit(w, name, len, err)) < 0)
        return rc;

    if (e->method == ZIP_METHOD_DEFLATE) {
        if (!w->zs_ready) {
            if (deflateInit2(&w->zs, w->level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
                Z_OK)
                return fail(w, err, ENOMEM, "deflateInit2 failed");
            w->zs_ready = true;
        } else {
            deflateReset(&w->zs);
        }
    }
    e->name = xstrdup(name);
    e->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    w->cur_csize = w->cur_size = 0;
    w->open = true;
    return 0;
}

/* Runs deflate over the input (flush Z_NO_FLUSH or Z_FINISH) and emits what it produces. */
static int
deflate_emit(zip_writer_t *w, const void *p, size_t n, int flush, err_t *err)
{
    w->zs.next_in = (Bytef *)(uintptr_t)p;
    w->zs.avail_in = (uInt)n;
    for (;;) {
        w->zs.next_out = w->out;
        w->zs.avail_out = OUT_CHUNK;
        int zr = deflate(&w->zs, flush);
        if (zr == Z_STREAM_ERROR)
            return fail(w, err, EIO, "deflate failed");
        size_t got = OUT_CHUNK - w->zs.avail_out;
        w->cur_csize += got;
        int rc = emit(w, w->out, got, err);
        if (rc < 0)
            return rc;
        if (flush == Z_FINISH ? zr == Z_STREAM_END : w->zs.avail_in == 0 && w->zs.avail_out)
            return 0;
    }
}

int
zip_writer_write(zip_writer_t *w, const void *p, size_t n, err_t *err)
{
    int rc = check_failed(w, err);
    if (rc < 0)
        return rc;
    if (!w->open)
        return err_set(err, EINVAL, "no zip entry open");
    if (!n)
        return 0;
    if (w->cur.name[strlen(w->cur.name) - 1] == '/')
        return err_set(err, EINVAL, "a zip directory entry has no data");
    if (w->cur_size + n > ZIP_U32_MAX)
        return fail(w, err, EFBIG, "zip entry over 4 GiB (zip64 is not supported)");
    /* crc32 takes a uInt length: feed it in pieces. */
    for (size_t off = 0; off < n;) {
        size_t k = n - off > (1u << 30) ? (1u << 30) : n - off;
        w->cur.crc = (uint32_t)crc32(w->cur.crc, (const Bytef *)p + off, (uInt)k);
        if (w->cur.method == ZIP_METHOD_DEFLATE)
            rc = deflate_emit(w, (const char *)p + off, k, Z_NO_FLUSH, err);
        else if ((rc = emit(w, (const char *)p + off, k, err)) == 0)
            w->cur_csize += k;
        if (rc < 0)
            return rc;
        off += k;
    }
    w->cur_size += n;
    return 0;
}

int
zip_writer_end(zip_writer_t *w, err_t *err)
{
    int rc = check_failed(w, err);
    if (rc < 0)
        return rc;
    if (!w->open)
        return err_set(err, EINVAL, "no zip entry open");
    if (w->cur.method == ZIP_METHOD_DEFLATE && (rc = deflate_emit(w, "", 0, Z_FINISH, err)) < 0)
        return rc;
    if (w->cur_csize > ZIP_U32_MAX)
        return fail(w, err, EFBIG, "zip entry over 4 GiB (zip64 is not supported)");
    entry_t *e = &w->cur;
    e->csize = (uint32_t)w->cur_csize;
    e->size = (uint32_t)w->cur_size;
    unsigned char d[ZIP_DESC_LEN], *p = d;
    p = zip_put32(p, ZIP_SIG_DESC);
    p = zip_put32(p, e->crc);
    p = zip_put32(p, e->csize);
    zip_put32(p, e->size);
    if ((rc = emit(w, d, sizeof d, err)) < 0)
        return rc;
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 16;
        w->entries = xrealloc(w->entries, w->cap * sizeof *w->entries);
    }
    w->entries[w->n++] = *e;
    w->open = false;
    return 0;
}

static int
emit_central(zip_writer_t *w, const entry_t *e, err_t *err)
{
    size_t len = strlen(e->name);
    unsigned char h[ZIP_CENTRAL_LEN], *p = h;
    p = zip_put32(p, ZIP_SIG_CENTRAL);
    p = zip_put16(p, (ZIP_HOST_UNIX << 8) | ZIP_VERSION_NEEDED);
    p = zip_put16(p, ZIP_VERSION_NEEDED);
    p = zip_put16(p, e->flags);
    p = zip_put16(p, e->method);
    p = zip_put16(p, e->dos_time);
    p = zip_put16(p, e->dos_date);
    p = zip_put32(p, e->crc);
    p = zip_put32(p, e->csize);
    p = zip_put32(p, e->size);
    p = zip_put16(p, (uint16_t)len);
    p = zip_put16(p, 0); /* extra */
    p = zip_put16(p, 0); /* comment */
    p = zip_put16(p, 0); /* disk */
    p = zip_put16(p, 0); /* internal attributes */
    p = zip_put32(p, e->ext_attr);
    zip_put32(p, e->offset);
    int rc = emit(w, h, sizeof h, err);
    return rc < 0 ? rc : emit(w, e->name, len, err);
}

int
zip_writer_finish(zip_writer_t *w, err_t *err)
{
    int rc = check_failed(w, err);
    if (rc < 0)
        return rc;
    if (w->finished)
        return err_set(err, EINVAL, "zip archive already finished");
    if (w->open && (rc = zip_writer_end(w, err)) < 0)
        return rc;
    uint64_t cd_start = w->offset;
    for (size_t i = 0; i < w->n; i++)
        if ((rc = emit_central(w, &w->entries[i], err)) < 0)
            return rc;
    if (w->offset + ZIP_EOCD_LEN > ZIP_U32_MAX)
        return fail(w, err, EFBIG, "zip archive over 4 GiB (zip64 is not supported)");
    unsigned char h[ZIP_EOCD_LEN], *p = h;
    p = zip_put32(p, ZIP_SIG_EOCD);
    p = zip_put16(p, 0); /* this disk */
    p = zip_put16(p, 0); /* disk with the central directory */
    p = zip_put16(p, (uint16_t)w->n);
    p = zip_put16(p, (uint16_t)w->n);
    p = zip_put32(p, (uint32_t)(w->offset - cd_start));
    p = zip_put32(p, (uint32_t)cd_start);
    zip_put16(p, 0); /* comment */
    if ((rc = emit(w, h, sizeof h, err)) < 0)
        return rc;
    w->finished = true;
    return 0;
}
