/* base64.c — standard base64 encode and strict decode (see base64.h). Pure functions over
 * caller-provided buffers: no allocation, no state. */
#include "base64.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

static const char base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Every 12 bits' two characters, so a group of three bytes is two look-ups and two stores.
 * Filled before main (no lazy state for threads to race on). */
static uint16_t base64_pairs[4096];

__attribute__((constructor)) static void
base64_pairs_fill(void)
{
    for (unsigned i = 0; i < 4096; i++) {
        char two[2] = {base64_alphabet[i >> 6], base64_alphabet[i & 63]};
        memcpy(&base64_pairs[i], two, 2);
    }
}

size_t
base64_encode(const void *in, size_t n, char *out)
{
    const unsigned char *p = in;
    size_t k = 0, i = 0;
    /* whole groups without a branch per byte: this encodes every byte of streamed output */
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        memcpy(out + k, &base64_pairs[v >> 12], 2);
        memcpy(out + k + 2, &base64_pairs[v & 0xFFF], 2);
        k += 4;
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        out[k++] = base64_alphabet[v >> 18];
        out[k++] = base64_alphabet[v >> 12 & 63];
        out[k++] = i + 1 < n ? base64_alphabet[v >> 6 & 63] : '=';
        out[k++] = '=';
    }
    return k;
}

/* The 6-bit value of an alphabet character, or -1. */
static int
base64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

int
base64_decode(const char *in, size_t n, void *out, size_t *out_len)
{
    unsigned char *dst = out;
    uint32_t acc = 0;
    int bits = 0, pad = 0;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)in[i];
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        if (ch == '=') {
            pad++;
            continue;
        }
        int v = base64_value(ch);
        if (pad || v < 0)
            return -EINVAL; /* data after padding, or not in the alphabet */
        /* Only the low 14 bits are ever needed (at most 8 pending + 6 new). */
        acc = (acc << 6 | (uint32_t)v) & 0x3FFF;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            dst[len++] = (unsigned char)(acc >> bits & 0xFF);
        }
    }
    /* Leftover bits must be zero padding of a 2- or 3-character final group. */
    if (bits >= 6 || (acc & ((1u << bits) - 1)) || pad > 2)
        return -EINVAL;
    *out_len = len;
    return 0;
}

size_t
base64_stream_feed(base64_stream_t *s, const void *in, size_t n, char *out)
{
    const unsigned char *p = in;
    size_t k = 0;
    if (s->ncarry) {
        unsigned char group[3];
        size_t have = s->ncarry;
        memcpy(group, s->carry, have);
        while (have < 3 && n) {
            group[have++] = *p++;
            n--;
        }
        if (have < 3) {
            memcpy(s->carry, group, have);
            s->ncarry = have;
            return 0;
        }
        k = base64_encode(group, 3, out);
        s->ncarry = 0;
    }
    size_t whole = n / 3 * 3;
    k += base64_encode(p, whole, out + k);
    s->ncarry = n - whole;
    memcpy(s->carry, p + whole, s->ncarry);
    return k;
}

size_t
base64_stream_end(base64_stream_t *s, char *out)
{
    size_t k = base64_encode(s->carry, s->ncarry, out);
    s->ncarry = 0;
    return k;
}
