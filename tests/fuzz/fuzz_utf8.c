/* fuzz_utf8.c — common/utf8's functions checked against each other on arbitrary bytes: the
 * piecewise check (split where the input says) agrees with the whole-text check and with a walk
 * by utf8_decode; every decoded character encodes back to its bytes; the cut never splits a
 * character of a valid prefix and agrees with where the piecewise check stands; counting agrees
 * with the walk; a code point taken from the input survives encode and decode; the repair is
 * valid, the identity on valid text, and replaces exactly the bytes the walk stops at; JSON
 * parsing accepts only UTF-8 and its lossy form only ever yields UTF-8. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
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

/* The repair against a walk of its own: a valid character is copied, any other byte is one
 * U+FFFD; the result is valid, and the input itself when that was valid. */
static void
check_repair(const uint8_t *data, size_t size)
{
    uint8_t *out = malloc(UTF8_REPAIRED_MAX(size) + 1);
    size_t len = utf8_repair(data, size, out), w = 0;
    for (size_t i = 0; i < size;) {
        size_t k = utf8_seq_len(data + i, size - i);
        const uint8_t *want = k ? data + i : (const uint8_t *)"\xEF\xBF\xBD";
        size_t wlen = k ? k : 3;
        if (w + wlen > len || memcmp(out + w, want, wlen))
            __builtin_trap();
        w += wlen;
        i += k ? k : 1;
    }
    bool valid = utf8_valid(data, size);
    if (w != len || !utf8_valid(out, len) || (valid && (len != size || memcmp(out, data, size))) ||
        (utf8_invalid_at(data, size) == size) != valid)
        __builtin_trap();
    free(out);
}

static void
check_json(const uint8_t *data, size_t size)
{
    err_t err;
    json_object *o = json_parse((const char *)data, size, &err);
    if (o && !utf8_valid(data, size))
        __builtin_trap();
    json_object_put(o);
    o = json_parse_lossy((const char *)data, size, &err);
    size_t len;
    const char *t = o ? json_text(o, &len) : NULL;
    if (t && !utf8_valid(t, len))
        __builtin_trap();
    json_object_put(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_whole_text(data, size);
    check_cuts(data, size);
    check_code_point(data, size);
    check_repair(data, size);
    check_json(data, size);
    return 0;
}
