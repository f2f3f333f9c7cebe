/* base64.h — standard base64 (RFC 4648 section 4 alphabet, "=" padding), pure C without
 * OpenSSL: the executor links only json-c. (OpenSSL users, such as jwt.c's base64url, keep
 * EVP_EncodeBlock/EVP_DecodeBlock.) No allocation: callers size the output with the macros. */
#ifndef SP_BASE64_H
#define SP_BASE64_H

#include <stddef.h>

/* Characters base64_encode writes for n bytes (padded to a multiple of 4). */
#define BASE64_ENCODED_LEN(n) (((n) + 2) / 3 * 4)
/* Room base64_decode needs for n characters of input (an upper bound). */
#define BASE64_DECODED_MAX(n) ((n) / 4 * 3 + 3)

/* Encodes in[0..n) into out, which holds BASE64_ENCODED_LEN(n) characters; no NUL is written.
 * Returns the number of characters written. */
size_t base64_encode(const void *in, size_t n, char *out);

/* Decodes in[0..n) into out (room for BASE64_DECODED_MAX(n) bytes), *out_len set to the count.
 * Strict apart from layout: ASCII whitespace (space, \t, \r, \n) is skipped anywhere and "="
 * padding is optional, but any other character outside the alphabet, data after "=", more than
 * two "=", a final group of one character, or non-zero bits left over in the last character
 * (a non-canonical encoding) is refused. Returns 0, or -EINVAL (out then holds garbage and
 * *out_len is untouched). */
int base64_decode(const char *in, size_t n, void *out, size_t *out_len);

/* Encoding that arrives in pieces (a file streamed into a page): whole groups of three bytes
 * are encoded as they come, the 0-2 left over wait for the next piece or the end. */
typedef struct {
    unsigned char carry[2];
    size_t ncarry;
} base64_stream_t;

/* Room base64_stream_feed needs for n more bytes. */
#define BASE64_STREAM_MAX(n) (((n) + 2) / 3 * 4 + 4)
/* Encodes in[0..n) after what s carries into out; returns the characters written. */
size_t base64_stream_feed(base64_stream_t *s, const void *in, size_t n, char *out);
/* The last group, padded (0 or 4 characters into out). */
size_t base64_stream_end(base64_stream_t *s, char *out);

#endif
