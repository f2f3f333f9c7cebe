/* zip_read.c — .zip reader for untrusted archives (see zip_read.h). The central directory is
 * parsed entry by entry through read_at (never loaded whole); entry data goes through a 64 KiB
 * input buffer and, for deflate, one z_stream kept by the reader. */
#include "zip_read.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "xalloc.h"
#include "zip_format.h"
#include "zip_name.h"

#define IN_CHUNK      (64u * 1024)
#define READ_CAP_MAX  (1u << 30)
#define ZIP64_LOC_SIG 0x07064b50u
#define ZIP64_LOC_LEN 20

typedef struct {
    zip_entry_t e;
    uint64_t span_end; /* where the next entry (or the central directory) starts */
    uint16_t name_len;
} entry_t;

struct zip_reader {
    zip_read_at_fn rd;
    void *ud;
    uint64_t size;
    const unsigned char *mem; /* zip_reader_open_mem */
    size_t mem_len;
    int fd; /* zip_reader_open_fd */
    entry_t *entries;
    size_t n;
    /* The entry being read. */
    entry_t *cur;
    uint64_t data_off, cin, uout;
    uint32_t crc;
    bool done;
    z_stream zs;
    bool zs_ready;
    unsigned char *in;
};

/* Reads exactly n bytes at off; a short read means the archive is cut short. */
static int
read_exact(zip_reader_t *z, void *buf, size_t n, uint64_t off, const char *what, err_t *err)
{
    if (off > z->size || n > z->size - off)
        return err_set(err, EINVAL, "zip truncated: %s past the end", what);
    size_t got = 0;
    while (got < n) {
        ssize_t k = z->rd(z->ud, (char *)buf + got, n - got, off + got);
        if (k < 0)
            return err_set(err, (int)k, "zip read failed (%s)", what);
        if (k == 0)
            return err_set(err, EINVAL, "zip truncated: %s past the end", what);
        got += (size_t)k;
    }
    return 0;
}

/* Finds the end of central directory record in the last 64 KiB + 22 bytes. */
static int
find_eocd(zip_reader_t *z, unsigned char rec[ZIP_EOCD_LEN], uint64_t *pos, err_t *err)
{
    if (z->size < ZIP_EOCD_LEN)
        return err_set(err, EINVAL, "not a zip file (too short)");
    size_t tail =
        z->size < ZIP_EOCD_LEN + ZIP_COMMENT_MAX ? (size_t)z->size : ZIP_EOCD_LEN + ZIP_COMMENT_MAX;
    unsigned char *t = xmalloc(tail);
    uint64_t base = z->size - tail;
    int rc = read_exact(z, t, tail, base, "end record", err);
    if (rc < 0) {
        free(t);
        return rc;
    }
    /* The last signature whose comment ends at the end of the file, else the last one whose
     * comment fits (trailing bytes after the comment are tolerated, as Python does). */
    ssize_t best = -1;
    for (ssize_t i = (ssize_t)(tail - ZIP_EOCD_LEN); i >= 0; i--) {
        if (zip_get32(t + i) != ZIP_SIG_EOCD)
            continue;
        size_t end = (size_t)i + ZIP_EOCD_LEN + zip_get16(t + i + 20);
        if (end == tail) {
            best = i;
            break;
        }
        if (end < tail && best < 0)
            best = i;
    }
    if (best >= 0) {
        memcpy(rec, t + best, ZIP_EOCD_LEN);
        *pos = base + (uint64_t)best;
    }
    free(t);
    return best < 0 ? err_set(err, EINVAL, "not a zip file (no end of central directory)") : 0;
}

