/* json_util.c — json-c helpers. */
#include "json_util.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "io.h"
#include "utf8.h"
#include "xalloc.h"

#define JSON_MAX_DEPTH 64

json_object *
json_parse(const char *p, size_t n, err_t *err)
{
    if (n > INT32_MAX) {
        err_set(err, ERR_TOO_BIG, "JSON text too large");
        return NULL;
    }
    if (memchr(p, '\0', n)) {
        err_set(err, ERR_PROTO, "JSON text contains a NUL byte");
        return NULL;
    }
    size_t bad = utf8_invalid_at(p, n);
    if (bad < n) {
        err_set(err, EILSEQ, "not valid UTF-8 (byte %zu)", bad);
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
    json_object *obj = json_tokener_parse_ex(tok, p, (int)n);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    if (jerr == json_tokener_continue) {
        /* The text ended before the value did: flush with a terminating NUL. */
        json_object_put(obj);
        obj = json_tokener_parse_ex(tok, "", 1);
        jerr = json_tokener_get_error(tok);
    }
    if (jerr != json_tokener_success || !obj) {
        err_set(err, ERR_PROTO, "invalid JSON: %s", json_tokener_error_desc(jerr));
        json_object_put(obj);
        obj = NULL;
    } else {
        size_t used = tok->char_offset;
        while (used < n && strchr(" \t\r\n", p[used]))
            used++;
        if (used < n) {
            err_set(err, ERR_PROTO, "invalid JSON: trailing bytes after the value");
            json_object_put(obj);
            obj = NULL;
        }
    }
    json_tokener_free(tok);
    return obj;
}

json_object *
json_parse_lossy(const char *p, size_t n, err_t *err)
{
    char *fixed;
    p = json_valid_text(p, &n, &fixed);
    json_object *o = json_parse(p, n, err);
    free(fixed);
    return o;
}

json_object *
json_get(json_object *obj, const char *key)
{
    json_object *v = NULL;
    if (!obj || !json_object_is_type(obj, json_type_object))
        return NULL;
    if (!json_object_object_get_ex(obj, key, &v))
        return NULL;
    return v;
}

const char *
json_get_str(json_object *obj, const char *key, const char *def)
{
    json_object *v = json_get(obj, key);
    if (!v || !json_object_is_type(v, json_type_string))
        return def;
    return json_object_get_string(v);
}

int64_t
json_get_int(json_object *obj, const char *key, int64_t def)
{
    json_object *v = json_get(obj, key);
    if (!v)
        return def;
    if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
        return json_object_get_int64(v);
    return def;
}

double
json_get_double(json_object *obj, const char *key, double def)
{
    json_object *v = json_get(obj, key);
    if (!v)
        return def;
    if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
        return json_object_get_double(v);
    return def;
}

bool
json_get_bool(json_object *obj, const char *key, bool def)
{
    json_object *v = json_get(obj, key);
    if (!v || !json_object_is_type(v, json_type_boolean))
        return def;
    return json_object_get_boolean(v);
}

void
json_set(json_object *obj, const char *key, json_object *val)
{
    json_object_object_add(obj, key, val);
}

void
json_set_str(json_object *obj, const char *key, const char *s)
{
    json_object_object_add(obj, key, s ? json_object_new_string(s) : NULL);
}

void
json_set_strn(json_object *obj, const char *key, const char *s, size_t n)
{
    json_object_object_add(obj, key, json_object_new_string_len(s, (int)n));
}

void
json_set_int(json_object *obj, const char *key, int64_t v)
{
    json_object_object_add(obj, key, json_object_new_int64(v));
}

void
json_set_bool(json_object *obj, const char *key, bool v)
{
    json_object_object_add(obj, key, json_object_new_boolean(v));
}

void
json_set_name(json_object *obj, const char *key, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (!s || utf8_valid(s, n)) {
        json_set_str(obj, key, s);
        return;
    }
    char *text = xmalloc(UTF8_REPAIRED_MAX(n) + 1), *b64 = xmalloc(BASE64_ENCODED_LEN(n) + 1);
    json_set_strn(obj, key, text, utf8_repair(s, n, text));
    char k[128];
    snprintf(k, sizeof k, "%s_b64", key);
    json_set_strn(obj, k, b64, base64_encode(s, n, b64));
    free(text);
    free(b64);
}

int
json_get_name(json_object *obj, const char *key, char *out, size_t cap, err_t *err)
{
    char k[128];
    snprintf(k, sizeof k, "%s_b64", key);
    json_object *b64 = json_get(obj, k), *v = b64 ? b64 : json_get(obj, key);
    if (!v)
        return -ERR_NOT_FOUND;
    if (!json_object_is_type(v, json_type_string))
        return err_set(err, ERR_BAD_REQ, "\"%s\" must be a string", b64 ? k : key);
    const char *s = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    if (b64) {
        char *raw = xmalloc(BASE64_DECODED_MAX(n));
        size_t len = 0;
        int rc = base64_decode(s, n, raw, &len);
        if (rc == 0 && len < cap)
            memcpy(out, raw, len);
        free(raw);
        if (rc < 0)
            return err_set(err, ERR_BAD_REQ, "\"%s\" is not base64", k);
        if (len >= cap)
            return err_set(err, ERR_BAD_REQ, "\"%s\" is longer than %zu bytes", k, cap - 1);
        n = len;
    } else {
        if (n >= cap)
            return err_set(err, ERR_BAD_REQ, "\"%s\" is longer than %zu bytes", key, cap - 1);
        memcpy(out, s, n);
    }
    out[n] = '\0';
    if (strlen(out) != n)
        return err_set(err, ERR_BAD_REQ, "\"%s\" contains a NUL byte", b64 ? k : key);
    return (int)n;
}

json_object *
json_error_new(int code, const char *msg)
{
    json_object *e = json_object_new_object();
    json_set_str(e, "code", err_name(code));
    json_set_str(e, "message", msg);
    json_object *o = json_object_new_object();
    json_set(o, "error", e);
    return o;
}

const char *
json_valid_text(const char *t, size_t *len, char **fixed)
{
    *fixed = NULL;
    if (utf8_valid(t, *len))
        return t;
    *fixed = xmalloc(UTF8_REPAIRED_MAX(*len) + 1);
    *len = utf8_repair(t, *len, *fixed);
    return *fixed;
}

const char *
json_text(json_object *obj, size_t *len)
{
    const char *s = json_object_to_json_string_length(
        obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
    return s;
}

int
json_write_line(int fd, json_object *obj)
{
    size_t len;
    const char *t = json_text(obj, &len);
    buf_t b = BUF_INIT;
    buf_append(&b, t, len);
    buf_append(&b, "\n", 1);
    int rc = io_write_all(fd, b.data, b.len);
    buf_free(&b);
    return rc;
}

/* Whether any of the 8 bytes in w is below 0x20, '"' or '\\' (the bytes a JSON string must
 * escape): the classic "has a byte less than" and "has a zero byte" word tricks. */
static inline bool
word_needs_escape(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t below_space = (w - ones * 0x20) & ~w;
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
    return ((below_space | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & highs) != 0;
}

static inline bool
byte_needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

/* The end of the run of plain bytes of s[i..n), eight at a time. */
static size_t
plain_run_end(const char *s, size_t i, size_t n)
{
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (word_needs_escape(w))
            break;
    }
    while (i < n && !byte_needs_escape((unsigned char)s[i]))
        i++;
    return i;
}

/* Writes c's escape at out; returns its length (2, or 6 for \u00XX). */
static size_t
escape_byte(unsigned char c, char *out)
{
    static const char hex[] = "0123456789abcdef";
    char short_form = c == '"'    ? '"'
                      : c == '\\' ? '\\'
                      : c == '\n' ? 'n'
                      : c == '\r' ? 'r'
                      : c == '\t' ? 't'
                      : c == '\b' ? 'b'
                      : c == '\f' ? 'f'
                                  : 0;
    out[0] = '\\';
    if (short_form) {
        out[1] = short_form;
        return 2;
    }
    memcpy(out + 1, "u00", 3);
    out[4] = hex[c >> 4];
    out[5] = hex[c & 15];
    return 6;
}

void
json_escape_append(buf_t *b, const char *s, size_t n)
{
    /* Room for the plain case and a few escapes reserved once; more only when escapes pile
     * up. Text output has an escape (its newline) every line: appending run by run would be
     * two calls and a bounds check per line. */
    size_t i = 0;
    while (i < n) {
        size_t left = n - i, room = left + left / 8 + 64;
        char *out = buf_reserve(b, room), *o = out;
        while (i < n && (size_t)(o - out) + 6 <= room - (n - i)) {
            size_t end = plain_run_end(s, i, n);
            memcpy(o, s + i, end - i);
            o += end - i;
            i = end;
            if (i < n)
                o += escape_byte((unsigned char)s[i++], o);
        }
        buf_advance(b, (size_t)(o - out));
    }
}

/* Whether any of the 8 bytes in w is at or above 0x80 (not ASCII). */
static inline bool
word_has_high_byte(uint64_t w)
{
    return (w & 0x8080808080808080u) != 0;
}

/* The end of the run of plain ASCII bytes of s[i..n): what needs no escape and no check. */
static size_t
plain_ascii_run_end(const char *s, size_t i, size_t n)
{
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (word_needs_escape(w) || word_has_high_byte(w))
            break;
    }
    while (i < n && !byte_needs_escape((unsigned char)s[i]) && (unsigned char)s[i] < 0x80)
        i++;
    return i;
}

bool
json_escape_text_append(buf_t *b, const char *s, size_t n)
{
    size_t start_len = b->len, i = 0;
    while (i < n) {
        size_t left = n - i, room = left + left / 8 + 64;
        char *out = buf_reserve(b, room), *o = out;
        while (i < n && (size_t)(o - out) + 6 <= room - (n - i)) {
            size_t end = plain_ascii_run_end(s, i, n);
            memcpy(o, s + i, end - i);
            o += end - i;
            i = end;
            if (i == n)
                break;
            unsigned char c = (unsigned char)s[i];
            if (c == 0)
                goto not_text;
            if (c < 0x80) {
                o += escape_byte(c, o);
                i++;
                continue;
            }
            size_t len = utf8_seq_len(s + i, n - i); /* at most 4: within the room's slack */
            if (!len)
                goto not_text;
            memcpy(o, s + i, len);
            o += len;
            i += len;
        }
        buf_advance(b, (size_t)(o - out));
    }
    return true;
not_text:
    b->len = start_len;
    b->data[b->len] = '\0';
    return false;
}
