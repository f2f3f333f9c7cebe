/* utf8.c — strict incremental UTF-8 validation, by the table of well-formed byte sequences in
 * the Unicode Standard (chapter 3, table 3-7): the lead byte fixes how many continuation bytes
 * follow and the range of the first of them, which is what excludes overlongs (E0, F0),
 * surrogates (ED) and code points past U+10FFFF (F4); later ones are always 80..BF. */
#include "utf8.h"

int
utf8_feed(utf8_state_t *st, const uint8_t *p, size_t n)
{
    uint8_t need = st->need, lo = st->lo, hi = st->hi;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (need) {
            if (c < lo || c > hi)
                return -1;
            need--;
            lo = 0x80;
            hi = 0xBF;
            continue;
        }
        if (c < 0x80)
            continue;
        lo = 0x80;
        hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0)
                lo = 0xA0; /* below is an overlong form */
            else if (c == 0xED)
                hi = 0x9F; /* above are the UTF-16 surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0)
                lo = 0x90; /* below is an overlong form */
            else if (c == 0xF4)
                hi = 0x8F; /* above is past U+10FFFF */
        } else {
            return -1; /* 80..C1 (stray continuation, overlong lead) or F5..FF */
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
