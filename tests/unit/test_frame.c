/* test_frame.c — the frame codec: encode/decode round trips, partial input, every refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "frame.h"

static size_t
build(uint8_t *out, uint8_t type, uint8_t flags, uint32_t ch, const char *payload)
{
    size_t n = strlen(payload);
    frame_encode_header(out, type, flags, ch, (uint32_t)n);
    memcpy(out + FRAME_HEADER_LEN, payload, n);
    return FRAME_HEADER_LEN + n;
}

static void
test_round_trip_keeps_every_field(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = build(b, FRAME_DATA, FRAME_FLAG_STDERR, 0xA1B2C3D4u, "hello");
    frame_t f;
    err_t err = {0};
    assert_int_equal(frame_decode(b, n, FRAME_MAX_PAYLOAD, &f, &err), (int)n);
    assert_int_equal(f.type, FRAME_DATA);
    assert_int_equal(f.flags, FRAME_FLAG_STDERR);
    assert_int_equal(f.channel, 0xA1B2C3D4u);
    assert_int_equal(f.len, 5);
    assert_memory_equal(f.payload, "hello", 5);
}

static void
test_header_is_big_endian_on_the_wire(void **state)
{
    (void)state;
    uint8_t b[FRAME_HEADER_LEN];
    frame_encode_header(b, FRAME_OPEN, 0, 0x01020304u, 0x00000A0Bu);
    const uint8_t want[] = {0, 0, 0x0A, 0x0B, FRAME_OPEN, 0, 0, 0, 1, 2, 3, 4};
    assert_memory_equal(b, want, sizeof want);
}

static void
test_partial_input_asks_for_more_at_every_split(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = build(b, FRAME_JSON, 0, 7, "{\"a\":1}");
    for (size_t k = 0; k < n; k++) {
        frame_t f;
        err_t err = {0};
        assert_int_equal(frame_decode(b, k, FRAME_MAX_PAYLOAD, &f, &err), 0);
    }
}

static void
test_two_frames_back_to_back(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n1 = build(b, FRAME_PING, 0, 0, "x");
    size_t n2 = build(b + n1, FRAME_EOF, 0, 3, "");
    frame_t f;
    err_t err = {0};
    assert_int_equal(frame_decode(b, n1 + n2, FRAME_MAX_PAYLOAD, &f, &err), (int)n1);
    assert_int_equal(frame_decode(b + n1, n2, FRAME_MAX_PAYLOAD, &f, &err), (int)n2);
    assert_int_equal(f.type, FRAME_EOF);
    assert_int_equal(f.len, 0);
}

static void
test_oversized_frame_refused_with_its_length(void **state)
{
    (void)state;
    uint8_t b[FRAME_HEADER_LEN];
    frame_encode_header(b, FRAME_DATA, 0, 1, 2000);
    frame_t f;
    err_t err = {0};
    assert_int_equal(frame_decode(b, sizeof b, 1000, &f, &err), -ERR_TOO_BIG);
    assert_int_equal(f.len, 2000); /* the caller skips it and stays in sync */
    assert_non_null(strstr(err.msg, "2000"));
}

static void
test_unknown_type_and_reserved_bits_refused(void **state)
{
    (void)state;
    uint8_t b[FRAME_HEADER_LEN];
    frame_t f;
    err_t err = {0};
    frame_encode_header(b, 0, 0, 1, 0);
    assert_int_equal(frame_decode(b, sizeof b, FRAME_MAX_PAYLOAD, &f, &err), -ERR_PROTO);
    frame_encode_header(b, FRAME_TYPE_MAX + 1, 0, 1, 0);
    assert_int_equal(frame_decode(b, sizeof b, FRAME_MAX_PAYLOAD, &f, &err), -ERR_PROTO);
    frame_encode_header(b, FRAME_DATA, 0, 1, 0);
    b[7] = 1;
    assert_int_equal(frame_decode(b, sizeof b, FRAME_MAX_PAYLOAD, &f, &err), -ERR_PROTO);
}

static void
test_credit_must_carry_four_bytes(void **state)
{
    (void)state;
    uint8_t b[32];
    frame_t f;
    err_t err = {0};
    size_t n = build(b, FRAME_CREDIT, 0, 1, "abc");
    assert_int_equal(frame_decode(b, n, FRAME_MAX_PAYLOAD, &f, &err), -ERR_PROTO);
    n = build(b, FRAME_CREDIT, 0, 1, "abcd");
    assert_int_equal(frame_decode(b, n, FRAME_MAX_PAYLOAD, &f, &err), (int)n);
    assert_int_equal(frame_get_u32(f.payload), 0x61626364u);
}

static void
test_type_names(void **state)
{
    (void)state;
    assert_string_equal(frame_type_name(FRAME_CLOSE), "CLOSE");
    assert_string_equal(frame_type_name(200), "UNKNOWN");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_keeps_every_field),
        cmocka_unit_test(test_header_is_big_endian_on_the_wire),
        cmocka_unit_test(test_partial_input_asks_for_more_at_every_split),
        cmocka_unit_test(test_two_frames_back_to_back),
        cmocka_unit_test(test_oversized_frame_refused_with_its_length),
        cmocka_unit_test(test_unknown_type_and_reserved_bits_refused),
        cmocka_unit_test(test_credit_must_carry_four_bytes),
        cmocka_unit_test(test_type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
