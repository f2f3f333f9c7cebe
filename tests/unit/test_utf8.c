/* test_utf8.c — common/utf8: the strict check (piecewise and whole, which must always agree)
 * against every code point (encoded by a reference encoder here) and every string of up to three
 * bytes, the classic malformed forms (overlongs, surrogates, past U+10FFFF, stray and missing
 * continuation bytes), pieces split at every position giving the same verdict as the whole,
 * decoding and encoding every scalar value, the cut that splits no character, and counting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "utf8.h"

/* Verdict on a whole text: 1 valid, 0 invalid. The piecewise check, the whole-text check and
 * a walk by utf8_seq_len must all say the same. */
static int
valid(const void *p, size_t n)
{
    utf8_state_t st = {0};
    int fed = utf8_feed(&st, p, n) == 0 && utf8_complete(&st);
    size_t i = 0, len;
    while (i < n && (len = utf8_seq_len((const uint8_t *)p + i, n - i)) > 0)
        i += len;
    if (utf8_valid(p, n) != fed || (i == n) != fed)
        fail_msg("utf8_feed says %d, utf8_valid %d, utf8_seq_len walk %d", fed, utf8_valid(p, n),
                 i == n);
    return fed;
}

/* Reference encoder, the generic way round (continuation bytes from the end, then the lead's
 * length mark), with no range checks on purpose: it writes surrogates too. */
static size_t
encode(uint32_t cp, uint8_t *out)
{
    static const uint8_t mark[5] = {0, 0x00, 0xC0, 0xE0, 0xF0};
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    for (size_t i = n - 1; i > 0; i--) {
        out[i] = (uint8_t)(0x80 | (cp & 0x3F));
        cp >>= 6;
    }
    out[0] = (uint8_t)(mark[n] | cp);
    return n;
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

static void
test_every_scalar_value_decodes_and_encodes_back(void **state)
{
    (void)state;
    uint8_t ref[4], out[4];
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        size_t n = encode(cp, ref), got = utf8_encode(cp, out);
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            if (got != 0)
                fail_msg("U+%04X, a surrogate, was encoded", cp);
            continue;
        }
        if (got != n || memcmp(out, ref, n))
            fail_msg("U+%04X encoded wrong", cp);
        uint32_t back = 0;
        if (utf8_decode(out, n, &back) != n || back != cp)
            fail_msg("U+%04X decoded as U+%04X", cp, back);
        if (n > 1 && utf8_seq_len(out, n - 1) != 0)
            fail_msg("U+%04X cut short still has a length", cp);
    }
    assert_int_equal(utf8_encode(0x110000, out), 0);
    assert_int_equal(utf8_encode(0xFFFFFFFF, out), 0);
}

static void
test_seq_len_refuses_what_the_check_refuses(void **state)
{
    (void)state;
    uint32_t cp = 7;
    assert_int_equal(utf8_seq_len("", 0), 0);
    assert_int_equal(utf8_seq_len("a", 1), 1);
    assert_int_equal(utf8_seq_len("\0", 1),
                     1); /* NUL is a character; refusing it is a caller's rule */
    assert_int_equal(utf8_seq_len("\xE2\x82\xAC!", 4), 3);
    assert_int_equal(utf8_seq_len("\xE2\x82\xAC", 2), 0);     /* cut short by n */
    assert_int_equal(utf8_seq_len("\xC0\xAF", 2), 0);         /* overlong '/' */
    assert_int_equal(utf8_seq_len("\xE0\x80\xAF", 3), 0);     /* overlong '/' in three */
    assert_int_equal(utf8_seq_len("\xF0\x80\x80\xAF", 4), 0); /* overlong '/' in four */
    assert_int_equal(utf8_seq_len("\xED\xA0\x80", 3), 0);     /* U+D800 */
    assert_int_equal(utf8_seq_len("\xED\xBF\xBF", 3), 0);     /* U+DFFF */
    assert_int_equal(utf8_seq_len("\xED\x9F\xBF", 3), 3);     /* U+D7FF */
    assert_int_equal(utf8_seq_len("\xEE\x80\x80", 3), 3);     /* U+E000 */
    assert_int_equal(utf8_seq_len("\xF4\x90\x80\x80", 4), 0); /* U+110000 */
    assert_int_equal(utf8_seq_len("\xF7\xBF\xBF\xBF", 4), 0); /* U+1FFFFF */
    assert_int_equal(utf8_seq_len("\xE2\x28\xA1", 3), 0);     /* second byte not 10xxxxxx */
    assert_int_equal(utf8_seq_len("\xE2\x82\x28", 3), 0);     /* third byte not 10xxxxxx */
    assert_int_equal(utf8_decode("\xED\xA0\x80", 3, &cp), 0);
    assert_int_equal(cp, 7); /* untouched when there is no character */
    assert_int_equal(utf8_decode("\xF0\x9F\x98\x80", 4, &cp), 4);
    assert_int_equal(cp, 0x1F600);
}