/* Parses one central directory header at *off into e; advances *off. */
static int
parse_central(zip_reader_t *z, uint64_t *off, uint64_t cd_end, uint64_t shift, entry_t *x,
              err_t *err)
{
    unsigned char h[ZIP_CENTRAL_LEN];
    if (*off + ZIP_CENTRAL_LEN > cd_end)
        return err_set(err, EINVAL, "zip central directory is cut short");
    int rc = read_exact(z, h, sizeof h, *off, "central directory", err);
    if (rc < 0)
        return rc;
    if (zip_get32(h) != ZIP_SIG_CENTRAL)
        return err_set(err, EINVAL, "zip central directory is corrupt (bad signature)");
    uint16_t made_by = zip_get16(h + 4), flags = zip_get16(h + 8), method = zip_get16(h + 10);
    uint32_t crc = zip_get32(h + 16), csize = zip_get32(h + 20), size = zip_get32(h + 24);
    uint16_t nlen = zip_get16(h + 28), elen = zip_get16(h + 30), clen = zip_get16(h + 32);
    uint32_t ext = zip_get32(h + 38), hoff = zip_get32(h + 42);
    uint64_t rec_len = (uint64_t)ZIP_CENTRAL_LEN + nlen + elen + clen;
    if (*off + rec_len > cd_end)
        return err_set(err, EINVAL, "zip central directory is cut short");
    char *raw = xmalloc((size_t)nlen + 1);
    if ((rc = read_exact(z, raw, nlen, *off + ZIP_CENTRAL_LEN, "entry name", err)) < 0) {
        free(raw);
        return rc;
    }
    raw[nlen] = '\0';
    zip_entry_t *e = &x->e;
    e->raw_name = raw;
    x->name_len = nlen;
    char *path = NULL;
    err_t nerr = {0};
    if (zip_name_decode((unsigned char *)raw, nlen, flags & ZIP_FLAG_UTF8, &path, &e->is_dir,
                        &nerr) < 0)
        return err_set(err, EINVAL, "unsafe zip entry name: %s", nerr.msg);
    e->path = path;
    if (flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG_ENC))
        return err_set(err, ENOTSUP, "zip entry '%.200s' is encrypted", path);
    if (csize == ZIP_U32_MAX || size == ZIP_U32_MAX || hoff == ZIP_U32_MAX)
        return err_set(err, ENOTSUP, "zip64 archives are not supported ('%.200s')", path);
    if (method != ZIP_METHOD_STORE && method != ZIP_METHOD_DEFLATE)
        return err_set(err, ENOTSUP, "zip entry '%.200s': compression method %u not supported",
                       path, method);
    if (method == ZIP_METHOD_STORE && csize != size)
        return err_set(err, EINVAL, "zip entry '%.200s': stored sizes differ", path);
    e->method = method;
    e->crc = crc;
    e->csize = csize;
    e->size = size;
    e->header_off = hoff + shift;
    uint32_t mode = ext >> 16;
    if ((made_by >> 8) == ZIP_HOST_UNIX && !e->is_dir && (S_ISREG(mode) || !(mode & S_IFMT)))
        e->mode = mode & 0777;
    *off += rec_len;
    return 0;
}

static int
cmp_offset(const void *a, const void *b)
{
    uint64_t x = (*(entry_t *const *)a)->e.header_off, y = (*(entry_t *const *)b)->e.header_off;
    return x < y ? -1 : x > y;
}

/* Each entry must fit before the next one starts: shared or overlapping data is how the
 * densest zip bombs get their ratio. Records where each entry's bytes must end. */
static int
check_spans(zip_reader_t *z, uint64_t cd_start, err_t *err)
{
    entry_t **order = xmalloc((z->n ? z->n : 1) * sizeof *order);
    for (size_t i = 0; i < z->n; i++)
        order[i] = &z->entries[i];
    qsort(order, z->n, sizeof *order, cmp_offset);
    int rc = 0;
    for (size_t i = 0; i < z->n && rc == 0; i++) {
        entry_t *x = order[i];
        x->span_end = i + 1 < z->n ? order[i + 1]->e.header_off : cd_start;
        uint64_t min_end = x->e.header_off + ZIP_LOCAL_LEN + x->name_len + x->e.csize;
        if (min_end > x->span_end)
            rc = err_set(err, EINVAL,
                         "zip entry '%.200s' overlaps the next entry or the "
                         "central directory (zip bomb?)",
                         x->e.path);
    }
    free(order);
    return rc;
}

