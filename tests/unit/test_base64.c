/* test_base64.c — common/base64: RFC 4648 vectors, round trips of every byte value into
 * buffers of exactly the advertised size (ASan catches an overrun), and each refusal of the
 * strict decoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"

/* Encodes into a heap buffer of exactly BASE64_ENCODED_LEN(n) bytes plus a NUL we add. */
static char *
encode(const void *p, size_t n)
{
    char *out = malloc(BASE64_ENCODED_LEN(n) + 1);
    assert_non_null(out);
    size_t k = base64_encode(p, n, out);
    assert_int_equal(k, BASE64_ENCODED_LEN(n));
    out[k] = '\0';
    return out;
}

/* Decodes s into a heap buffer of exactly BASE64_DECODED_MAX(strlen(s)) bytes. Returns the
 * decoder's result; *out (caller frees) and *len hold the bytes on success. */
static int
decode(const char *s, size_t n, unsigned char **out, size_t *len)
{
    *out = malloc(BASE64_DECODED_MAX(n) ? BASE64_DECODED_MAX(n) : 1);
    assert_non_null(*out);
    return base64_decode(s, n, *out, len);
}

static void
expect_decodes_to(const char *s, const char *bytes, size_t n)
{
    unsigned char *out;
    size_t len = 12345;
    assert_int_equal(decode(s, strlen(s), &out, &len), 0);
    assert_int_equal(len, n);
    assert_memory_equal(out, bytes, n);
    free(out);
}

static void
expect_refused(const char *s, size_t n)
{
    unsigned char *out;
    size_t len = 12345;
    assert_int_equal(decode(s, n, &out, &len), -EINVAL);
    assert_int_equal(len, 12345); /* untouched */
    free(out);
}

#define REFUSED(s) expect_refused(s, sizeof(s) - 1)

static void
test_encode_matches_rfc4648_vectors(void **state)
{
    (void)state;
    static const char *const vec[][2] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof vec / sizeof *vec; i++) {
        char *e = encode(vec[i][0], strlen(vec[i][0]));
        assert_string_equal(e, vec[i][1]);
        free(e);
        expect_decodes_to(vec[i][1], vec[i][0], strlen(vec[i][0]));
    }
}

static void
test_encode_uses_plus_and_slash_for_high_values(void **state)
{
    (void)state;
    char *e = encode("\xfb\xff\xbf", 3);
    assert_string_equal(e, "+/+/");
    free(e);
    e = encode("\0\1\2\377", 4);
    assert_string_equal(e, "AAEC/w==");
    free(e);
}

static void
test_round_trips_every_byte_value_at_every_length(void **state)
{
    (void)state;
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)(255 - i);
    for (size_t n = 0; n <= sizeof all; n++) {
        char *e = encode(all, n);
        unsigned char *out;
        size_t len = 0;
        assert_int_equal(decode(e, strlen(e), &out, &len), 0);
        assert_int_equal(len, n);
        assert_memory_equal(out, all, n);
        free(out);
        free(e);
    }
}

static void
test_decode_accepts_missing_padding_and_whitespace(void **state)
{
    (void)state;
    expect_decodes_to("Zg", "f", 1);
    expect_decodes_to("Zm8", "fo", 2);
    expect_decodes_to("Zg=", "f", 1); /* padding is optional, so a partial one is too */
    expect_decodes_to("Zm9v\nYmFy\r\n", "foobar", 6);
    expect_decodes_to(" Z g = =\t", "f", 1);
    expect_decodes_to("AAEC/w==\n", "\0\1\2\377", 4);
    expect_decodes_to("", "", 0);
    expect_decodes_to(" \n\t\r", "", 0);
}

static void
test_decode_refuses_characters_outside_the_alphabet(void **state)
{
    (void)state;
    REFUSED("@@@@");
    REFUSED("Zm9v-_");     /* base64url's alphabet is not base64's */
    REFUSED("Zm9v\vYmFy"); /* vertical tab is not skipped */
    REFUSED("Zm\0v");      /* an embedded NUL */
    REFUSED("Zm9v\xc3\xa9");
}

static void
test_decode_refuses_data_after_padding(void **state)
{
    (void)state;
    REFUSED("QQ==QQ");
    REFUSED("Zg=a");
    REFUSED("=Zg");
}

static void
test_decode_refuses_lone_final_character(void **state)
{
    (void)state;
    REFUSED("Q");
    REFUSED("Zm9vY");
    REFUSED("Zm9vY===");
}

static void
test_decode_refuses_nonzero_trailing_bits(void **state)
{
    (void)state;
    REFUSED("Zh=="); /* "f" is Zg==: the last 4 bits of h are 0001 */
    REFUSED("Zm9="); /* "fo" is Zm8=: the last 2 bits of 9 are 01 */
    expect_decodes_to("Zm8", "fo", 2);
}

static void
test_decode_refuses_more_than_two_pads(void **state)
{
    (void)state;
    REFUSED("QQ===");
    REFUSED("Zm9v===");
}

/* Fed in pieces of every split, the stream gives exactly what one encode of the whole gives. */
static void
test_stream_equals_whole_encoding(void **state)
{
    (void)state;
    unsigned char in[64];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 37 + 11);
    for (size_t n = 0; n <= sizeof in; n++) {
        char *want = encode(in, n);
        for (size_t a = 0; a <= n; a++) {
            for (size_t b = a; b <= n; b++) {
                base64_stream_t s = {0};
                char out[BASE64_STREAM_MAX(64) * 3];
                size_t k = base64_stream_feed(&s, in, a, out);
                k += base64_stream_feed(&s, in + a, b - a, out + k);
                k += base64_stream_feed(&s, in + b, n - b, out + k);
                k += base64_stream_end(&s, out + k);
                assert_int_equal(k, BASE64_ENCODED_LEN(n));
                assert_memory_equal(out, want, k);
            }
        }
        free(want);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_matches_rfc4648_vectors),
        cmocka_unit_test(test_encode_uses_plus_and_slash_for_high_values),
        cmocka_unit_test(test_round_trips_every_byte_value_at_every_length),
        cmocka_unit_test(test_decode_accepts_missing_padding_and_whitespace),
        cmocka_unit_test(test_decode_refuses_characters_outside_the_alphabet),
        cmocka_unit_test(test_decode_refuses_data_after_padding),
        cmocka_unit_test(test_decode_refuses_lone_final_character),
        cmocka_unit_test(test_decode_refuses_nonzero_trailing_bits),
        cmocka_unit_test(test_decode_refuses_more_than_two_pads),
        cmocka_unit_test(test_stream_equals_whole_encoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