/* The cut keeps every whole character and drops only a last one that more bytes could finish. */
static void
test_complete_prefix_drops_only_a_character_that_could_still_finish(void **state)
{
    (void)state;
    assert_int_equal(utf8_complete_prefix("", 0), 0);
    assert_int_equal(utf8_complete_prefix("abc", 3), 3);
    assert_int_equal(utf8_complete_prefix("a\xE2", 2), 1);
    assert_int_equal(utf8_complete_prefix("a\xE2\x82", 3), 1);
    assert_int_equal(utf8_complete_prefix("a\xE2\x82\xAC", 4), 4);
    assert_int_equal(utf8_complete_prefix("\xF0\x9F\x98", 3), 0);
    assert_int_equal(utf8_complete_prefix("\xF0\x9F\x98\x80", 4), 4);
    assert_int_equal(utf8_complete_prefix("\xC3", 1), 0);
    /* bytes no continuation can make valid are not held back: the caller's check finds them */
    assert_int_equal(utf8_complete_prefix("a\xE0\x80", 3), 3); /* overlong */
    assert_int_equal(utf8_complete_prefix("a\xED\xA0", 3), 3); /* surrogate */
    assert_int_equal(utf8_complete_prefix("a\xF4\x90", 3), 3); /* past U+10FFFF */
    assert_int_equal(utf8_complete_prefix("a\xC0", 2), 2);
    assert_int_equal(utf8_complete_prefix("a\xF5", 2), 2);
    assert_int_equal(utf8_complete_prefix("a\x80", 2), 2);
    assert_int_equal(utf8_complete_prefix("\x80\x80\x80", 3), 3);

    /* every prefix of a valid text, cut there, is valid and loses at most three bytes */
    static const char text[] = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z\xED\x9F\xBF\xF4\x8F\xBF\xBF";
    size_t n = sizeof text - 1;
    assert_true(valid(text, n));
    for (size_t k = 0; k <= n; k++) {
        size_t cut = utf8_complete_prefix(text, k);
        if (cut > k || cut + 3 < k || !valid(text, cut))
            fail_msg("prefix %zu cut at %zu", k, cut);
        if (valid(text, k) && cut != k)
            fail_msg("valid prefix %zu cut at %zu", k, cut);
    }
}

static void
test_characters_are_counted_and_found_by_their_first_byte(void **state)
{
    (void)state;
    static const char text[] = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"; /* a é € 😀 */
    size_t n = sizeof text - 1;
    assert_int_equal(utf8_char_count(text, n), 4);
    assert_int_equal(utf8_char_offset(text, n, 0), 0);
    assert_int_equal(utf8_char_offset(text, n, 1), 1);
    assert_int_equal(utf8_char_offset(text, n, 2), 3);
    assert_int_equal(utf8_char_offset(text, n, 3), 6);
    assert_int_equal(utf8_char_offset(text, n, 4), n); /* all four kept */
    assert_int_equal(utf8_char_offset(text, n, 99), n);
    assert_int_equal(utf8_char_count("", 0), 0);
    assert_int_equal(utf8_char_offset("", 0, 0), 0);
    assert_true(utf8_is_continuation(0x80));
    assert_true(utf8_is_continuation(0xBF));
    assert_false(utf8_is_continuation(0x7F));
    assert_false(utf8_is_continuation(0xC0));
}

/* Where the first bad byte is, and the text made valid: one U+FFFD per bad byte, the rest kept
 * (runs of ASCII longer than the 8-byte step included). */
static void
test_invalid_at_finds_the_first_bad_byte_and_repair_replaces_each(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
        size_t bad;
    } cases[] = {
        {"", "", 0},
        {"plain ascii text, longer than eight", "plain ascii text, longer than eight", 35},
        {"a\xFF"
         "b",
         "a\xEF\xBF\xBD"
         "b",
         1},
        {"0123456789abcdef\xFE\xFF", "0123456789abcdef\xEF\xBF\xBD\xEF\xBF\xBD", 16},
        {"\xC0\xAF/", "\xEF\xBF\xBD\xEF\xBF\xBD/", 0},                 /* overlong '/' */
        {"x\xED\xA0\x80", "x\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", 1}, /* surrogate */
        {"\xC3\xA9t\xC3\xA9\xE2\x82", "\xC3\xA9t\xC3\xA9\xEF\xBF\xBD\xEF\xBF\xBD",
         5}, /* cut short */
        {"\xF0\x9F\x98\x80 ok", "\xF0\x9F\x98\x80 ok", 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t n = strlen(cases[i].in);
        char out[UTF8_REPAIRED_MAX(64)];
        assert_int_equal(utf8_invalid_at(cases[i].in, n), cases[i].bad);
        size_t len = utf8_repair(cases[i].in, n, out);
        if (len != strlen(cases[i].out) || memcmp(out, cases[i].out, len))
            fail_msg("case %zu: repaired to %.*s", i, (int)len, out);
        assert_true(valid(out, len));
    }
    /* every short string: the repair is valid, and the identity on valid text */
    uint8_t in[3], out[UTF8_REPAIRED_MAX(3)];
    for (uint32_t v = 0; v < 1u << 24; v += 7) {
        in[0] = (uint8_t)v, in[1] = (uint8_t)(v >> 8), in[2] = (uint8_t)(v >> 16);
        size_t len = utf8_repair(in, 3, out);
        if (!utf8_valid(out, len) || (utf8_valid(in, 3) && (len != 3 || memcmp(in, out, 3))))
            fail_msg("%02x %02x %02x repaired badly", in[0], in[1], in[2]);
    }
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
        cmocka_unit_test(test_every_scalar_value_decodes_and_encodes_back),
        cmocka_unit_test(test_seq_len_refuses_what_the_check_refuses),
        cmocka_unit_test(test_complete_prefix_drops_only_a_character_that_could_still_finish),
        cmocka_unit_test(test_characters_are_counted_and_found_by_their_first_byte),
        cmocka_unit_test(test_invalid_at_finds_the_first_bad_byte_and_repair_replaces_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
