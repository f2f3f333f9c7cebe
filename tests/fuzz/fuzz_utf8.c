/* fuzz_utf8.c — common/utf8's functions checked against each other on arbitrary bytes: the
 * piecewise check (split where the input says) agrees with the whole-text check and with a walk
 * by utf8_decode; every decoded character encodes back to its bytes; the cut never splits a
 * character of a valid prefix and agrees with where the piecewise check stands; counting agrees
 * with the walk; a code point taken from the input survives encode and decode. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_whole_text(const uint8_t *data, size_t size)
{
    bool whole = utf8_valid(data, size);

    size_t split = size ? data[0] % (size + 1) : 0;
    utf8_state_t st = {0};
    bool fed = utf8_feed(&st, data, split) == 0 &&
               utf8_feed(&st, data + split, size - split) == 0 && utf8_complete(&st);
    if (fed != whole)
        __builtin_trap();

    size_t i = 0, chars = 0;
    while (i < size) {
        uint32_t cp;
        uint8_t again[4];
        size_t len = utf8_decode(data + i, size - i, &cp);
        if (!len)
            break;
        if (utf8_seq_len(data + i, size - i) != len || utf8_encode(cp, again) != len ||
            memcmp(again, data + i, len))
            __builtin_trap();
        i += len;
        chars++;
    }
    if ((i == size) != whole)
        __builtin_trap();
    if (whole &&
        (utf8_char_count(data, size) != chars || utf8_char_offset(data, size, chars) != size ||
         utf8_complete_prefix(data, size) != size))
        __builtin_trap();
}

/* Byte by byte while the text can still be valid: the cut at k is k when the piecewise check
 * stands on a whole character, else where the unfinished one began. */
static void
check_cuts(const uint8_t *data, size_t size)
{
    utf8_state_t st = {0};
    size_t k = 0, last_start = 0;
    for (;;) {
        size_t cut = utf8_complete_prefix(data, k);
        if (cut != (utf8_complete(&st) ? k : last_start))
            __builtin_trap();
        if (k == size || utf8_feed(&st, data + k, 1) < 0)
            break;
        if (!utf8_is_continuation(data[k]))
            last_start = k;
        k++;
    }
    /* the longest prefix that can still be valid, cut, is valid */
    if (!utf8_valid(data, utf8_complete_prefix(data, k)))
        __builtin_trap();
    size_t cut = utf8_complete_prefix(data, size);
    if (cut > size || cut + 3 < size)
        __builtin_trap();
}

static void
check_code_point(const uint8_t *data, size_t size)
{
    if (size < 4)
        return;
    uint32_t cp =
        (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 | (uint32_t)data[2] << 8 | data[3];
    cp %= 0x120000; /* mostly scalar values, some past U+10FFFF */
    uint8_t out[4];
    uint32_t back;
    size_t len = utf8_encode(cp, out);
    bool scalar = cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if ((len != 0) != scalar)
        __builtin_trap();
    if (len && (utf8_decode(out, len, &back) != len || back != cp || !utf8_valid(out, len) ||
                utf8_char_count(out, len) != 1))
        __builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_whole_text(data, size);
    check_cuts(data, size);
    check_code_point(data, size);
    return 0;
}
