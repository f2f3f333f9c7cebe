/* legacy_edit.c — decoding `print(file_editor(**{...}))` (see legacy_edit.h).
 *
 * A recursive-descent parser over bytes for the subset of Python literals repr() writes for data
 * decoded from JSON: strings, integers, None, True, False, lists, in one dict with string keys.
 * It follows Python's rules where it accepts something (escapes, the quote repr() picks,
 * whitespace and newlines between tokens, a trailing comma, the last of duplicate keys winning,
 * an unknown escape kept with its backslash) and refuses everything else with the byte offset,
 * so that what runs is exactly what upstream's ast.literal_eval would have produced, or nothing.
 * Strings decode to UTF-8: \x, \u, \U and octal escapes name code points, as in Python 3. */
#include "legacy_edit.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "json_util.h"
#include "utf8.h"

#define LE_PREFIX    "print(file_editor(**"
#define LE_SUFFIX    "))"
#define LE_MAX_DEPTH 16 /* lists in lists: deeper is refused, not recursed into */

typedef struct {
    const char *s;
    size_t n, i;
    size_t base; /* offset of s in the whole code, for messages */
    int depth;
    err_t *err;
} lp_t;

static int
at_end(const lp_t *p)
{
    return p->i >= p->n;
}

static int
peek(const lp_t *p)
{
    return at_end(p) ? -1 : (unsigned char)p->s[p->i];
}

/* Refuses with "expected <what> at byte N (found X)". Returns -1. */
static int
fail(lp_t *p, const char *what)
{
    char found[32];
    int c = peek(p);
    if (c < 0)
        snprintf(found, sizeof found, "the end");
    else if (c > 0x20 && c < 0x7f)
        snprintf(found, sizeof found, "'%c'", c);
    else
        snprintf(found, sizeof found, "byte 0x%02x", (unsigned)c);
    err_set(p->err, ERR_BAD_REQ, "expected %s at byte %zu (found %s)", what, p->base + p->i, found);
    return -1;
}

/* Whitespace between tokens: inside the dict's braces Python ignores newlines too. */
static void
skip_ws(lp_t *p)
{
    while (!at_end(p) && strchr(" \t\n\r\f", p->s[p->i]))
        p->i++;
}

static int
is_name_char(int c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c >= 0x80;
}

