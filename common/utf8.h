/* utf8.h — the one UTF-8 implementation: strict (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF) validation of a whole text or of pieces that may split a character
 * anywhere (a WebSocket text message arrives in fragments), decoding and encoding one
 * character, cutting a text where no character is split, and counting characters.
 * Callers' own rules (no NUL in a text, invalid bytes replaced) stay with the callers.
 * Pure, no allocation. */
#ifndef SP_UTF8_H
#define SP_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a piecewise check stands between pieces. Zero-initialised = at the start of a text. */
typedef struct {
    uint8_t need;   /* continuation bytes still owed by the current character */
    uint8_t lo, hi; /* the range the next continuation byte must fall in */
} utf8_state_t;

/* Checks p[0..n) as the next piece of the text. Returns 0, or -1 at the first byte that no
 * valid UTF-8 text can contain there (the state is then meaningless). */
int utf8_feed(utf8_state_t *st, const void *p, size_t n);

/* True when the text fed so far ends on a whole character (a valid text must, at its end). */
bool utf8_complete(const utf8_state_t *st);

/* True when p[0..n) is valid UTF-8 (the empty text is). NUL is a valid character. */
bool utf8_valid(const void *p, size_t n);

/* Offset of the first byte of p[0..n) that does not begin a valid character (a character the
 * end cuts short included), or n when p[0..n) is valid UTF-8. Runs of ASCII go 8 bytes a step:
 * this is the check of every text the gateway writes to a WebSocket. */
size_t utf8_invalid_at(const void *p, size_t n);

/* Room utf8_repair needs for n bytes: each may become U+FFFD's three. */
#define UTF8_REPAIRED_MAX(n) ((n)*3)

/* Copies p[0..n) to out (room for UTF8_REPAIRED_MAX(n) bytes), each byte that does not begin a
 * valid character written as U+FFFD (one per byte, as the output path's observations show
 * them); returns the length written. The copy is valid UTF-8, and equal to p when p is. Bytes
 * replaced are all >= 0x80, so a JSON text keeps its structure: only its strings change. */
size_t utf8_repair(const void *p, size_t n, void *out);

/* Length (1..4) of the valid character that starts p[0..n), or 0 when none does: an invalid
 * byte there, or a character that n cuts short, or n == 0. */
size_t utf8_seq_len(const void *p, size_t n);

/* utf8_seq_len, and the character's code point in *cp when there is one. */
size_t utf8_decode(const void *p, size_t n, uint32_t *cp);

/* Writes the UTF-8 form of cp to out; returns its length (1..4), or 0 (nothing written) when
 * cp is a surrogate or past U+10FFFF. */
size_t utf8_encode(uint32_t cp, uint8_t out[4]);

/* Where to cut p[0..n) so that no character is split: n, less a last character that has begun
 * validly but lacks bytes more input could still bring. A prefix of a valid text cut there is
 * valid; other invalid bytes are left where they are, for the caller's check to find. */
size_t utf8_complete_prefix(const void *p, size_t n);

/* Characters in p[0..n): the bytes that are not continuation bytes (10xxxxxx), which on valid
 * text is the number of code points, Python's len(). */
size_t utf8_char_count(const void *p, size_t n);

/* Byte offset of character k (0-based, counted as utf8_char_count does), or n when p[0..n)
 * has k characters or fewer: the cut that keeps the first k characters. */
size_t utf8_char_offset(const void *p, size_t n, size_t k);

/* True for a continuation byte (10xxxxxx): not the first byte of a character. */
static inline bool
utf8_is_continuation(uint8_t c)
{
    return (c & 0xC0) == 0x80;
}

#endif
