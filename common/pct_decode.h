/* pct_decode.h — percent-decoding of a query or form value, strict: what the API reads from a
 * request URI (api/http.c's queries, the E2B list filter). Pure. */
#ifndef SP_PCT_DECODE_H
#define SP_PCT_DECODE_H

#include <stddef.h>

/* Percent-decodes s[0..n) into out[0..cap) ('+' is a space). Returns the length or -1 (a bad
 * escape, a NUL, too long for out with its terminating NUL). */
int pct_decode(const char *s, size_t n, char *out, size_t cap);

#endif
