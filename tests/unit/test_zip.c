/* test_zip.c — common/zip_write, zip_read and zip_name: round trips through our writer and
 * reader, archives made by Python's zipfile read by us and ours read by Python (python3 is a
 * build dependency), corrupt and truncated input, unsafe names, zip bombs (declared sizes,
 * data that inflates past its declared size, overlapping entries) and unsupported features. */
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
#include "zip_format.h"
#include "zip_name.h"
#include "zip_read.h"
#include "zip_write.h"

static int
sink_buf(void *ud, const void *p, size_t n)
{
    buf_append(ud, p, n);
    return 0;
}

/* Fills n pseudo-random bytes (xorshift: reproducible, incompressible). */
static void
fill_random(unsigned char *p, size_t n, uint32_t seed)
{
    uint32_t x = seed ? seed : 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (unsigned char)x;
    }
}

static void
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
static int
read_entry(zip_reader_t *z, size_t i, buf_t *out, err_t *err)
{
    int rc = zip_entry_open(z, i, err);
    if (rc < 0)
        return rc;
    char chunk[5000];
    ssize_t k;
    while ((k = zip_entry_read(z, chunk, sizeof chunk, err)) > 0)
        buf_append(out, chunk, (size_t)k);
    return (int)k;
}

static const zip_entry_t *
find(zip_reader_t *z, const char *path, size_t *idx)
{
    for (size_t i = 0; i < zip_reader_count(z); i++)
        if (!strcmp(zip_reader_entry(z, i)->path, path)) {
            *idx = i;
            return zip_reader_entry(z, i);
        }
    return NULL;
}

static void
round_trip(int level)
{
    buf_t zip = BUF_INIT;
    size_t big_n = 3 * 1024 * 1024 + 17;
    unsigned char *big = malloc(big_n);
    fill_random(big, big_n, 7);
    const char *text = "hello\nworld\n";
    zip_writer_t *w = zip_writer_new(sink_buf, &zip, level);
    add_entry(w, "dir/", NULL, 0);
    add_entry(w, "dir/a.txt", text, strlen(text));
    add_entry(w, "empty", "", 0);
    add_entry(w, "bin/big.bin", big, big_n);
    add_entry(w, "caf\xc3\xa9.txt", "x", 1);
    err_t err = {0};
    assert_int_equal(zip_writer_finish(w, &err), 0);
    assert_int_equal(zip_writer_offset(w), zip.len);
    zip_writer_free(w);

    zip_reader_t *z;
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), 0);
    assert_int_equal(zip_reader_count(z), 5);
    size_t i;
    const zip_entry_t *e = find(z, "dir", &i);
    assert_non_null(e);
    assert_true(e->is_dir);
    assert_non_null(e = find(z, "bin/big.bin", &i));
    assert_int_equal(e->size, big_n);
    assert_int_equal(e->method, level ? ZIP_METHOD_DEFLATE : ZIP_METHOD_STORE);
    assert_int_equal(e->mode, 0644);
    buf_t got = BUF_INIT;
    assert_int_equal(read_entry(z, i, &got, &err), 0);
    assert_int_equal(got.len, big_n);
    assert_memory_equal(got.data, big, big_n);
    buf_clear(&got);
    assert_non_null(find(z, "dir/a.txt", &i));
    assert_int_equal(read_entry(z, i, &got, &err), 0);
    assert_string_equal(got.data, text);
    buf_clear(&got);
    assert_non_null(find(z, "empty", &i));
    assert_int_equal(read_entry(z, i, &got, &err), 0);
    assert_int_equal(got.len, 0);
    assert_non_null(find(z, "caf\xc3\xa9.txt", &i));
    /* Entries can be read again, in any order. */
    assert_non_null(find(z, "dir/a.txt", &i));
    assert_int_equal(read_entry(z, i, &got, &err), 0);
    assert_string_equal(got.data, text);
    buf_free(&got);
    zip_reader_free(z);
    buf_free(&zip);
    free(big);
}

static void
test_round_trip_deflated(void **state)
{
    (void)state;
    round_trip(6);
}

static void
test_round_trip_stored(void **state)
{
    (void)state;
    round_trip(0);
}

static void
test_empty_archive_round_trips(void **state)
{
    (void)state;
    buf_t zip = BUF_INIT;
    zip_writer_t *w = zip_writer_new(sink_buf, &zip, 6);
    err_t err = {0};
    assert_int_equal(zip_writer_finish(w, &err), 0);
    zip_writer_free(w);
    assert_int_equal(zip.len, ZIP_EOCD_LEN);
    zip_reader_t *z;
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), 0);
    assert_int_equal(zip_reader_count(z), 0);
    zip_reader_free(z);
    buf_free(&zip);
}

