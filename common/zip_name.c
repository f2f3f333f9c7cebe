/* zip_name.c — decoding and checking of zip entry names (see zip_name.h). */
#include "zip_name.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "utf8.h"

/* CP437's upper half as Unicode code points (the lower half is ASCII). */
static const uint16_t cp437_high[128] = {
    0x00c7, 0x00fc, 0x00e9, 0x00e2, 0x00e4, 0x00e0, 0x00e5, 0x00e7, 0x00ea, 0x00eb, 0x00e8, 0x00ef,
    0x00ee, 0x00ec, 0x00c4, 0x00c5, 0x00c9, 0x00e6, 0x00c6, 0x00f4, 0x00f6, 0x00f2, 0x00fb, 0x00f9,
    0x00ff, 0x00d6, 0x00dc, 0x00a2, 0x00a3, 0x00a5, 0x20a7, 0x0192, 0x00e1, 0x00ed, 0x00f3, 0x00fa,
    0x00f1, 0x00d1, 0x00aa, 0x00ba, 0x00bf, 0x2310, 0x00ac, 0x00bd, 0x00bc, 0x00a1, 0x00ab, 0x00bb,
    0x2591, 0x2592, 0x2593, 0x2502, 0x2524, 0x2561, 0x2562, 0x2556, 0x2555, 0x2563, 0x2551, 0x2557,
    0x255d, 0x255c, 0x255b, 0x2510, 0x2514, 0x2534, 0x252c, 0x251c, 0x2500, 0x253c, 0x255e, 0x255f,
    0x255a, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550, 0x256c, 0x2567, 0x2568, 0x2564, 0x2565, 0x2559,
    0x2558, 0x2552, 0x2553, 0x256b, 0x256a, 0x2518, 0x250c, 0x2588, 0x2584, 0x258c, 0x2590, 0x2580,
    0x03b1, 0x00df, 0x0393, 0x03c0, 0x03a3, 0x03c3, 0x00b5, 0x03c4, 0x03a6, 0x0398, 0x03a9, 0x03b4,
    0x221e, 0x03c6, 0x03b5, 0x2229, 0x2261, 0x00b1, 0x2265, 0x2264, 0x2320, 0x2321, 0x00f7, 0x2248,
    0x00b0, 0x2219, 0x00b7, 0x221a, 0x207f, 0x00b2, 0x25a0, 0x00a0,
};

/* A CP437 character (all in the BMP, none a surrogate) as UTF-8. */
static void
put_cp437(buf_t *b, unsigned char c)
{
    uint8_t s[4];
    buf_append(b, s, utf8_encode(cp437_high[c - 0x80], s));
}

/* The name as UTF-8 into b, or -1 when it is not valid. */
static int
decode(const unsigned char *raw, size_t n, bool utf8, buf_t *b)
{
    for (size_t i = 0; i < n;) {
        if (raw[i] < 0x80) {
            buf_append(b, raw + i, 1);
            i++;
        } else if (!utf8) {
            put_cp437(b, raw[i]);
            i++;
        } else {
            size_t k = utf8_seq_len(raw + i, n - i);
            if (!k)
                return -1;
            buf_append(b, raw + i, k);
            i += k;
        }
    }
    return 0;
}

int
zip_name_decode(const unsigned char *raw, size_t n, bool utf8, char **path, bool *is_dir,
                err_t *err)
{
    *path = NULL;
    if (n == 0)
        return err_set(err, EINVAL, "empty name");
    if (memchr(raw, '\0', n))
        return err_set(err, EINVAL, "name holds a NUL byte");
    buf_t name = BUF_INIT, out = BUF_INIT;
    int rc = 0;
    if (decode(raw, n, utf8, &name) < 0) {
        rc = err_set(err, EINVAL, "name is not valid UTF-8");
        goto done;
    }
    if (name.data[0] == '/') {
        rc = err_set(err, EINVAL, "absolute path '%.200s'", name.data);
        goto done;
    }
    *is_dir = name.data[name.len - 1] == '/';
    /* Keep the components that name something; refuse any that climbs. */
    for (const char *p = name.data; *p;) {
        const char *e = strchrnul(p, '/');
        size_t len = (size_t)(e - p);
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            rc = err_set(err, EINVAL, "'..' in path '%.200s'", name.data);
            goto done;
        }
        if (len && !(len == 1 && p[0] == '.')) {
            if (out.len)
                buf_append(&out, "/", 1);
            buf_append(&out, p, len);
        }
        p = *e ? e + 1 : e;
    }
    if (!out.len && !*is_dir) {
        rc = err_set(err, EINVAL, "name '%.200s' names no file", name.data);
        goto done;
    }
    *path = buf_steal(&out);
done:
    buf_free(&name);
    buf_free(&out);
    return rc;
}
