/* hex.h — one hexadecimal digit's value: what percent-decoding (api/http.c, file_view.c) and
 * hex secrets (jwt_secret.c) read. */
#ifndef SP_HEX_H
#define SP_HEX_H

/* 0..15 for '0'-'9', 'a'-'f', 'A'-'F'; -1 for anything else. */
static inline int
hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