static int
sink_fails_after(void *ud, const void *p, size_t n)
{
    (void)p;
    size_t *left = ud;
    if (n > *left)
        return -EPIPE;
    *left -= n;
    return 0;
}

static void
test_writer_sink_failure_is_sticky(void **state)
{
    (void)state;
    size_t left = 40;
    zip_writer_t *w = zip_writer_new(sink_fails_after, &left, 0);
    err_t err = {0};
    assert_int_equal(zip_writer_begin(w, "a", 0, 0, &err), 0);
    assert_int_equal(zip_writer_write(w, "0123456789", 10, &err), -EPIPE);
    assert_int_equal(zip_writer_end(w, &err), -EPIPE);
    assert_int_equal(zip_writer_finish(w, &err), -EPIPE);
    zip_writer_free(w);
}

static void
test_writer_refuses_bad_use(void **state)
{
    (void)state;
    buf_t zip = BUF_INIT;
    zip_writer_t *w = zip_writer_new(sink_buf, &zip, 6);
    err_t err = {0};
    assert_int_equal(zip_writer_begin(w, "/abs", 0, 0, &err), -EINVAL);
    assert_int_equal(zip_writer_begin(w, "", 0, 0, &err), -EINVAL);
    assert_int_equal(zip_writer_write(w, "x", 1, &err), -EINVAL);
    assert_int_equal(zip_writer_begin(w, "d/", 0, 0, &err), 0);
    assert_int_equal(zip_writer_begin(w, "e", 0, 0, &err), -EINVAL);
    assert_int_equal(zip_writer_write(w, "x", 1, &err), -EINVAL);
    assert_int_equal(zip_writer_finish(w, &err), 0); /* ends the open entry */
    assert_int_equal(zip_writer_begin(w, "f", 0, 0, &err), -EINVAL);
    zip_writer_free(w);
    buf_free(&zip);
}

/* Runs a python3 snippet with argv[1] = path. Returns its exit status. */
static int
run_python(const char *code, const char *path, char *out, size_t cap)
{
    char script[] = "/tmp/test_zip_py.XXXXXX";
    int fd = mkstemp(script);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, code, strlen(code)), (ssize_t)strlen(code));
    close(fd);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "python3 %s %s", script, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    unlink(script);
    return st;
}

static void
load_file(const char *path, buf_t *b)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(b, chunk, n);
    fclose(f);
}

static void
test_python_reads_our_zip(void **state)
{
    (void)state;
    char path[] = "/tmp/test_zip_ours.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    buf_t zip = BUF_INIT;
    unsigned char big[200000];
    fill_random(big, sizeof big, 3);
    zip_writer_t *w = zip_writer_new(sink_buf, &zip, 1);
    add_entry(w, "src/", NULL, 0);
    add_entry(w, "src/main.c", "int main(void) { return 0; }\n", 29);
    add_entry(w, "data.bin", big, sizeof big);
    add_entry(w,
              "\xc3\xbc"
              "ber.txt",
              "u", 1);
    err_t err = {0};
    assert_int_equal(zip_writer_finish(w, &err), 0);
    zip_writer_free(w);
    FILE *f = fopen(path, "wb");
    assert_int_equal(fwrite(zip.data, 1, zip.len, f), zip.len);
    fclose(f);
    char out[4096];
    int st = run_python("import zipfile, sys, zlib\n"
                        "z = zipfile.ZipFile(sys.argv[1])\n"
                        "assert z.testzip() is None\n"
                        "for i in z.infolist():\n"
                        "    print(i.filename, i.file_size, oct(i.external_attr >> 16),\n"
                        "          zlib.crc32(z.read(i)) == i.CRC)\n",
                        path, out, sizeof out);
    assert_int_equal(st, 0);
    assert_string_equal(out, "src/ 0 0o40755 True\n"
                             "src/main.c 29 0o100644 True\n"
                             "data.bin 200000 0o100644 True\n"
                             "\xc3\xbc"
                             "ber.txt 1 0o100644 True\n");
    unlink(path);
    buf_free(&zip);
}