int
zip_reader_open(zip_reader_t **out, zip_read_at_fn rd, void *ud, uint64_t size,
                const zip_limits_t *lim, err_t *err)
{
    static const zip_limits_t def = ZIP_LIMITS_DEFAULT;
    if (!lim)
        lim = &def;
    *out = NULL;
    zip_reader_t *z = xcalloc(1, sizeof *z);
    z->rd = rd;
    z->ud = ud;
    z->size = size;
    z->fd = -1;
    unsigned char rec[ZIP_EOCD_LEN] = {0};
    uint64_t eocd = 0;
    int rc = find_eocd(z, rec, &eocd, err);
    if (rc < 0)
        goto fail;
    uint16_t disk = zip_get16(rec + 4), cd_disk = zip_get16(rec + 6);
    uint16_t n_disk = zip_get16(rec + 8), n_total = zip_get16(rec + 10);
    uint32_t cd_size = zip_get32(rec + 12), cd_off = zip_get32(rec + 16);
    unsigned char loc[4];
    if (n_total == 0xffff || cd_size == ZIP_U32_MAX || cd_off == ZIP_U32_MAX ||
        (eocd >= ZIP64_LOC_LEN && read_exact(z, loc, 4, eocd - ZIP64_LOC_LEN, "", NULL) == 0 &&
         zip_get32(loc) == ZIP64_LOC_SIG)) {
        rc = err_set(err, ENOTSUP, "zip64 archives are not supported");
        goto fail;
    }
    if (disk || cd_disk || n_disk != n_total) {
        rc = err_set(err, ENOTSUP, "multi-disk zip archives are not supported");
        goto fail;
    }
    if ((uint64_t)cd_off + cd_size > eocd) {
        rc = err_set(err, EINVAL, "zip central directory lies past its end record");
        goto fail;
    }
    /* Bytes before the archive (a self-extractor stub) shift every offset. */
    uint64_t shift = eocd - cd_off - cd_size, cd_start = cd_off + shift;
    if (n_total > lim->max_entries) {
        rc = err_set(err, EFBIG, "zip has %u entries, more than the limit of %zu", n_total,
                     lim->max_entries);
        goto fail;
    }
    z->entries = xcalloc(n_total ? n_total : 1, sizeof *z->entries);
    uint64_t off = cd_start, total = 0;
    for (; z->n < n_total; z->n++) {
        entry_t *x = &z->entries[z->n];
        if ((rc = parse_central(z, &off, eocd, shift, x, err)) < 0) {
            z->n++; /* its strings are freed with the others */
            goto fail;
        }
        if (x->e.size > lim->max_entry_size) {
            rc = err_set(
                err, EFBIG, "zip entry '%.200s' expands to %llu bytes, over the limit of %llu",
                x->e.path, (unsigned long long)x->e.size, (unsigned long long)lim->max_entry_size);
            z->n++;
            goto fail;
        }
        total += x->e.size;
        if (total > lim->max_total_size) {
            rc = err_set(err, EFBIG, "zip expands to over %llu bytes, the limit",
                         (unsigned long long)lim->max_total_size);
            z->n++;
            goto fail;
        }
    }
    if ((rc = check_spans(z, cd_start, err)) < 0)
        goto fail;
    *out = z;
    return 0;
fail:
    zip_reader_free(z);
    return rc;
}

static ssize_t
read_at_fd(void *ud, void *buf, size_t n, uint64_t off)
{
    zip_reader_t *z = ud;
    for (;;) {
        ssize_t k = pread(z->fd, buf, n, (off_t)off);
        if (k >= 0 || errno != EINTR)
            return k < 0 ? -errno : k;
    }
}

static ssize_t
read_at_mem(void *ud, void *buf, size_t n, uint64_t off)
{
    zip_reader_t *z = ud;
    if (off >= z->mem_len)
        return 0;
    size_t k = z->mem_len - off < n ? (size_t)(z->mem_len - off) : n;
    memcpy(buf, z->mem + off, k);
    return (ssize_t)k;
}

