/* zip_fixture.h — what the zip unit tests share (test_zip.c: round trips, the writer, Python
 * interop; test_zip_hostile.c: corrupt, truncated, unsafe and bomb-like input): a buffer sink
 * for the writer, adding one entry, reading one entry back. Header-only (static inline). */
#ifndef SP_TEST_ZIP_FIXTURE_H
#define SP_TEST_ZIP_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "common/zip_format.h"
#include "common/zip_name.h"
#include "common/zip_read.h"
#include "common/zip_write.h"

static inline int
sink_buf(void *ud, const void *p, size_t n)
{
    buf_append(ud, p, n);
    return 0;
}

/* Fills n pseudo-random bytes (xorshift: reproducible, incompressible). */

static inline void
add_entry(zip_writer_t *w, const char *name, const void *p, size_t n)
{
    err_t err = {0};
    uint32_t mode = name[strlen(name) - 1] == '/' ? 0755 : 0644;
    assert_int_equal(zip_writer_begin(w, name, mode, 1700000000, &err), 0);
    /* In uneven pieces, as a download arrives. */
    for (size_t off = 0; off < n;) {
        size_t k = n - off < 7777 ? n - off : 7777;
        assert_int_equal(zip_writer_write(w, (const char *)p + off, k, &err), 0);
        off += k;
    }
    assert_int_equal(zip_writer_end(w, &err), 0);
}

/* Reads entry i whole into out; returns zip_entry_read's last result (0 or < 0). */

static inline int
read_entry(zip_reader_t *z, size_t i, buf_t *out, err_t *err)
{
    int rc = zip_entry_open(z, i, err);
    if (rc < 0)
        return rc;
    char chunk[5000];
    ssize_t k;
    while ((k = zip_entry_read(z, chunk, sizeof chunk, err)) > 0 || k == -EAGAIN)
        if (k > 0)
            buf_append(out, chunk, (size_t)k);
    return (int)k;
}

#endif
