/* test_zip.c — common/zip_write and zip_read: round trips through our writer and reader, the
 * writer's failure modes, and archives made by Python's zipfile read by us and ours read by
 * Python (python3 is a build dependency). Hostile input: test_zip_hostile.c. */
#include "zip_fixture.h"
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

/* The UTF-8 flag (bit 11 of the local header's flags, at offset 6) only on a name that is
 * UTF-8: a sandbox's name that is not goes as its bytes, which a reader takes as CP437. */
static void
test_utf8_flag_only_on_names_that_are_utf8(void **state)
{
    (void)state;
    static const struct {
        const char *name, *read_as;
        bool flag;
    } cases[] = {
        {"plain.txt", "plain.txt", false},
        {"caf\xc3\xa9.txt", "caf\xc3\xa9.txt", true},
        {"a\xff"
         "b",
         "a\xc2\xa0"
         "b",
         false}, /* CP437 0xFF is U+00A0 */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        buf_t zip = BUF_INIT;
        zip_writer_t *w = zip_writer_new(sink_buf, &zip, 0);
        add_entry(w, cases[k].name, "x", 1);
        err_t err = {0};
        assert_int_equal(zip_writer_finish(w, &err), 0);
        zip_writer_free(w);
        uint16_t flags = (uint16_t)((unsigned char)zip.data[6] | (unsigned char)zip.data[7] << 8);
        assert_int_equal((flags & 0x800) != 0, cases[k].flag);
        assert_memory_equal(zip.data + 30, cases[k].name, strlen(cases[k].name));
        zip_reader_t *z;
        assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), 0);
        assert_string_equal(zip_reader_entry(z, 0)->path, cases[k].read_as);
        zip_reader_free(z);
        buf_free(&zip);
    }
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_deflated),
        cmocka_unit_test(test_round_trip_stored),
        cmocka_unit_test(test_empty_archive_round_trips),
        cmocka_unit_test(test_utf8_flag_only_on_names_that_are_utf8),
        cmocka_unit_test(test_writer_sink_failure_is_sticky),
        cmocka_unit_test(test_writer_refuses_bad_use),
        cmocka_unit_test(test_python_reads_our_zip),
        cmocka_unit_test(test_reads_python_zip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