/* Opens through a reader whose read_at callback needs the reader itself as its ud. */
static int
open_self(zip_reader_t **out, zip_read_at_fn rd, int fd, const void *p, size_t n, uint64_t size,
          const zip_limits_t *lim, err_t *err)
{
    /* A throwaway shell carries the source through the parse, then is copied into the result. */
    zip_reader_t shell = {.fd = fd, .mem = p, .mem_len = n};
    int rc = zip_reader_open(out, rd, &shell, size, lim, err);
    if (rc < 0)
        return rc;
    (*out)->fd = fd;
    (*out)->mem = p;
    (*out)->mem_len = n;
    (*out)->ud = *out;
    return 0;
}

int
zip_reader_open_fd(zip_reader_t **out, int fd, const zip_limits_t *lim, err_t *err)
{
    struct stat st;
    *out = NULL;
    if (fstat(fd, &st) < 0)
        return err_set(err, errno, "fstat: %s", strerror(errno));
    return open_self(out, read_at_fd, fd, NULL, 0, (uint64_t)st.st_size, lim, err);
}

int
zip_reader_open_mem(zip_reader_t **out, const void *p, size_t n, const zip_limits_t *lim,
                    err_t *err)
{
    return open_self(out, read_at_mem, -1, p, n, n, lim, err);
}

void
zip_reader_free(zip_reader_t *z)
{
    if (!z)
        return;
    for (size_t i = 0; i < z->n; i++) {
        free((char *)z->entries[i].e.path);
        free((char *)z->entries[i].e.raw_name);
    }
    if (z->zs_ready)
        inflateEnd(&z->zs);
    free(z->entries);
    free(z->in);
    free(z);
}

size_t
zip_reader_count(const zip_reader_t *z)
{
    return z->n;
}

const zip_entry_t *
zip_reader_entry(const zip_reader_t *z, size_t i)
{
    return i < z->n ? &z->entries[i].e : NULL;
}

int
zip_entry_open(zip_reader_t *z, size_t i, err_t *err)
{
    z->cur = NULL;
    if (i >= z->n)
        return err_set(err, EINVAL, "no zip entry %zu", i);
    entry_t *x = &z->entries[i];
    unsigned char h[ZIP_LOCAL_LEN];
    int rc = read_exact(z, h, sizeof h, x->e.header_off, "local header", err);
    if (rc < 0)
        return rc;
    uint16_t nlen = zip_get16(h + 26), elen = zip_get16(h + 28);
    if (zip_get32(h) != ZIP_SIG_LOCAL)
        return err_set(err, EINVAL, "zip entry '%.200s': bad local header", x->e.path);
    if (nlen != x->name_len)
        return err_set(err, EINVAL, "zip entry '%.200s': local name differs", x->e.path);
    char name[256];
    for (uint64_t done = 0; done < nlen;) {
        size_t k = nlen - done < sizeof name ? (size_t)(nlen - done) : sizeof name;
        if ((rc = read_exact(z, name, k, x->e.header_off + ZIP_LOCAL_LEN + done, "local name",
                             err)) < 0)
            return rc;
        if (memcmp(name, x->e.raw_name + done, k))
            return err_set(err, EINVAL, "zip entry '%.200s': local name differs", x->e.path);
        done += k;
    }
    z->data_off = x->e.header_off + ZIP_LOCAL_LEN + nlen + elen;
    if (z->data_off + x->e.csize > x->span_end)
        return err_set(err, EINVAL, "zip entry '%.200s' overlaps the next entry (zip bomb?)",
                       x->e.path);
    if (x->e.method == ZIP_METHOD_DEFLATE) {
        if (!z->zs_ready) {
            if (inflateInit2(&z->zs, -MAX_WBITS) != Z_OK)
                return err_set(err, ENOMEM, "inflateInit2 failed");
            z->zs_ready = true;
        } else {
            inflateReset(&z->zs);
        }
        z->zs.avail_in = 0;
    }
    if (!z->in)
        z->in = xmalloc(IN_CHUNK);
    z->cin = z->uout = 0;
    z->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    z->done = false;
    z->cur = x;
    return 0;
}

