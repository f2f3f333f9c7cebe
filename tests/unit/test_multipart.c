/* test_multipart.c — common/multipart: bodies as requests, httpx and browsers send them, fed
 * whole, byte by byte and split at every offset (the delimiter straddling chunks); data that
 * looks like a delimiter but is not one; the boundary from Content-Type; malformed bodies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "common/multipart.h"

/* Records the events as text: "[name|filename|type]" per part, its data, then "<end>". */
typedef struct {
    buf_t log;
    int stop_after_parts; /* > 0: on_part fails for that part */
    int parts;
} rec_t;

static int
on_part(void *ud, const multipart_part_t *p)
{
    rec_t *r = ud;
    r->parts++;
    if (r->stop_after_parts && r->parts >= r->stop_after_parts)
        return -1;
    buf_printf(&r->log, "[%s|%s|%s]", p->name, p->filename ? p->filename : "(none)",
               p->content_type);
    return 0;
}

static int
on_data(void *ud, const char *p, size_t n)
{
    rec_t *r = ud;
    assert_true(n > 0);
    buf_append(&r->log, p, n);
    return 0;
}

static int
on_part_end(void *ud)
{
    buf_puts(&((rec_t *)ud)->log, "<end>");
    return 0;
}

static const multipart_cb_t cbs = {on_part, on_data, on_part_end};

/* Parses body in chunks of at most step bytes (0: the whole body at once, or split in two at
 * split when split > 0). Returns the event log (caller frees) or NULL on an error. */
static char *
parse(const char *boundary, const char *body, size_t n, size_t step, size_t split, err_t *err)
{
    rec_t r = {BUF_INIT, 0, 0};
    multipart_t *m = multipart_new(boundary, &cbs, &r);
    int rc = 0;
    if (split) {
        rc = multipart_feed(m, body, split, err);
        if (rc == 0)
            rc = multipart_feed(m, body + split, n - split, err);
    } else {
        size_t s = step ? step : n;
        for (size_t off = 0; off < n && rc == 0; off += s)
            rc = multipart_feed(m, body + off, n - off < s ? n - off : s, err);
    }
    if (rc == 0)
        rc = multipart_finish(m, err);
    multipart_free(m);
    if (rc < 0) {
        buf_free(&r.log);
        return NULL;
    }
    return buf_steal(&r.log);
}

/* The same log whatever the chunking. */
static void
expect_log(const char *boundary, const char *body, size_t n, const char *want)
{
    err_t err = {0};
    char *got = parse(boundary, body, n, 0, 0, &err);
    if (!got)
        fail_msg("parse failed: %s", err.msg);
    assert_string_equal(got, want);
    free(got);
    got = parse(boundary, body, n, 1, 0, &err);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
    for (size_t split = 1; split < n; split++) {
        got = parse(boundary, body, n, 0, split, &err);
        assert_non_null(got);
        assert_string_equal(got, want);
        free(got);
    }
}

#define BODY(s) s, sizeof(s) - 1

static void
test_requests_style_upload(void **state)
{
    (void)state;
    /* What requests/httpx send for files={"file": open(...)} with a field before it. */
    expect_log("b1f8a6c0d3e2",
               BODY("--b1f8a6c0d3e2\r\n"
                    "Content-Disposition: form-data; name=\"note\"\r\n\r\n"
                    "hi\r\n"
                    "--b1f8a6c0d3e2\r\n"
                    "Content-Disposition: form-data; name=\"file\"; "
                    "filename=\"a.txt\"\r\n"
                    "Content-Type: text/plain\r\n\r\n"
                    "line1\r\nline2\n\r\n"
                    "--b1f8a6c0d3e2--\r\n"),
               "[note|(none)|]hi<end>[file|a.txt|text/plain]line1\r\nline2\n<end>");
}

static void
test_data_resembling_the_delimiter_is_kept(void **state)
{
    (void)state;
    /* Partial delimiters, a delimiter without its CRLF, CRs in a row, a prefix that restarts. */
    expect_log("XyZ",
               BODY("--XyZ\r\n"
                    "Content-Disposition: form-data; name=\"file\"; filename=\"d\"\r\n\r\n"
                    "\r\r\n\r\n-\r\n--\r\n--X\r\n--Xy--XyZ\r\r\n--Xy\r\n"
                    "\r\n--XyZ--"),
               "[file|d|]\r\r\n\r\n-\r\n--\r\n--X\r\n--Xy--XyZ\r\r\n--Xy\r\n<end>");
    /* A boundary whose own prefix repeats (KMP fallback past a partial match). */
    expect_log("--a--ab",
               BODY("----a--ab\r\n\r\n"
                    "x\r\n----a--a\r\n----a--a--ab\r\n----a--ab--"),
               "[|(none)|]x\r\n----a--a\r\n----a--a--ab<end>");
}

