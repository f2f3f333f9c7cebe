/* zip_read.h — a .zip reader for archives that arrive from clients: it trusts nothing in them.
 *
 * zip_reader_open reads and checks the whole central directory before any data is touched, so
 * a caller can refuse an archive before extracting anything: unsupported features (encryption,
 * methods other than stored and deflate, zip64, multi-disk), unsafe names (absolute, a ".."
 * component, NUL, invalid UTF-8), entries that overlap (the "overlapping files" zip bomb) and
 * declared sizes over the caller's limits all fail here with a message that names the entry.
 * Reading an entry then inflates it in bounded steps, refuses output beyond its declared size
 * (so the limits hold however the data lies) and checks the CRC at the end.
 *
 * The bytes come from a read_at callback (a spooled file, or memory). One entry is read at a
 * time; entries may be read in any order and more than once. */
#ifndef SP_ZIP_READ_H
#define SP_ZIP_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

/* Reads up to n bytes at offset off into buf. Returns the count (short only at the end of the
 * source) or < 0. */
typedef ssize_t (*zip_read_at_fn)(void *ud, void *buf, size_t n, uint64_t off);

typedef struct {
    size_t max_entries;      /* entries in the central directory */
    uint64_t max_entry_size; /* declared uncompressed size of one entry */
    uint64_t max_total_size; /* sum of the declared uncompressed sizes */
} zip_limits_t;

/* clang-format off */
#define ZIP_LIMITS_DEFAULT {10000, 1ull << 30, 1ull << 30}
/* clang-format on */

typedef struct {
    /* The path to extract to: relative, '/'-separated, UTF-8 (CP437 names converted), without
     * empty or "." components and without the trailing '/' of a directory. "" for a
     * directory entry that names the top itself ("./"). */
    const char *path;
    const char *raw_name; /* the name as stored (NUL-terminated; checked to hold no NUL) */
    bool is_dir;          /* the stored name ends in '/' */
    uint32_t mode;        /* permission bits from a Unix creator for a regular file, else 0 */
    uint16_t method;      /* ZIP_METHOD_STORE or ZIP_METHOD_DEFLATE */
    uint32_t crc;
    uint64_t csize, size; /* compressed and uncompressed sizes (central directory) */
    uint64_t header_off;  /* local header offset in the source */
} zip_entry_t;

typedef struct zip_reader zip_reader_t;

/* Opens an archive of size bytes read through rd. lim NULL means ZIP_LIMITS_DEFAULT. Returns
 * 0 with *out set (free with zip_reader_free), or < 0 with err set: -EINVAL for a malformed or
 * unsafe archive, -ENOTSUP for a feature not supported, -EFBIG past a limit, or the error of
 * rd. */
int zip_reader_open(zip_reader_t **out, zip_read_at_fn rd, void *ud, uint64_t size,
                    const zip_limits_t *lim, err_t *err);
/* The same over an fd (pread; its size from fstat). The fd stays the caller's. */
int zip_reader_open_fd(zip_reader_t **out, int fd, const zip_limits_t *lim, err_t *err);
/* The same over memory, borrowed until zip_reader_free. */
int zip_reader_open_mem(zip_reader_t **out, const void *p, size_t n, const zip_limits_t *lim,
                        err_t *err);
void zip_reader_free(zip_reader_t *z);

size_t zip_reader_count(const zip_reader_t *z);
/* Entry i (in central directory order), borrowed from z. */
const zip_entry_t *zip_reader_entry(const zip_reader_t *z, size_t i);

/* Starts reading entry i (closing any entry being read). Returns 0 or < 0 with err set (bad
 * local header, data outside its bounds). */
int zip_entry_open(zip_reader_t *z, size_t i, err_t *err);
/* Reads the open entry's next bytes into buf[0..cap). Returns the count, 0 once the whole
 * entry was read and its size and CRC checked, or < 0 with err set (-EINVAL: corrupt data,
 * CRC mismatch, more or fewer bytes than declared). -EAGAIN (err untouched) when
 * ZIP_READ_IDLE_MAX compressed bytes inflated to nothing yet (deflate may hold any number of
 * empty blocks): call again to go on; each call's work is bounded so, and a caller on a worker
 * thread can stop in between. */
#define ZIP_READ_IDLE_MAX (4u << 20)
ssize_t zip_entry_read(zip_reader_t *z, void *buf, size_t cap, err_t *err);

#endif
