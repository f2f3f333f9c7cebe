/* test_json_util.c — common/json_util's UTF-8 rules: json_parse refuses a text that is not UTF-8
 * (strict: overlongs and surrogates too) and says where; json_parse_lossy reads such bytes as
 * U+FFFD; a name that is not UTF-8 goes out as text plus its exact bytes (json_set_name) and
 * comes back from either field (json_get_name); json_valid_text makes a text valid on its way
 * out; json_escape_append escapes as the plain byte-by-byte definition does, at every offset, and
 * json_escape_text_append refuses what is not text in the same pass. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "utf8.h"

static void
test_parse_refuses_a_text_that_is_not_utf8_and_says_where(void **state)
{
    (void)state;
    static const char *const bad[] = {"{\"a\":\"x\xFFy\"}", "{\"a\":\"x\xC0\xAFy\"}",
                                      "{\"a\":\"x\xED\xA0\x80y\"}",
                                      "{\"a\":\"x\xF4\x90\x80\x80y\"}", "{\"a\":\"x\xE2\x82\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err_t err = {0};
        assert_null(json_parse(bad[i], strlen(bad[i]), &err));
        assert_int_equal(err.code, EILSEQ);
        assert_string_equal(err.msg, "not valid UTF-8 (byte 7)");
    }
    /* UTF-8 text parses; an escaped lone surrogate is json-c's U+FFFD, never its bytes */
    err_t err = {0};
    const char *good = "{\"a\":\"\xC3\xA9\xF0\x9F\x98\x80\",\"b\":\"\\udcff\"}";
    json_object *o = json_parse(good, strlen(good), &err);
    assert_non_null(o);
    assert_string_equal(json_get_str(o, "a", ""), "\xC3\xA9\xF0\x9F\x98\x80");
    assert_string_equal(json_get_str(o, "b", ""), "\xEF\xBF\xBD");
    json_object_put(o);
}

static void
test_lossy_parse_reads_bad_bytes_as_replacement_characters(void **state)
{
    (void)state;
    err_t err = {0};
    const char *text = "{\"name\":\"a\xFF"
                       "b\",\"n\":1}";
    json_object *o = json_parse_lossy(text, strlen(text), &err);
    assert_non_null(o);
    assert_string_equal(json_get_str(o, "name", ""), "a\xEF\xBF\xBD"
                                                     "b");
    assert_int_equal(json_get_int(o, "n", 0), 1);
    size_t len;
    const char *out = json_text(o, &len);
    assert_true(utf8_valid(out, len));
    json_object_put(o);
    /* what is not JSON stays refused */
    assert_null(json_parse_lossy("{\xFF}", 3, &err));
    assert_int_equal(err.code, ERR_PROTO);
}

static void
test_a_name_goes_as_text_with_its_exact_bytes_beside_it(void **state)
{
    (void)state;
    json_object *o = json_object_new_object();
    json_set_name(o, "name",
                  "a\xFF"
                  "b");
    json_set_name(o, "path", "/workspace/\xC3\xA9");
    json_set_name(o, "target", NULL);
    assert_string_equal(json_get_str(o, "name", ""), "a\xEF\xBF\xBD"
                                                     "b");
    assert_string_equal(json_get_str(o, "name_b64", ""), "Yf9i");
    assert_string_equal(json_get_str(o, "path", ""), "/workspace/\xC3\xA9");
    assert_null(json_get(o, "path_b64")); /* only a name that is not UTF-8 has it */
    assert_true(json_object_object_get_ex(o, "target", NULL));
    assert_null(json_get(o, "target"));

    char out[16];
    err_t err = {0};
    assert_int_equal(json_get_name(o, "name", out, sizeof out, &err), 3); /* the bytes win */
    assert_memory_equal(out,
                        "a\xFF"
                        "b",
                        4);
    assert_int_equal(json_get_name(o, "path", out, sizeof out, &err), 13);
    assert_string_equal(out, "/workspace/\xC3\xA9");
    assert_int_equal(json_get_name(o, "target", out, sizeof out, &err), -ERR_NOT_FOUND);
    assert_int_equal(json_get_name(o, "absent", out, sizeof out, &err), -ERR_NOT_FOUND);
    json_object_put(o);
}

