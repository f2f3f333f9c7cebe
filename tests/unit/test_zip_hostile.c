/* test_zip_hostile.c — common/zip_read and zip_name against hostile input: corrupt and truncated
 * archives, unsafe names, zip bombs (declared sizes, data that inflates past its declared size,
 * overlapping entries) and unsupported features, each refused with a clear error. */
#include "zip_fixture.h"

#include <zlib.h>

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

/* One deflated entry "e" of payload[0..n) whose data opens with `empty` bytes of empty fixed
 * deflate blocks (10 bits each: valid deflate that inflates to nothing). */
static buf_t
empty_blocks_zip(size_t empty, const char *payload, size_t n)
{
    static const unsigned char four[5] = {0x02, 0x08, 0x20, 0x80, 0x00}; /* four empty blocks */
    buf_t data = BUF_INIT, zip = BUF_INIT;
    for (size_t i = 0; i + 5 <= empty; i += 5)
        buf_append(&data, four, 5);
    z_stream zs = {0};
    assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    char *out = buf_reserve(&data, deflateBound(&zs, n));
    zs.next_in = (unsigned char *)payload;
    zs.avail_in = (uInt)n;
    zs.next_out = (unsigned char *)out;
    zs.avail_out = (uInt)deflateBound(&zs, n);
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    buf_advance(&data, zs.total_out);
    deflateEnd(&zs);
    uint32_t crc = (uint32_t)crc32(0, (const unsigned char *)payload, (uInt)n);
    unsigned char h[ZIP_CENTRAL_LEN] = {0}, *q;
    q = zip_put32(h, ZIP_SIG_LOCAL);
    q = zip_put16(q, ZIP_VERSION_NEEDED);
    q = zip_put16(zip_put16(q, 0), ZIP_METHOD_DEFLATE);
    q = zip_put32(zip_put32(q, 0), crc);
    q = zip_put32(zip_put32(q, (uint32_t)data.len), (uint32_t)n);
    zip_put16(zip_put16(q, 1), 0);
    buf_append(&zip, h, ZIP_LOCAL_LEN);
    buf_append(&zip, "e", 1);
    buf_append(&zip, data.data, data.len);
    size_t cd = zip.len;
    memset(h, 0, sizeof h);
    q = zip_put32(h, ZIP_SIG_CENTRAL);
    q = zip_put16(zip_put16(q, ZIP_VERSION_NEEDED), ZIP_VERSION_NEEDED);
    q = zip_put16(zip_put16(q, 0), ZIP_METHOD_DEFLATE);
    q = zip_put32(zip_put32(q, 0), crc);
    q = zip_put32(zip_put32(q, (uint32_t)data.len), (uint32_t)n);
    zip_put16(q, 1); /* name length; extra, comment, disk, attributes, offset: 0 */
    buf_append(&zip, h, ZIP_CENTRAL_LEN);
    buf_append(&zip, "e", 1);
    unsigned char end[ZIP_EOCD_LEN] = {0};
    q = zip_put32(end, ZIP_SIG_EOCD);
    q = zip_put16(zip_put16(zip_put16(zip_put16(q, 0), 0), 1), 1);
    zip_put32(zip_put32(q, ZIP_CENTRAL_LEN + 1), (uint32_t)cd);
    buf_append(&zip, end, sizeof end);
    buf_free(&data);
    return zip;
}

/* A long run of empty deflate blocks is read in bounded calls (-EAGAIN between them), then the
 * data after it comes whole and checked. */
static void
test_empty_deflate_blocks_read_in_bounded_calls(void **state)
{
    (void)state;
    const char payload[] = "after the empty blocks\n";
    buf_t zip = empty_blocks_zip(3 * ZIP_READ_IDLE_MAX, payload, sizeof payload - 1);
    zip_reader_t *z;
    err_t err = {0};
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), 0);
    assert_int_equal(zip_entry_open(z, 0, &err), 0);
    char chunk[4096];
    ssize_t k;
    int again = 0;
    while ((k = zip_entry_read(z, chunk, sizeof chunk, &err)) == -EAGAIN && again < 100)
        again++;
    assert_true(again >= 2 && again <= 3);
    buf_t got = BUF_INIT;
    for (int i = 0; k > 0 && i < 100; i++) { /* the data, in as many pieces as it comes */
        buf_append(&got, chunk, (size_t)k);
        k = zip_entry_read(z, chunk, sizeof chunk, &err);
    }
    assert_int_equal(k, 0);
    assert_int_equal(got.len, sizeof payload - 1);
    assert_memory_equal(got.data, payload, sizeof payload - 1);
    zip_reader_free(z);
    buf_clear(&got);
    /* read_entry goes on through them as a caller does */
    assert_int_equal(zip_reader_open_mem(&z, zip.data, zip.len, NULL, &err), 0);
    assert_int_equal(read_entry(z, 0, &got, &err), 0);
    assert_int_equal(got.len, sizeof payload - 1);
    zip_reader_free(z);
    buf_free(&got);
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
        cmocka_unit_test(test_corrupt_data_fails_crc_or_inflate),
        cmocka_unit_test(test_truncated_and_garbage_refused),
        cmocka_unit_test(test_prefixed_archive_is_read),
        cmocka_unit_test(test_limits_refuse_declared_bombs),
        cmocka_unit_test(test_data_inflating_past_declared_size_refused),
        cmocka_unit_test(test_overlapping_entries_refused),
        cmocka_unit_test(test_empty_deflate_blocks_read_in_bounded_calls),
        cmocka_unit_test(test_unsupported_features_refused),
        cmocka_unit_test(test_names_normalised_and_traversal_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