static int
hex_value(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* cp, a scalar value (the callers refuse the rest), as UTF-8. */
static void
put_utf8(buf_t *b, uint32_t cp)
{
    uint8_t u[4];
    buf_append(b, u, utf8_encode(cp, u));
}

/* \xhh, \uhhhh, \Uhhhhhhhh: exactly digits hex digits (p->i just past the letter). */
static int
hex_escape(lp_t *p, int digits, buf_t *out)
{
    uint32_t cp = 0;
    for (int k = 0; k < digits; k++, p->i++) {
        int v = hex_value(peek(p));
        if (v < 0)
            return fail(p, "a hex digit of a \\x, \\u or \\U escape");
        cp = cp << 4 | (uint32_t)v;
    }
    if (cp > 0x10FFFF) {
        p->i -= (size_t)digits;
        return fail(p, "a code point up to \\U0010ffff");
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) { /* Python keeps a lone surrogate; UTF-8 cannot */
        p->i -= (size_t)digits;
        return fail(p, "a code point that is not a surrogate");
    }
    put_utf8(out, cp);
    return 0;
}

/* The escape after a backslash (p->i at the character after it). */
static int
escape(lp_t *p, buf_t *out)
{
    static const char simple_in[] = "\\'\"abfnrtv", simple_out[] = "\\'\"\a\b\f\n\r\t\v";
    int c = peek(p);
    if (c < 0)
        return fail(p, "the rest of an escape");
    const char *k = c ? strchr(simple_in, c) : NULL;
    if (k) {
        buf_append(out, &simple_out[k - simple_in], 1);
        p->i++;
        return 0;
    }
    if (c == '\n') { /* a backslash at the end of a line joins the next one */
        p->i++;
        return 0;
    }
    if (c >= '0' && c <= '7') {
        uint32_t cp = 0;
        for (int d = 0; d < 3 && peek(p) >= '0' && peek(p) <= '7'; d++, p->i++)
            cp = cp * 8 + (uint32_t)(peek(p) - '0');
        put_utf8(out, cp);
        return 0;
    }
    if (c == 'x' || c == 'u' || c == 'U') {
        p->i++;
        return hex_escape(p, c == 'x' ? 2 : c == 'u' ? 4 : 8, out);
    }
    if (c == 'N')
        return fail(p, "an escape other than \\N{...} (named characters are not supported)");
    buf_puts(out, "\\"); /* Python keeps an unknown escape as written */
    return 0;
}

/* One quoted literal, appended to out (p->i at the opening quote). */
static int
string_literal(lp_t *p, buf_t *out)
{
    char q = p->s[p->i];
    if (p->i + 2 < p->n && p->s[p->i + 1] == q && p->s[p->i + 2] == q)
        return fail(p, "a single- or double-quoted string (triple quotes are not supported)");
    p->i++;
    for (;;) {
        int c = peek(p);
        if (c < 0 || c == '\n' || c == '\r')
            return fail(p, "the closing quote of the string");
        p->i++;
        if (c == q)
            return 0;
        if (c != '\\') {
            buf_append(out, &p->s[p->i - 1], 1);
        } else if (escape(p, out) < 0) {
            return -1;
        }
    }
}

/* A string: one or more adjacent literals ('a' "b" is "ab", as Python joins them). */
static json_object *
string_value(lp_t *p)
{
    buf_t b = BUF_INIT;
    do {
        if (string_literal(p, &b) < 0) {
            buf_free(&b);
            return NULL;
        }
        skip_ws(p);
    } while (peek(p) == '\'' || peek(p) == '"');
    json_object *o = json_object_new_string_len(b.data ? b.data : "", (int)b.len);
    buf_free(&b);
    return o;
}

/* A decimal integer with an optional sign, as Python writes it (no leading zeros, no "_"). */
static json_object *
int_value(lp_t *p)
{
    int neg = 0;
    if (peek(p) == '-' || peek(p) == '+') {
        neg = peek(p) == '-';
        p->i++;
        skip_ws(p);
    }
    size_t start = p->i;
    uint64_t v = 0;
    while (peek(p) >= '0' && peek(p) <= '9') {
        uint64_t d = (uint64_t)(peek(p) - '0');
        if (v > (UINT64_C(1) << 63) / 10 || v * 10 + d > (UINT64_C(1) << 63) - (neg ? 0 : 1)) {
            p->i = start;
            fail(p, "an integer that fits in 64 bits");
            return NULL;
        }
        v = v * 10 + d;
        p->i++;
    }
    if (p->i == start) {
        fail(p, "digits");
        return NULL;
    }
    if (p->s[start] == '0' && p->i - start > 1) {
        p->i = start;
        fail(p, "a decimal integer without leading zeros");
        return NULL;
    }
    if (peek(p) == '.' || is_name_char(peek(p))) {
        fail(p, "the end of a decimal integer (floats, hex and other numbers are not supported)");
        return NULL;
    }
    int64_t signed_v = neg ? (int64_t)(0 - v) : (int64_t)v;
    return json_object_new_int64(signed_v);
}

static json_object *value(lp_t *p);

static json_object *
list_value(lp_t *p)
{
    if (++p->depth > LE_MAX_DEPTH) {
        fail(p, "lists nested at most 16 deep");
        return NULL;
    }
    p->i++; /* '[' */
    json_object *a = json_object_new_array();
    for (;;) {
        skip_ws(p);
        if (peek(p) == ']')
            break;
        json_object *v = value(p);
        if (!v && p->err->code) {
            json_object_put(a);
            return NULL;
        }
        json_object_array_add(a, v);
        skip_ws(p);
        if (peek(p) == ',') {
            p->i++;
            continue;
        }
        if (peek(p) != ']') {
            fail(p, "',' or ']' in the list");
            json_object_put(a);
            return NULL;
        }
    }
    p->i++;
    p->depth--;
    return a;
}

/* A value; NULL with p->err->code 0 is Python's None (JSON null). */
static json_object *
value(lp_t *p)
{
    int c = peek(p);
    if (c == '\'' || c == '"')
        return string_value(p);
    if (c == '[')
        return list_value(p);
    if (c == '-' || c == '+' || (c >= '0' && c <= '9'))
        return int_value(p);
    if (is_name_char(c)) {
        size_t start = p->i;
        while (is_name_char(peek(p)))
            p->i++;
        size_t len = p->i - start;
        const char *w = p->s + start;
        if (len == 4 && memcmp(w, "None", 4) == 0)
            return NULL;
        if (len == 4 && memcmp(w, "True", 4) == 0)
            return json_object_new_boolean(1);
        if (len == 5 && memcmp(w, "False", 5) == 0)
            return json_object_new_boolean(0);
        int prefix = len <= 2 && (peek(p) == '\'' || peek(p) == '"');
        p->i = start;
        fail(p, prefix ? "a plain string (f, r, b and u prefixes are not supported)"
                       : "a literal (names and calls are not supported)");
        return NULL;
    }
    if (c == '{')
        fail(p, "a string, an integer, None, True, False or a list (nested dicts are not "
                "supported)");
    else
        fail(p, "a string, an integer, None, True, False or a list");
    return NULL;
}

static json_object *
dict_value(lp_t *p)
{
    skip_ws(p);
    if (peek(p) != '{') {
        fail(p, "'{'");
        return NULL;
    }
    p->i++;
    json_object *d = json_object_new_object();
    for (;;) {
        skip_ws(p);
        if (peek(p) == '}')
            break;
        if (peek(p) != '\'' && peek(p) != '"') {
            fail(p, "a string key or '}'");
            goto err;
        }
        size_t key_at = p->i;
        json_object *k = string_value(p);
        if (!k)
            goto err;
        const char *key = json_object_get_string(k);
        if (strlen(key) != (size_t)json_object_get_string_len(k)) {
            json_object_put(k);
            p->i = key_at;
            fail(p, "a key without NUL characters");
            goto err;
        }
        skip_ws(p);
        if (peek(p) != ':') {
            json_object_put(k);
            fail(p, "':' after the key");
            goto err;
        }
        p->i++;
        skip_ws(p);
        json_object *v = value(p);
        if (!v && p->err->code) {
            json_object_put(k);
            goto err;
        }
        json_object_object_add(d, key, v); /* a duplicate key: the last wins, as in Python */
        json_object_put(k);
        skip_ws(p);
        if (peek(p) == ',') {
            p->i++;
            continue;
        }
        if (peek(p) != '}') {
            fail(p, "',' or '}' in the dict");
            goto err;
        }
    }
    p->i++;
    return d;
err:
    json_object_put(d);
    return NULL;
}

json_object *
legacy_edit_parse(const char *code, size_t len, err_t *err)
{
    err_t local = {0};
    if (!err)
        err = &local;
    err->code = 0;
    size_t pre = sizeof LE_PREFIX - 1, suf = sizeof LE_SUFFIX - 1;
    if (len < pre + suf || memcmp(code, LE_PREFIX, pre) != 0 ||
        memcmp(code + len - suf, LE_SUFFIX, suf) != 0) {
        err_set(err, ERR_BAD_REQ, "not of the form print(file_editor(**{...}))");
        return NULL;
    }
    lp_t p = {.s = code + pre, .n = len - pre - suf, .base = pre, .err = err};
    json_object *d = dict_value(&p);
    if (!d)
        return NULL;
    skip_ws(&p);
    if (!at_end(&p)) {
        fail(&p, "the end of the dict");
        json_object_put(d);
        return NULL;
    }
    return d;
}

int
legacy_edit_args(json_object *args, json_object **out, err_t *err)
{
    json_object *code = NULL;
    *out = NULL;
    if (!args || !json_object_object_get_ex(args, "translated_ipython_code", &code))
        return 0;
    json_object *decoded = NULL;
    if (code && !json_object_is_type(code, json_type_null)) {
        if (!json_object_is_type(code, json_type_string))
            return err_set(err, ERR_BAD_REQ, "translated_ipython_code must be a string");
        size_t n = (size_t)json_object_get_string_len(code);
        if (n > 0 && !(decoded = legacy_edit_parse(json_object_get_string(code), n, err)))
            return -ERR_BAD_REQ;
    }
    json_object *merged = json_object_new_object();
    json_object_object_foreach(args, k, v)
    {
        if (strcmp(k, "translated_ipython_code") != 0)
            json_object_object_add(merged, k, json_object_get(v));
    }
    if (decoded) {
        json_object_object_foreach(decoded, dk, dv)
        {
            json_object_object_add(merged, dk, json_object_get(dv));
        }
        json_object_put(decoded);
    }
    json_object *cmd = json_get(merged, "command");
    if (cmd && json_object_is_type(cmd, json_type_string) &&
        strcmp(json_object_get_string(cmd), "view") == 0)
        json_object_object_del(merged, "command");
    *out = merged;
    return 0;
}