static void
test_preamble_epilogue_padding_and_empty_parts(void **state)
{
    (void)state;
    expect_log("B",
               BODY("This is the preamble.\r\n--B  \r\n\r\n\r\n--B\r\n"
                    "Content-Disposition: form-data; name=\"x\"\r\n\r\n\r\n"
                    "--B--\r\nepilogue --B\r\n junk"),
               "[|(none)|]<end>[x|(none)|]<end>");
}

static void
test_binary_data_with_every_byte(void **state)
{
    (void)state;
    buf_t body = BUF_INIT, want = BUF_INIT;
    buf_puts(&body, "--bnd\r\nContent-Disposition: form-data; name=\"file\"; "
                    "filename=\"bin\"\r\n\r\n");
    buf_puts(&want, "[file|bin|]");
    for (int rep = 0; rep < 4; rep++)
        for (int c = 0; c < 256; c++) {
            char ch = (char)c;
            buf_append(&body, &ch, 1);
            buf_append(&want, &ch, 1);
        }
    buf_puts(&body, "\r\n--bnd--");
    buf_puts(&want, "<end>");
    err_t err = {0};
    char *got = parse("bnd", body.data, body.len, 3, 0, &err);
    assert_non_null(got);
    assert_memory_equal(got, want.data, want.len);
    free(got);
    got = parse("bnd", body.data, body.len, 4096, 0, &err);
    assert_non_null(got);
    assert_memory_equal(got, want.data, want.len);
    free(got);
    buf_free(&body);
    buf_free(&want);
}

/* Random data over a small alphabet rich in delimiter fragments, fed in random chunks, must
 * come out unchanged (the parser against memmem). */
static void
test_random_data_random_chunks(void **state)
{
    (void)state;
    static const char alphabet[] = "\r\n-ab";
    const char *boundary = "ab-a";
    const char *delim = "\r\n--ab-a";
    uint32_t x = 12345;
    for (int iter = 0; iter < 3000; iter++) {
        char data[300];
        x = x * 1103515245u + 12345u;
        size_t n = (x >> 8) % sizeof data;
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            data[i] = alphabet[(x >> 16) % 5];
        }
        buf_t body = BUF_INIT;
        buf_puts(&body, "--ab-a\r\n\r\n");
        buf_append(&body, data, n);
        buf_puts(&body, "\r\n--ab-a--");
        /* Data holding the delimiter is not a valid body: skip those draws. */
        const char *first = memmem(body.data + 10, body.len - 10, delim, strlen(delim));
        if (first != body.data + body.len - 10) {
            buf_free(&body);
            continue;
        }
        rec_t r = {BUF_INIT, 0, 0};
        multipart_t *m = multipart_new(boundary, &cbs, &r);
        err_t err = {0};
        for (size_t off = 0; off < body.len;) {
            x = x * 1103515245u + 12345u;
            size_t k = 1 + (x >> 12) % 9;
            if (k > body.len - off)
                k = body.len - off;
            assert_int_equal(multipart_feed(m, body.data + off, k, &err), 0);
            off += k;
        }
        assert_int_equal(multipart_finish(m, &err), 0);
        assert_int_equal(r.log.len, strlen("[|(none)|]") + n + strlen("<end>"));
        assert_memory_equal(r.log.data + strlen("[|(none)|]"), data, n);
        multipart_free(m);
        buf_free(&r.log);
        buf_free(&body);
    }
}

static void
test_filename_quoting(void **state)
{
    (void)state;
    expect_log("q",
               BODY("--q\r\ncontent-disposition: form-data; filename=\"a \\\"b\\\" c.zip\";"
                    " name=file\r\n\r\nz\r\n--q--"),
               "[file|a \"b\" c.zip|]z<end>");
    expect_log("q",
               BODY("--q\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\n"
                    "\r\nz\r\n--q--"),
               "[file||]z<end>");
}

