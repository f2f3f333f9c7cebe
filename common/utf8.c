/* utf8.c — strict UTF-8, by the table of well-formed byte sequences in the Unicode Standard
 * (chapter 3, table 3-7): the lead byte fixes how many continuation bytes follow and the range
 * of the first of them, which is what excludes overlongs (E0, F0), surrogates (ED) and code
 * points past U+10FFFF (F4); later ones are always 80..BF. Every function here goes through
 * lead() for that table. */
#include "utf8.h"

#include <string.h>

/* For a lead byte c >= 0x80: the continuation bytes it owes and the range of the first one.
 * -1 for 80..C1 (a stray continuation byte, an overlong lead) and F5..FF. */
static int
lead(uint8_t c, uint8_t *need, uint8_t *lo, uint8_t *hi)
{
    *lo = 0x80;
    *hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        *need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        *need = 2;
        if (c == 0xE0)
            *lo = 0xA0; /* below is an overlong form */
        else if (c == 0xED)
            *hi = 0x9F; /* above are the UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        *need = 3;
        if (c == 0xF0)
            *lo = 0x90; /* below is an overlong form */
        else if (c == 0xF4)
            *hi = 0x8F; /* above is past U+10FFFF */
    } else {
        return -1;
    }
    return 0;
}

int
utf8_feed(utf8_state_t *st, const void *p, size_t n)
{
    const uint8_t *s = p;
    uint8_t need = st->need, lo = st->lo, hi = st->hi;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (need) {
            if (c < lo || c > hi)
                return -1;
            need--;
            lo = 0x80;
            hi = 0xBF;
        } else if (c >= 0x80 && lead(c, &need, &lo, &hi) < 0) {
            return -1;
        }
    }
    st->need = need;
    st->lo = lo;
    st->hi = hi;
    return 0;
}

bool
utf8_complete(const utf8_state_t *st)
{
    return st->need == 0;
}

size_t
utf8_seq_len(const void *p, size_t n)
{
    const uint8_t *s = p;
    uint8_t need, lo, hi;
    if (n == 0)
        return 0;
    if (s[0] < 0x80)
        return 1;
    if (lead(s[0], &need, &lo, &hi) < 0 || need >= n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i <= need; i++)
        if (!utf8_is_continuation(s[i]))
            return 0;
    return (size_t)need + 1;
}

size_t
utf8_decode(const void *p, size_t n, uint32_t *cp)
{
    const uint8_t *s = p;
    size_t len = utf8_seq_len(s, n);
    if (len == 1) {
        *cp = s[0];
    } else if (len > 1) {
        uint32_t v = s[0] & (0x7Fu >> len); /* the lead's payload bits */
        for (size_t i = 1; i < len; i++)
            v = v << 6 | (s[i] & 0x3Fu);
        *cp = v;
    }
    return len;
}

size_t
utf8_encode(uint32_t cp, uint8_t out[4])
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
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
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

size_t
utf8_invalid_at(const void *p, size_t n)
{
    const uint8_t *s = p;
    size_t i = 0;
    while (i < n) {
        uint64_t w;
        if (n - i >= sizeof w && (memcpy(&w, s + i, sizeof w), !(w & 0x8080808080808080ull))) {
            i += sizeof w;
            continue;
        }
        size_t len = utf8_seq_len(s + i, n - i);
        if (!len)
            return i;
        i += len;
    }
    return n;
}

bool
utf8_valid(const void *p, size_t n)
{
    return utf8_invalid_at(p, n) == n;
}

size_t
utf8_repair(const void *p, size_t n, void *out)
{
    const uint8_t *s = p;
    uint8_t *o = out;
    size_t w = 0;
    size_t i = 0;
    while (i < n) {
        size_t run = utf8_invalid_at(s + i, n - i); /* valid bytes, copied in one go */
        memcpy(o + w, s + i, run);
        w += run;
        i += run;
        if (i < n) { /* a byte that begins no character */
            memcpy(o + w, "\xEF\xBF\xBD", 3);
            w += 3;
            i++;
        }
    }
    return w;
}

size_t
utf8_complete_prefix(const void *p, size_t n)
{
    const uint8_t *s = p;
    /* A lead owes at most 3 bytes, so an unfinished last character began at most 3 back. */
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        if (utf8_is_continuation(s[n - back]))
            continue;
        utf8_state_t st = {0};
        if (utf8_feed(&st, s + n - back, back) == 0 && !utf8_complete(&st))
            return n - back;
        break;
    }
    return n;
}

size_t
utf8_char_count(const void *p, size_t n)
{
    const uint8_t *s = p;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += !utf8_is_continuation(s[i]);
    return k;
}

size_t
utf8_char_offset(const void *p, size_t n, size_t k)
{
    const uint8_t *s = p;
    size_t chars = 0;
    for (size_t i = 0; i < n; i++) {
        if (utf8_is_continuation(s[i]))
            continue;
        if (chars == k)
            return i;
        chars++;
    }
    return n;
}
