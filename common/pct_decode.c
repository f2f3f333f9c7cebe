/* pct_decode.c — percent-decoding (pct_decode.h). */
#include "pct_decode.h"

#include "hex.h"

int
pct_decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n)
                return -1;
            int h = hex_digit(s[i + 1]), l = hex_digit(s[i + 2]);
            if (h < 0 || l < 0)
                return -1;
            c = h * 16 + l;
            i += 2;
        } else if (c == '+') {
            c = ' ';
        }
        if (c == 0 || o + 1 >= cap)
            return -1;
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return (int)o;
}