static void
test_boundary_from_content_type(void **state)
{
    (void)state;
    char b[MULTIPART_BOUNDARY_MAX + 1];
    assert_int_equal(multipart_boundary("multipart/form-data; boundary=abc123", b, sizeof b), 0);
    assert_string_equal(b, "abc123");
    assert_int_equal(
        multipart_boundary("Multipart/Form-Data;charset=utf-8; BOUNDARY=\"a b;c\"", b, sizeof b),
        0);
    assert_string_equal(b, "a b;c");
    assert_int_equal(
        multipart_boundary("multipart/form-data; boundary=----WebKitFormBoundaryx7", b, sizeof b),
        0);
    assert_string_equal(b, "----WebKitFormBoundaryx7");
    assert_int_equal(multipart_boundary("application/json", b, sizeof b), -1);
    assert_int_equal(multipart_boundary("multipart/form-data", b, sizeof b), -1);
    assert_int_equal(multipart_boundary("multipart/form-data; boundary=", b, sizeof b), -1);
    assert_int_equal(multipart_boundary("multipart/form-data; boundary=\"x", b, sizeof b), -1);
    assert_int_equal(multipart_boundary("multipart/mixed; boundary=x", b, sizeof b), -1);
    assert_int_equal(multipart_boundary(NULL, b, sizeof b), -1);
    char long_ct[400];
    snprintf(long_ct, sizeof long_ct, "multipart/form-data; boundary=%0*d", 250, 7);
    assert_int_equal(multipart_boundary(long_ct, b, sizeof b), -1);
}

static void
expect_malformed(const char *body, size_t n)
{
    err_t err = {0};
    char *got = parse("B", body, n, 0, 0, &err);
    assert_null(got);
    assert_true(err.msg[0]);
}

static void
test_malformed_bodies_refused(void **state)
{
    (void)state;
    expect_malformed(BODY(""));                             /* no delimiter at all */
    expect_malformed(BODY("--B\r\n\r\nunterminated part")); /* no closing delimiter */
    expect_malformed(BODY("--Bx\r\n\r\ndata\r\n--B--"));    /* junk after a delimiter */
    expect_malformed(BODY("--B\r\nno colon here\r\n\r\nx\r\n--B--"));
    expect_malformed(BODY("--B\r\nA: b\n\r\nx\r\n--B--")); /* bare LF in headers */
    expect_malformed(BODY("--B-x"));
    buf_t big = BUF_INIT;
    buf_puts(&big, "--B\r\nX-Long: ");
    for (int i = 0; i < MULTIPART_HEADERS_MAX; i++)
        buf_append(&big, "a", 1);
    buf_puts(&big, "\r\n\r\nx\r\n--B--");
    expect_malformed(big.data, big.len);
    buf_free(&big);
    /* After an error the parser takes nothing more. */
    rec_t r = {BUF_INIT, 0, 0};
    multipart_t *m = multipart_new("B", &cbs, &r);
    err_t err = {0};
    assert_int_equal(multipart_feed(m, BODY("--B?"), &err), -EINVAL);
    assert_int_equal(multipart_feed(m, BODY("\r\n"), &err), -EINVAL);
    multipart_free(m);
    buf_free(&r.log);
}

static void
test_callback_stops_the_parser(void **state)
{
    (void)state;
    rec_t r = {BUF_INIT, 2, 0};
    multipart_t *m = multipart_new("B", &cbs, &r);
    err_t err = {0};
    assert_int_equal(multipart_feed(m, BODY("--B\r\n\r\na\r\n--B\r\n\r\nb\r\n--B--"), &err),
                     -ECANCELED);
    assert_false(multipart_done(m));
    multipart_free(m);
    buf_free(&r.log);
}

static void
test_done_after_closing_delimiter(void **state)
{
    (void)state;
    multipart_t *m = multipart_new("B", NULL, NULL);
    err_t err = {0};
    assert_int_equal(multipart_feed(m, BODY("--B\r\n\r\nabc\r\n--B-"), &err), 0);
    assert_false(multipart_done(m));
    assert_int_equal(multipart_finish(m, &err), -EINVAL);
    assert_int_equal(multipart_feed(m, BODY("-trailing"), &err), 0);
    assert_true(multipart_done(m));
    assert_int_equal(multipart_finish(m, &err), 0);
    multipart_free(m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_style_upload),
        cmocka_unit_test(test_data_resembling_the_delimiter_is_kept),
        cmocka_unit_test(test_preamble_epilogue_padding_and_empty_parts),
        cmocka_unit_test(test_binary_data_with_every_byte),
        cmocka_unit_test(test_random_data_random_chunks),
        cmocka_unit_test(test_filename_quoting),
        cmocka_unit_test(test_boundary_from_content_type),
        cmocka_unit_test(test_malformed_bodies_refused),
        cmocka_unit_test(test_callback_stops_the_parser),
        cmocka_unit_test(test_done_after_closing_delimiter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
