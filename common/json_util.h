/* json_util.h — small json-c helpers: typed getters with defaults, safe parsing with limits. */
#ifndef SP_JSON_UTIL_H
#define SP_JSON_UTIL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

/* Parses exactly one JSON value from p[0..n) (NUL bytes refused, nesting limited). The text
 * must be UTF-8 (RFC 8259 section 8.1; strict: utf8.h), which json-c does not check (its
 * JSON_TOKENER_VALIDATE_UTF8 takes overlongs and surrogates): otherwise err is EILSEQ,
 * "not valid UTF-8 (byte N)", N the offset of the first bad byte. Returns a new object or NULL
 * with err set. */
json_object *json_parse(const char *p, size_t n, err_t *err);

/* json_parse for a text whose strings may hold bytes that are not UTF-8 and must still be
 * carried (an executor's replies, plugins' output, events read back from Redis): each such
 * byte is read as U+FFFD (utf8_repair), so the value holds only valid UTF-8. */
json_object *json_parse_lossy(const char *p, size_t n, err_t *err);

/* Getters: the value when the key exists with a usable type, else def.
 * json_get_str returns a pointer borrowed from obj. */
const char *json_get_str(json_object *obj, const char *key, const char *def);
int64_t json_get_int(json_object *obj, const char *key, int64_t def);
double json_get_double(json_object *obj, const char *key, double def);
bool json_get_bool(json_object *obj, const char *key, bool def);
json_object *json_get(json_object *obj, const char *key); /* borrowed or NULL */

/* Adds key/value (takes ownership of val). Shorthands for the common types. */
void json_set(json_object *obj, const char *key, json_object *val);
void json_set_str(json_object *obj, const char *key, const char *s);
void json_set_strn(json_object *obj, const char *key, const char *s, size_t n);
void json_set_int(json_object *obj, const char *key, int64_t v);
void json_set_bool(json_object *obj, const char *key, bool v);

/* A name chosen by a sandbox (a file name or path: any bytes but NUL) as JSON text: key is s
 * made valid UTF-8 (utf8_repair: each bad byte U+FFFD), and when s is not UTF-8, key_b64 holds
 * its exact bytes in base64 (docs/protocol.md, "Names that are not UTF-8"). s NULL: null. */
void json_set_name(json_object *obj, const char *key, const char *s);

/* The bytes of a name given as json_set_name writes it, into out[0..cap): key_b64 when
 * present (base64 of at most cap-1 bytes without NUL; key beside it only shows the name), else
 * the string key. Returns the length; -ERR_NOT_FOUND when neither is there (or is null);
 * -ERR_BAD_REQ with err (may be NULL) when the one read is not a string, the base64 is
 * malformed, or the name holds NUL or is longer. */
int json_get_name(json_object *obj, const char *key, char *out, size_t cap, err_t *err);

/* {"error": {"code": err_name(code), "message": msg}} */
json_object *json_error_new(int code, const char *msg);

/* Appends s[0..n) to b as the inside of a JSON string (quotes not included): ", \ and
 * control characters escaped, everything else copied as is (s must be valid UTF-8). Runs of
 * plain bytes are copied in one go: this is the hot path of streamed output. */
void json_escape_append(buf_t *b, const char *s, size_t n);
/* The same when s[0..n) is text: valid UTF-8 (utf8.h's strict rules) without NUL, checked in
 * the same pass. Returns false, leaving b as it was, when it is not (the caller sends those
 * bytes as base64). */
bool json_escape_text_append(buf_t *b, const char *s, size_t n);

/* t[0..*len) itself when it is valid UTF-8; else a copy with each bad byte as U+FFFD
 * (utf8_repair) in *fixed, which the caller frees (NULL when t was valid), *len its length. The
 * last check of a text put together from anything (a name in an error message, an event read
 * back from Redis) on its way out as JSON. */
const char *json_valid_text(const char *t, size_t *len, char **fixed);

/* Compact serialisation, borrowed from obj until it changes or is freed. */
const char *json_text(json_object *obj, size_t *len);

/* obj's compact text and a newline written to fd in one piece (a line-delimited JSON stream,
 * as the plugins speak to the executor): 0, or -errno. */
int json_write_line(int fd, json_object *obj);

#endif