static void
test_get_name_refuses_what_is_no_name(void **state)
{
    (void)state;
    static const struct {
        const char *json, *msg;
    } cases[] = {
        {"{\"p_b64\":\"%%%\"}", "\"p_b64\" is not base64"},
        {"{\"p_b64\":\"YQBi\"}", "\"p_b64\" contains a NUL byte"}, /* a\0b */
        {"{\"p\":\"a\\u0000b\"}", "\"p\" contains a NUL byte"},
        {"{\"p\":7}", "\"p\" must be a string"},
        {"{\"p_b64\":[]}", "\"p_b64\" must be a string"},
        {"{\"p\":\"0123456789abcdef\"}", "\"p\" is longer than 15 bytes"},
        {"{\"p_b64\":\"MDEyMzQ1Njc4OWFiY2RlZg==\"}", "\"p_b64\" is longer than 15 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        err_t err = {0};
        json_object *o = json_parse(cases[i].json, strlen(cases[i].json), &err);
        assert_non_null(o);
        char out[16];
        assert_int_equal(json_get_name(o, "p", out, sizeof out, &err), -ERR_BAD_REQ);
        assert_string_equal(err.msg, cases[i].msg);
        json_object_put(o);
    }
}

static void
test_valid_text_is_kept_and_the_rest_repaired(void **state)
{
    (void)state;
    char *fixed;
    const char *t = "{\"a\":\"\xC3\xA9\"}";
    size_t len = strlen(t);
    assert_ptr_equal(json_valid_text(t, &len, &fixed), t);
    assert_null(fixed);
    assert_int_equal(len, strlen(t));
    t = "{\"a\":\"\xFE\"}";
    len = strlen(t);
    const char *out = json_valid_text(t, &len, &fixed);
    assert_ptr_equal(out, fixed);
    assert_int_equal(len, 11);
    assert_memory_equal(out, "{\"a\":\"\xEF\xBF\xBD\"}", 11);
    free(fixed);
}

/* The plain definition: byte by byte, as json_escape_append must answer. */
static void
escape_reference(buf_t *b, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        const char *e = c == '"'    ? "\\\""
                        : c == '\\' ? "\\\\"
                        : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t"
                        : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f"
                                    : NULL;
        if (e)
            buf_puts(b, e);
        else if (c < 0x20)
            buf_printf(b, "\\u%04x", c);
        else
            buf_append(b, &c, 1);
    }
}

static void
expect_escapes_as_reference(const unsigned char *s, size_t n, const char *prefix)
{
    buf_t got = BUF_INIT, want = BUF_INIT;
    buf_puts(&got, prefix); /* appends after what the buffer holds */
    buf_puts(&want, prefix);
    json_escape_append(&got, (const char *)s, n);
    escape_reference(&want, s, n);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.data, want.data, want.len);
    buf_free(&got);
    buf_free(&want);
}

static void
test_escape_matches_the_plain_definition_at_every_offset(void **state)
{
    (void)state;
    /* every byte below 0x80 (what the word check looks at) at every position of a 16-byte
     * text of plain letters, so each lane of both 8-byte words meets it */
    unsigned char s[16];
    for (unsigned c = 0; c < 0x80; c++)
        for (size_t at = 0; at < sizeof s; at++) {
            memset(s, 'a', sizeof s);
            s[at] = (unsigned char)c;
            for (size_t n = at + 1; n <= sizeof s; n++)
                expect_escapes_as_reference(s, n, "");
        }
    /* UTF-8 and the bytes around the special ones pass as they are */
    const char *text = "\xC3\xA9t\xC3\xA9 \x1F\x21\x23\x5B\x5D\x7F \xF0\x9F\x98\x80\xE2\x82\xAC";
    expect_escapes_as_reference((const unsigned char *)text, strlen(text), "{\"data\":\"");
}

