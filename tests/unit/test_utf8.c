/* test_utf8.c — common/utf8: the strict incremental check against every code point (encoded
 * by a reference encoder here), the classic malformed forms (overlongs, surrogates, past
 * U+10FFFF, stray and missing continuation bytes), and pieces split at every position giving the
 * same verdict as the whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "utf8.h"

/* Verdict on a whole text: 1 valid, 0 invalid. */
static int
valid(const void *p, size_t n)
{
    utf8_state_t st = {0};
    return utf8_feed(&st, p, n) == 0 && utf8_complete(&st);
}

/* Reference encoder, with no range checks on purpose (it writes surrogates too). */
static size_t
encode(uint32_t cp, uint8_t *out)
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | cp >> 6);
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | cp >> 12);
        out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | cp >> 18);
    out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Reference verdict, the other way round: decode each character by its lead byte's length,
 * then demand that it re-encodes to the same bytes (no overlong) and is a scalar value. */
static int
reference_valid(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        size_t len = c < 0x80                ? 1
                     : c >= 0xC0 && c < 0xE0 ? 2
                     : c >= 0xE0 && c < 0xF0 ? 3
                     : c >= 0xF0 && c < 0xF8 ? 4
                                             : 0;
        if (!len || i + len > n)
            return 0;
        uint32_t cp = len == 1 ? c : (uint32_t)(c & (0x7F >> len));
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (p[i + k] & 0x3F);
        }
        uint8_t again[4];
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || encode(cp, again) != len ||
            memcmp(again, p + i, len))
            return 0;
        i += len;
    }
    return 1;
}

/* Every string of one, two and three bytes gets the reference's verdict. */
static void
test_every_short_string_matches_the_reference(void **state)
{
    (void)state;
    uint8_t b[3];
    for (uint32_t v = 0; v < (1u << 24); v++) {
        b[0] = (uint8_t)(v >> 16);
        b[1] = (uint8_t)(v >> 8);
        b[2] = (uint8_t)v;
        if (valid(b, 3) != reference_valid(b, 3))
            fail_msg("%02X %02X %02X", b[0], b[1], b[2]);
        if (v < (1u << 16) && valid(b + 1, 2) != reference_valid(b + 1, 2))
            fail_msg("%02X %02X", b[1], b[2]);
        if (v < 256 && valid(b + 2, 1) != reference_valid(b + 2, 1))
            fail_msg("%02X", b[2]);
    }
}

static void
test_every_scalar_value_is_accepted_and_every_surrogate_refused(void **state)
{
    (void)state;
    uint8_t b[4];
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        size_t n = encode(cp, b);
        int want = !(cp >= 0xD800 && cp <= 0xDFFF);
        if (valid(b, n) != want)
            fail_msg("U+%04X judged %s", cp, want ? "invalid" : "valid");
    }
}

static void
test_overlong_forms_are_refused(void **state)
{
    (void)state;
    assert_false(valid("\xC0\x80", 2));         /* NUL in two bytes */
    assert_false(valid("\xC1\xBF", 2));         /* U+007F in two bytes */
    assert_false(valid("\xE0\x80\x80", 3));     /* NUL in three */
    assert_false(valid("\xE0\x9F\xBF", 3));     /* U+07FF in three */
    assert_false(valid("\xF0\x80\x80\x80", 4)); /* NUL in four */
    assert_false(valid("\xF0\x8F\xBF\xBF", 4)); /* U+FFFF in four */
    assert_true(valid("\xE0\xA0\x80", 3));      /* U+0800, the smallest three-byte form */
    assert_true(valid("\xF0\x90\x80\x80", 4));  /* U+10000, the smallest four-byte form */
}

static void
test_code_points_past_10ffff_are_refused(void **state)
{
    (void)state;
    assert_true(valid("\xF4\x8F\xBF\xBF", 4));  /* U+10FFFF */
    assert_false(valid("\xF4\x90\x80\x80", 4)); /* U+110000 */
    assert_false(valid("\xF5\x80\x80\x80", 4));
    assert_false(valid("\xF8\x88\x80\x80\x80", 5)); /* old five-byte form */
    assert_false(valid("\xFF", 1));
    assert_false(valid("\xFE", 1));
}