/* The checks once the data ended: all of it, and the right CRC. */
static int
finish_entry(zip_reader_t *z, err_t *err)
{
    const zip_entry_t *e = &z->cur->e;
    if (z->uout != e->size)
        return err_set(err, EINVAL, "zip entry '%.200s' is %llu bytes, not the %llu declared",
                       e->path, (unsigned long long)z->uout, (unsigned long long)e->size);
    if (z->crc != e->crc)
        return err_set(err, EINVAL, "zip entry '%.200s': CRC mismatch (corrupt data)", e->path);
    z->done = true;
    return 0;
}

static ssize_t
read_stored(zip_reader_t *z, unsigned char *buf, size_t cap, err_t *err)
{
    uint64_t left = z->cur->e.size - z->uout;
    size_t k = left < cap ? (size_t)left : cap;
    int rc = read_exact(z, buf, k, z->data_off + z->uout, "entry data", err);
    if (rc < 0)
        return rc;
    z->uout += k;
    z->cin += k;
    z->crc = (uint32_t)crc32(z->crc, buf, (uInt)k);
    if (z->uout == z->cur->e.size && (rc = finish_entry(z, err)) < 0)
        return rc;
    return (ssize_t)k;
}

static ssize_t
read_deflated(zip_reader_t *z, unsigned char *buf, size_t cap, err_t *err)
{
    const zip_entry_t *e = &z->cur->e;
    /* One byte of room past the declared size shows an entry that inflates to more. */
    uint64_t room = e->size - z->uout + 1;
    z->zs.next_out = buf;
    z->zs.avail_out = (uInt)(room < cap ? room : cap);
    int zr;
    bool ended = false;
    uint64_t cin0 = z->cin;
    for (;;) {
        if (z->zs.avail_in == 0 && z->cin < e->csize) {
            if (z->cin - cin0 >= ZIP_READ_IDLE_MAX)
                return -EAGAIN; /* all taken so far inflated to nothing: go on next call */
            uint64_t left = e->csize - z->cin;
            size_t k = left < IN_CHUNK ? (size_t)left : IN_CHUNK;
            int rc = read_exact(z, z->in, k, z->data_off + z->cin, "entry data", err);
            if (rc < 0)
                return rc;
            z->cin += k;
            z->zs.next_in = z->in;
            z->zs.avail_in = (uInt)k;
        }
        zr = inflate(&z->zs, Z_NO_FLUSH);
        if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_MEM_ERROR || zr == Z_STREAM_ERROR)
            return err_set(err, EINVAL, "zip entry '%.200s': corrupt deflate data", e->path);
        ended = zr == Z_STREAM_END;
        if (ended || z->zs.next_out != buf)
            break;
        /* All compressed bytes used and no end marker: end here, as Python does; the size and
         * CRC checks still decide. */
        if (zr == Z_BUF_ERROR && z->zs.avail_in == 0 && z->cin >= e->csize) {
            ended = true;
            break;
        }
    }
    size_t got = (size_t)(z->zs.next_out - buf);
    z->uout += got;
    z->crc = (uint32_t)crc32(z->crc, buf, (uInt)got);
    if (z->uout > e->size)
        return err_set(err, EINVAL,
                       "zip entry '%.200s' inflates to more than its declared %llu "
                       "bytes (zip bomb?)",
                       e->path, (unsigned long long)e->size);
    if (ended) {
        int rc = finish_entry(z, err);
        if (rc < 0)
            return rc;
    }
    return (ssize_t)got;
}

ssize_t
zip_entry_read(zip_reader_t *z, void *buf, size_t cap, err_t *err)
{
    if (!z->cur)
        return err_set(err, EINVAL, "no zip entry open");
    if (z->done)
        return 0;
    if (cap == 0)
        return err_set(err, EINVAL, "zip_entry_read needs room");
    if (cap > READ_CAP_MAX)
        cap = READ_CAP_MAX;
    if (z->cur->e.method == ZIP_METHOD_STORE)
        return read_stored(z, buf, cap, err);
    return read_deflated(z, buf, cap, err);
}