static void
test_reads_python_zip(void **state)
{
    (void)state;
    char path[] = "/tmp/test_zip_py.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char out[256];
    /* As OpenHands' copy_to zips a directory, plus what other tools put in archives. */
    int st =
        run_python("import zipfile, sys, os\n"
                   "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
                   "    z.writestr('proj/a.txt', 'alpha\\n')\n"
                   "    z.writestr('proj/sub/', '')\n"
                   "    z.writestr(zipfile.ZipInfo('proj/sub/run.sh'), '#!/bin/sh\\n')\n"
                   "    z.writestr('proj/sub/deflated.txt', 'x' * 100000,\n"
                   "               compress_type=zipfile.ZIP_DEFLATED)\n"
                   "    z.writestr('proj/\\u00e9t\\u00e9.txt', 'utf8 name')\n"
                   "    i = zipfile.ZipInfo('proj/exec.sh'); i.external_attr = 0o100755 << 16\n"
                   "    z.writestr(i, 'echo hi\\n')\n"
                   "    z.writestr('./proj//dot.txt', 'dots')\n",
                   path, out, sizeof out);
    assert_int_equal(st, 0);
    int zfd = open(path, O_RDONLY);
    assert_true(zfd >= 0);
    zip_reader_t *z;
    err_t err = {0};
    assert_int_equal(zip_reader_open_fd(&z, zfd, NULL, &err), 0);
    assert_int_equal(zip_reader_count(z), 7);
    size_t i;
    buf_t got = BUF_INIT;
    assert_non_null(find(z, "proj/a.txt", &i));
    assert_int_equal(read_entry(z, i, &got, &err), 0);
    assert_string_equal(got.data, "alpha\n");
    assert_true(find(z, "proj/sub", &i)->is_dir);
    const zip_entry_t *e = find(z, "proj/sub/deflated.txt", &i);
    assert_int_equal(e->method, ZIP_METHOD_DEFLATE);
    buf_clear(&got);
    assert_int_equal(read_entry(z, i, &got, &err), 0);
    assert_int_equal(got.len, 100000);
    assert_int_equal(got.data[99999], 'x');
    assert_non_null(find(z, "proj/\xc3\xa9t\xc3\xa9.txt", &i));
    assert_int_equal(find(z, "proj/exec.sh", &i)->mode, 0755);
    assert_non_null(find(z, "proj/dot.txt", &i));
    assert_string_equal(zip_reader_entry(z, i)->raw_name, "./proj//dot.txt");
    buf_free(&got);
    zip_reader_free(z);
    close(zfd);

    /* Names Python refuses to sanitise for us: the reader refuses the archive. */
    st = run_python("import zipfile, sys\n"
                    "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
                    "    z.writestr('ok.txt', 'fine')\n"
                    "    z.writestr('../evil', 'x')\n",
                    path, out, sizeof out);
    assert_int_equal(st, 0);
    buf_t raw = BUF_INIT;
    load_file(path, &raw);
    assert_int_equal(zip_reader_open_mem(&z, raw.data, raw.len, NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'..'"));
    buf_free(&raw);
    /* bzip2 is a method we do not inflate. */
    st = run_python("import zipfile, sys\n"
                    "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_BZIP2) as z:\n"
                    "    z.writestr('b.txt', 'bz' * 100)\n",
                    path, out, sizeof out);
    assert_int_equal(st, 0);
    load_file(path, &raw);
    assert_int_equal(zip_reader_open_mem(&z, raw.data, raw.len, NULL, &err), -ENOTSUP);
    assert_non_null(strstr(err.msg, "method 12"));
    buf_free(&raw);
    unlink(path);
}

/* Offsets in a one-entry archive made by our writer. */
static size_t
central_of(const buf_t *zip)
{
    const unsigned char *eocd = (const unsigned char *)zip->data + zip->len - ZIP_EOCD_LEN;
    return zip_get32(eocd + 16);
}

static buf_t
one_entry_zip(const char *name, size_t n, char fill, int level)
{
    buf_t zip = BUF_INIT;
    char *p = malloc(n ? n : 1);
    memset(p, fill, n);
    zip_writer_t *w = zip_writer_new(sink_buf, &zip, level);
    add_entry(w, name, p, n);
    err_t err = {0};
    assert_int_equal(zip_writer_finish(w, &err), 0);
    zip_writer_free(w);
    free(p);
    return zip;
}

static void
test_corrupt_data_fails_crc_or_inflate(void **state)
{
    (void)state;
    buf_t zip = one_entry_zip("a.txt", 5000, 'q', 0);
    zip.data[ZIP_LOCAL_LEN + 5 + 100] ^= 1; /* a stored byte */
    zip_reader_t *z;
    err_t err = {0};
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), 0);
    buf_t got = BUF_INIT;
    assert_int_equal(read_entry(z, 0, &got, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "CRC"));
    zip_reader_free(z);
    buf_free(&zip);

    zip = one_entry_zip("a.txt", 5000, 'q', 6);
    zip.data[ZIP_LOCAL_LEN + 5] ^= 0xff; /* the deflate block header */
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), 0);
    buf_clear(&got);
    assert_true(read_entry(z, 0, &got, &err) < 0);
    zip_reader_free(z);
    buf_free(&zip);
    buf_free(&got);
}