static void
test_stray_and_missing_continuation_bytes_are_refused(void **state)
{
    (void)state;
    assert_false(valid("\x80", 1));
    assert_false(valid("a\xBF", 2));
    assert_false(valid("\xC3", 1));         /* truncated at the end */
    assert_false(valid("\xC3(", 2));        /* interrupted by ASCII */
    assert_false(valid("\xE2\x82", 2));     /* truncated euro sign */
    assert_false(valid("\xE2\x82(", 3));    /* the Autobahn 6.x shape */
    assert_false(valid("\xF0\x9F\x98", 3)); /* truncated emoji */
    assert_false(valid("\xCE\xBA\xE1\xBD\xB9\xCF\x83\xCE\xBC\xCE\xB5\xED\xA0\x80", 14));
    assert_true(valid("\xCE\xBA\xE1\xBD\xB9\xCF\x83\xCE\xBC\xCE\xB5", 11)); /* "κόσμε" */
    assert_true(valid("", 0));
}

/* A text fed in two pieces, cut at every position, gets the verdict of the whole; an invalid
 * byte is reported by the piece that holds it. */
static void
test_pieces_split_anywhere_give_the_verdict_of_the_whole(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t n;
    } texts[] = {
        {"a\xE2\x82\xAC b \xF0\x9F\x98\x80 \xCE\xBA", 15},
        {"\xE2\x82(", 3},
        {"ok\xED\xA0\x80", 5},
        {"\xF4\x90\x80\x80", 4},
        {"x\xF0\x9F\x98", 4},
        {"\xC0\xAF", 2},
        {"\xEF\xBF\xBF", 3},
    };
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        const uint8_t *p = (const uint8_t *)texts[t].s;
        size_t n = texts[t].n;
        int whole = valid(p, n);
        for (size_t cut = 0; cut <= n; cut++) {
            utf8_state_t st = {0};
            int ok = utf8_feed(&st, p, cut) == 0 && utf8_feed(&st, p + cut, n - cut) == 0 &&
                     utf8_complete(&st);
            if (ok != whole)
                fail_msg("text %zu cut at %zu: %d, whole: %d", t, cut, ok, whole);
        }
        /* one byte at a time */
        utf8_state_t st = {0};
        int ok = 1;
        for (size_t i = 0; i < n && ok; i++)
            ok = utf8_feed(&st, p + i, 1) == 0;
        assert_int_equal(ok && utf8_complete(&st), whole);
    }
}

static void
test_a_character_split_is_incomplete_until_its_last_byte(void **state)
{
    (void)state;
    utf8_state_t st = {0};
    assert_int_equal(utf8_feed(&st, (const uint8_t *)"\xF0\x9F", 2), 0);
    assert_false(utf8_complete(&st));
    assert_int_equal(utf8_feed(&st, (const uint8_t *)"\x98", 1), 0);
    assert_false(utf8_complete(&st));
    assert_int_equal(utf8_feed(&st, (const uint8_t *)"\x80", 1), 0);
    assert_true(utf8_complete(&st));
    /* the range owed by a lead byte survives the split: ED then A0 is a surrogate */
    utf8_state_t s2 = {0};
    assert_int_equal(utf8_feed(&s2, (const uint8_t *)"\xED", 1), 0);
    assert_int_equal(utf8_feed(&s2, (const uint8_t *)"\xA0", 1), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_scalar_value_is_accepted_and_every_surrogate_refused),
        cmocka_unit_test(test_every_short_string_matches_the_reference),
        cmocka_unit_test(test_overlong_forms_are_refused),
        cmocka_unit_test(test_code_points_past_10ffff_are_refused),
        cmocka_unit_test(test_stray_and_missing_continuation_bytes_are_refused),
        cmocka_unit_test(test_pieces_split_anywhere_give_the_verdict_of_the_whole),
        cmocka_unit_test(test_a_character_split_is_incomplete_until_its_last_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
