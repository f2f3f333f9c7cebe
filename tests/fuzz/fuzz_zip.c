/* fuzz_zip.c — zip_reader over arbitrary bytes, as an uploaded archive arrives. Any archive may
 * be refused; none may crash, leak, yield an unsafe path, or produce more bytes than an entry
 * declares. Entries that read back whole are written again with zip_writer and the copy must
 * read back identical (the writer and reader agree). Seeds in tests/fuzz/corpus/fuzz_zip/ are
 * archives made by Python's zipfile and by our writer, plus damaged ones. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "common/zip_read.h"
#include "common/zip_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const zip_limits_t limits = {256, 1u << 20, 4u << 20};

static int
sink(void *ud, const void *p, size_t n)
{
    buf_append(ud, p, n);
    return 0;
}

static void
check_path(const zip_entry_t *e)
{
    const char *p = e->path;
    if (p[0] == '/' || (!p[0] && !e->is_dir) || strstr(p, "//"))
        __builtin_trap();
    for (const char *c = p; *c;) {
        const char *end = strchrnul(c, '/');
        if ((end - c == 2 && c[0] == '.' && c[1] == '.') || (end - c == 1 && c[0] == '.'))
            __builtin_trap();
        c = *end ? end + 1 : end;
    }
}

/* Reads entry i whole into out. Returns 0 when it read back and checked out. */
static int
read_whole(zip_reader_t *z, size_t i, buf_t *out)
{
    err_t err = {0};
    if (zip_entry_open(z, i, &err) < 0)
        return -1;
    char chunk[4096];
    ssize_t k;
    while ((k = zip_entry_read(z, chunk, sizeof chunk, &err)) > 0 || k == -EAGAIN) {
        if (k < 0)
            continue; /* empty deflate blocks: bounded by the input */
        buf_append(out, chunk, (size_t)k);
        if (out->len > zip_reader_entry(z, i)->size)
            __builtin_trap(); /* more than declared */
    }
    if (k < 0 && !err.msg[0])
        __builtin_trap();
    return k < 0 ? -1 : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zip_reader_t *z;
    err_t err = {0};
    if (zip_reader_open_mem(&z, data, size, &limits, &err) < 0) {
        if (!err.msg[0])
            __builtin_trap();
        return 0;
    }
    buf_t copy = BUF_INIT;
    zip_writer_t *w = zip_writer_new(sink, &copy, 1);
    buf_t *contents = calloc(zip_reader_count(z) + 1, sizeof *contents);
    const char **names = calloc(zip_reader_count(z) + 1, sizeof *names);
    size_t kept = 0;
    for (size_t i = 0; i < zip_reader_count(z); i++) {
        const zip_entry_t *e = zip_reader_entry(z, i);
        check_path(e);
        if (e->is_dir || read_whole(z, i, &contents[kept]) < 0) {
            buf_free(&contents[kept]);
            continue;
        }
        if (contents[kept].len != e->size)
            __builtin_trap();
        if (zip_writer_begin(w, e->path, e->mode, 0, &err) < 0 ||
            zip_writer_write(w, contents[kept].data, contents[kept].len, &err) < 0 ||
            zip_writer_end(w, &err) < 0)
            __builtin_trap();
        names[kept++] = e->path;
    }
    if (zip_writer_finish(w, &err) < 0)
        __builtin_trap();
    zip_reader_t *z2;
    if (zip_reader_open_mem(&z2, copy.data, copy.len, &limits, &err) < 0 ||
        zip_reader_count(z2) != kept)
        __builtin_trap();
    for (size_t i = 0; i < kept; i++) {
        buf_t again = BUF_INIT;
        if (strcmp(zip_reader_entry(z2, i)->path, names[i]) || read_whole(z2, i, &again) < 0 ||
            again.len != contents[i].len ||
            (again.len && memcmp(again.data, contents[i].data, again.len)))
            __builtin_trap();
        buf_free(&again);
        buf_free(&contents[i]);
    }
    zip_reader_free(z2);
    zip_writer_free(w);
    free(contents);
    free(names);
    buf_free(&copy);
    zip_reader_free(z);
    return 0;
}