static void
test_truncated_and_garbage_refused(void **state)
{
    (void)state;
    buf_t zip = one_entry_zip("a.txt", 100, 'q', 6);
    zip_reader_t *z;
    err_t err = {0};
    for (size_t cut = 0; cut < zip.len; cut++) {
        int rc = zip_reader_open_mem(&z, zip.data, cut, NULL, &err);
        if (rc == 0) {
            /* Only a cut inside the end record's comment could leave something parseable. */
            buf_t got = BUF_INIT;
            read_entry(z, 0, &got, &err);
            buf_free(&got);
            zip_reader_free(z);
        } else {
            assert_true(err.msg[0]);
        }
    }
    assert_int_equal(zip_reader_open_mem(&z, "PK\5\6", 4, NULL, &err), -EINVAL);
    assert_int_equal(
        zip_reader_open_mem(&z, "just some text, certainly not a zip archive", 43, NULL, &err),
        -EINVAL);
    assert_non_null(strstr(err.msg, "not a zip file"));
    /* A bad central directory signature. */
    zip.data[central_of(&zip)] = 'X';
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), -EINVAL);
    buf_free(&zip);
}

static void
test_prefixed_archive_is_read(void **state)
{
    (void)state;
    buf_t zip = one_entry_zip("a.txt", 100, 'q', 6);
    buf_t sfx = BUF_INIT;
    buf_puts(&sfx, "#!/bin/sh\necho self-extracting stub\nexit 0\n");
    buf_append(&sfx, zip.data, zip.len);
    zip_reader_t *z;
    err_t err = {0};
    assert_int_equal(zip_reader_open_mem(&z, sfx.data, sfx.len, NULL, &err), 0);
    buf_t got = BUF_INIT;
    assert_int_equal(read_entry(z, 0, &got, &err), 0);
    assert_int_equal(got.len, 100);
    buf_free(&got);
    zip_reader_free(z);
    buf_free(&sfx);
    buf_free(&zip);
}

static void
test_limits_refuse_declared_bombs(void **state)
{
    (void)state;
    buf_t zip = one_entry_zip("zeros", 2 * 1024 * 1024, 0, 9);
    assert_true(zip.len < 10000); /* a 200:1 ratio */
    zip_reader_t *z;
    err_t err = {0};
    zip_limits_t lim = {10, 1024 * 1024, 100ull << 20};
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, &lim, &err), -EFBIG);
    assert_non_null(strstr(err.msg, "'zeros' expands to 2097152 bytes"));
    lim = (zip_limits_t){10, 100ull << 20, 1024 * 1024};
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, &lim, &err), -EFBIG);
    assert_non_null(strstr(err.msg, "limit"));
    lim = (zip_limits_t){0, 100ull << 20, 100ull << 20};
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, &lim, &err), -EFBIG);
    assert_non_null(strstr(err.msg, "entries"));
    buf_free(&zip);
}

/* Declares 1000 bytes where the data inflates to 2 MiB: the reader stops at the declared size. */
static void
test_data_inflating_past_declared_size_refused(void **state)
{
    (void)state;
    buf_t zip = one_entry_zip("zeros", 2 * 1024 * 1024, 0, 9);
    size_t cd = central_of(&zip);
    zip_put32((unsigned char *)zip.data + cd + 24, 1000);
    zip_reader_t *z;
    err_t err = {0};
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), 0);
    buf_t got = BUF_INIT;
    assert_int_equal(read_entry(z, 0, &got, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "more than its declared 1000"));
    assert_true(got.len <= 1000);
    /* And data shorter than declared. */
    zip_put32((unsigned char *)zip.data + cd + 24, 3 * 1024 * 1024);
    zip_reader_free(z);
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), 0);
    buf_clear(&got);
    assert_int_equal(read_entry(z, 0, &got, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "not the 3145728 declared"));
    zip_reader_free(z);
    buf_free(&got);
    buf_free(&zip);
}

