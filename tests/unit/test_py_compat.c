/* test_py_compat.c — fa_py_strip against what Python's str.strip() does: ASCII and Unicode
 * whitespace at either end goes, inner whitespace and anything that is not a whole character
 * (bytes that only look like the start of a space) stays. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "py_compat.h"

/* s stripped, as a string compared with want. */
static void
expect_strip(const char *s, const char *want)
{
    size_t off, len;
    fa_py_strip(s, strlen(s), &off, &len);
    if (len != strlen(want) || memcmp(s + off, want, len))
        fail_msg("strip(\"%s\") = \"%.*s\", want \"%s\"", s, (int)len, s + off, want);
}

static void
test_ascii_whitespace_goes_from_both_ends_only(void **state)
{
    (void)state;
    expect_strip("  a b\t\n", "a b");
    expect_strip("\x1c\x1f\v\fx\r", "x");
    expect_strip("", "");
    expect_strip(" \t ", "");
}

static void
test_unicode_whitespace_goes_too(void **state)
{
    (void)state;
    expect_strip("\xC2\xA0x\xC2\x85", "x");                     /* NBSP, NEL */
    expect_strip("\xE2\x80\x80x\xE2\x80\x8A", "x");             /* U+2000, U+200A */
    expect_strip("\xE2\x80\xA8\xE2\x80\xA9x\xE2\x80\xAF", "x"); /* U+2028, U+2029, U+202F */
    expect_strip("\xE3\x80\x80x\xE3\x80\x80", "x");             /* ideographic space */
    expect_strip("\xE2\x80\x8Bx", "\xE2\x80\x8Bx");             /* U+200B is not whitespace */
    expect_strip("\xC3\xA9 ", "\xC3\xA9");
}

static void
test_bytes_that_are_not_a_whole_character_stay(void **state)
{
    (void)state;
    expect_strip("\xE2\x80 x", "\xE2\x80 x"); /* a truncated U+2000 before a space */
    expect_strip("x\xA0", "x\xA0");           /* a lone continuation byte, not NBSP */
    expect_strip("x \xC2", "x \xC2");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_whitespace_goes_from_both_ends_only),
        cmocka_unit_test(test_unicode_whitespace_goes_too),
        cmocka_unit_test(test_bytes_that_are_not_a_whole_character_stay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
