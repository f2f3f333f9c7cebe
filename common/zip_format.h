/* zip_format.h — the parts of the PKWARE .ZIP format (APPNOTE 6.3) that zip_read and zip_write
 * share: record signatures and sizes, little-endian field access, MS-DOS timestamps. No zip64:
 * archives, entries and offsets stay below 4 GiB. Header only. */
#ifndef SP_ZIP_FORMAT_H
#define SP_ZIP_FORMAT_H

#include <stdint.h>
#include <time.h>

#define ZIP_SIG_LOCAL   0x04034b50u /* local file header */
#define ZIP_SIG_CENTRAL 0x02014b50u /* central directory file header */
#define ZIP_SIG_EOCD    0x06054b50u /* end of central directory record */
#define ZIP_SIG_DESC    0x08074b50u /* data descriptor (optional signature) */

#define ZIP_LOCAL_LEN   30
#define ZIP_CENTRAL_LEN 46
#define ZIP_EOCD_LEN    22
#define ZIP_DESC_LEN    16
#define ZIP_COMMENT_MAX 0xffffu

#define ZIP_FLAG_ENCRYPTED  0x0001u
#define ZIP_FLAG_DESCRIPTOR 0x0008u /* sizes and CRC follow the data */
#define ZIP_FLAG_STRONG_ENC 0x0040u
#define ZIP_FLAG_UTF8       0x0800u /* name is UTF-8 (else CP437) */

#define ZIP_METHOD_STORE   0
#define ZIP_METHOD_DEFLATE 8

#define ZIP_VERSION_NEEDED 20 /* 2.0: deflate, directories */
#define ZIP_HOST_UNIX      3  /* "version made by" high byte: external attrs hold st_mode */
#define ZIP_U32_MAX        0xffffffffu

static inline uint16_t
zip_get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t
zip_get32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline unsigned char *
zip_put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    return p + 2;
}

static inline unsigned char *
zip_put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
    return p + 4;
}

/* MS-DOS date and time (local time, 2-second resolution; 1980-01-01 for anything earlier). */
static inline void
zip_dos_time(time_t t, uint16_t *dos_date, uint16_t *dos_time)
{
    struct tm tm;
    if (!localtime_r(&t, &tm) || tm.tm_year < 80) {
        *dos_date = (1 << 5) | 1;
        *dos_time = 0;
        return;
    }
    if (tm.tm_year > 80 + 127)
        tm.tm_year = 80 + 127;
    *dos_date = (uint16_t)(((tm.tm_year - 80) << 9) | ((tm.tm_mon + 1) << 5) | tm.tm_mday);
    *dos_time = (uint16_t)((tm.tm_hour << 11) | (tm.tm_min << 5) | (tm.tm_sec / 2));
}

#endif