/* Two central entries sharing one local entry's data (Fifield's overlapping zip bomb). */
static void
test_overlapping_entries_refused(void **state)
{
    (void)state;
    buf_t zip = one_entry_zip("a", 1000, 0, 9);
    size_t cd = central_of(&zip), cd_len = ZIP_CENTRAL_LEN + 1;
    buf_t bomb = BUF_INIT;
    buf_append(&bomb, zip.data, cd);
    buf_append(&bomb, zip.data + cd, cd_len);
    buf_append(&bomb, zip.data + cd, cd_len);
    bomb.data[bomb.len - 1] = 'b'; /* the copy is named "b" */
    unsigned char eocd[ZIP_EOCD_LEN];
    memcpy(eocd, zip.data + cd + cd_len, ZIP_EOCD_LEN);
    zip_put16(eocd + 8, 2);
    zip_put16(eocd + 10, 2);
    zip_put32(eocd + 12, (uint32_t)(2 * cd_len));
    buf_append(&bomb, eocd, sizeof eocd);
    zip_reader_t *z;
    err_t err = {0};
    assert_int_equal(zip_reader_open_mem(&z, bomb.data, bomb.len, NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "overlaps"));
    buf_free(&bomb);
    buf_free(&zip);
}

static void
test_unsupported_features_refused(void **state)
{
    (void)state;
    buf_t zip = one_entry_zip("a", 10, 'x', 6);
    size_t cd = central_of(&zip);
    zip_reader_t *z;
    err_t err = {0};
    zip.data[cd + 8] |= ZIP_FLAG_ENCRYPTED;
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), -ENOTSUP);
    assert_non_null(strstr(err.msg, "encrypted"));
    zip.data[cd + 8] &= ~ZIP_FLAG_ENCRYPTED;
    zip_put32((unsigned char *)zip.data + cd + 20, ZIP_U32_MAX);
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), -ENOTSUP);
    assert_non_null(strstr(err.msg, "zip64"));
    buf_free(&zip);
}

static void
expect_name(const char *raw, bool utf8, const char *want, bool want_dir)
{
    char *path;
    bool dir = !want_dir;
    err_t err = {0};
    assert_int_equal(
        zip_name_decode((const unsigned char *)raw, strlen(raw), utf8, &path, &dir, &err), 0);
    assert_string_equal(path, want);
    assert_int_equal(dir, want_dir);
    free(path);
}

static void
expect_name_refused(const char *raw, size_t n, bool utf8)
{
    char *path = (char *)1;
    bool dir;
    err_t err = {0};
    assert_int_equal(zip_name_decode((const unsigned char *)raw, n, utf8, &path, &dir, &err),
                     -EINVAL);
    assert_null(path);
    assert_true(err.msg[0]);
}

static void
test_names_normalised_and_traversal_refused(void **state)
{
    (void)state;
    expect_name("a/b.txt", false, "a/b.txt", false);
    expect_name("a/./b//c", false, "a/b/c", false);
    expect_name("dir/", false, "dir", true);
    expect_name("./", false, "", true);
    expect_name("..a/b..", false, "..a/b..", false);
    expect_name("a\\..\\b", false, "a\\..\\b", false); /* a backslash is a name byte here */
    expect_name("\x81"
                "ber",
                false,
                "\xc3\xbc"
                "ber",
                false); /* CP437 */
    expect_name("\xe2\x82\xac", true, "\xe2\x82\xac", false);
    expect_name_refused("../evil", 7, false);
    expect_name_refused("a/../../evil", 12, false);
    expect_name_refused("a/..", 4, false);
    expect_name_refused("..", 2, false);
    expect_name_refused("/etc/passwd", 11, false);
    expect_name_refused("", 0, false);
    expect_name_refused(".", 1, false);
    expect_name_refused("a\0b", 3, false);
    expect_name_refused("\xc3", 1, true);         /* cut short */
    expect_name_refused("\xc0\xaf", 2, true);     /* overlong '/' */
    expect_name_refused("\xed\xa0\x80", 3, true); /* surrogate */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_deflated),
        cmocka_unit_test(test_round_trip_stored),
        cmocka_unit_test(test_empty_archive_round_trips),
        cmocka_unit_test(test_writer_sink_failure_is_sticky),
        cmocka_unit_test(test_writer_refuses_bad_use),
        cmocka_unit_test(test_python_reads_our_zip),
        cmocka_unit_test(test_reads_python_zip),
        cmocka_unit_test(test_corrupt_data_fails_crc_or_inflate),
        cmocka_unit_test(test_truncated_and_garbage_refused),
        cmocka_unit_test(test_prefixed_archive_is_read),
        cmocka_unit_test(test_limits_refuse_declared_bombs),
        cmocka_unit_test(test_data_inflating_past_declared_size_refused),
        cmocka_unit_test(test_overlapping_entries_refused),
        cmocka_unit_test(test_unsupported_features_refused),
        cmocka_unit_test(test_names_normalised_and_traversal_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