static void
test_escape_of_long_texts_dense_and_sparse(void **state)
{
    (void)state;
    /* one control character per byte: six bytes out for each, past any first reservation */
    size_t n = 100000;
    unsigned char *s = malloc(n);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = (unsigned char)(i % 32);
    expect_escapes_as_reference(s, n, "x");
    /* lines of text, as streamed output is, and a random mix */
    for (size_t i = 0; i < n; i++)
        s[i] = i % 73 == 72 ? '\n' : (unsigned char)('0' + i % 43);
    expect_escapes_as_reference(s, n, "");
    srand(35);
    for (size_t i = 0; i < n; i++)
        s[i] = (unsigned char)(rand() % 128);
    expect_escapes_as_reference(s, n, "");
    /* and what json-c reads back is the text itself */
    buf_t b = BUF_INIT;
    buf_puts(&b, "{\"t\":\"");
    json_escape_append(&b, (const char *)s, n);
    buf_puts(&b, "\"}");
    err_t err = {0};
    json_object *o = json_parse(b.data, b.len, &err);
    assert_non_null(o);
    json_object *t = json_get(o, "t");
    assert_int_equal(json_object_get_string_len(t), n);
    assert_memory_equal(json_object_get_string(t), s, n);
    json_object_put(o);
    buf_free(&b);
    free(s);
}

/* json_escape_text_append answers as the definition: false (b untouched) for NUL or bytes that
 * are not UTF-8, else json_escape_append's text. */
static void
expect_text_escape_as_definition(const unsigned char *s, size_t n)
{
    bool text = !memchr(s, '\0', n) && utf8_valid(s, n);
    buf_t got = BUF_INIT, want = BUF_INIT;
    buf_puts(&got, "{\"data\":\"");
    buf_puts(&want, "{\"data\":\"");
    assert_int_equal(json_escape_text_append(&got, (const char *)s, n), text);
    if (text)
        escape_reference(&want, s, n);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.data, want.data, want.len + 1); /* its NUL too */
    buf_free(&got);
    buf_free(&want);
}

static void
test_text_escape_checks_utf8_and_nul_in_the_same_pass(void **state)
{
    (void)state;
    /* every byte value, then valid and invalid sequences, at every offset of a 24-byte text,
     * so each meets both 8-byte words and the byte-by-byte tail */
    static const char *const pieces[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                                         "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                         "\xE2\x82", "\xFF",         "\x80",
                                         "\"\\\n"};
    unsigned char s[24];
    for (unsigned c = 0; c < 256; c++)
        for (size_t at = 0; at < sizeof s; at++) {
            memset(s, 'a', sizeof s);
            s[at] = (unsigned char)c;
            expect_text_escape_as_definition(s, sizeof s);
            expect_text_escape_as_definition(s, at + 1);
        }
    for (size_t k = 0; k < sizeof pieces / sizeof *pieces; k++) {
        size_t len = strlen(pieces[k]);
        for (size_t at = 0; at + len <= sizeof s; at++) {
            memset(s, 'b', sizeof s);
            memcpy(s + at, pieces[k], len);
            expect_text_escape_as_definition(s, sizeof s);
            expect_text_escape_as_definition(s, at + len);
            expect_text_escape_as_definition(s, at + len - 1); /* cut inside it */
        }
    }
    /* long: lines of UTF-8 text past the first reservation, and one bad byte at its end */
    size_t n = 100000;
    unsigned char *t = malloc(n);
    assert_non_null(t);
    for (size_t i = 0; i < n; i += 4)
        memcpy(t + i, i % 80 == 76 ? "\t\"\xC3\xA9" : "x\xE2\x82\xAC", 4);
    expect_text_escape_as_definition(t, n);
    t[n - 1] = 0xFF;
    expect_text_escape_as_definition(t, n);
    free(t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_refuses_a_text_that_is_not_utf8_and_says_where),
        cmocka_unit_test(test_lossy_parse_reads_bad_bytes_as_replacement_characters),
        cmocka_unit_test(test_a_name_goes_as_text_with_its_exact_bytes_beside_it),
        cmocka_unit_test(test_get_name_refuses_what_is_no_name),
        cmocka_unit_test(test_valid_text_is_kept_and_the_rest_repaired),
        cmocka_unit_test(test_escape_matches_the_plain_definition_at_every_offset),
        cmocka_unit_test(test_escape_of_long_texts_dense_and_sparse),
        cmocka_unit_test(test_text_escape_checks_utf8_and_nul_in_the_same_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
