/* py_compat.c — Python semantics the OpenHands texts depend on (see py_compat.h): pathlib's
 * str() and suffix, str.strip() over UTF-8, repr()/str()/truthiness of JSON values, OSError text.
 * Pure functions over strings; results are new buffers the caller owns. */
#include "py_compat.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

char *
fa_py_path(const char *p)
{
    buf_t b = BUF_INIT;
    int abs = p[0] == '/';
    const char *s = p;
    while (*s) {
        while (*s == '/')
            s++;
        const char *seg = s;
        while (*s && *s != '/')
            s++;
        size_t n = (size_t)(s - seg);
        if (n == 0 || (n == 1 && seg[0] == '.'))
            continue;
        if (b.len || abs)
            buf_puts(&b, "/");
        buf_append(&b, seg, n);
    }
    if (!b.len)
        buf_puts(&b, abs ? "/" : ".");
    return buf_steal(&b);
}

const char *
py_suffix(const char *path)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name || dot[1] == '\0')
        return "";
    return dot;
}

/* Python's OSError text: "[Errno 2] No such file or directory: '/x'". */
void
py_oserror(buf_t *b, int e, const char *path)
{
    buf_printf(b, "[Errno %d] %s: '%s'", e, strerror(e), path);
}

/* repr(str) of s[0..n) (UTF-8): Python's quote choice and escapes; control characters, DEL, the
 * C1 controls, U+00A0 and U+00AD (not printable to Python) as \xNN. */
void
py_repr_str(buf_t *b, const char *s, size_t n)
{
    char q = memchr(s, '\'', n) && !memchr(s, '"', n) ? '"' : '\'';
    buf_append(b, &q, 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == (unsigned char)q || c == '\\')
            buf_printf(b, "\\%c", c);
        else if (c == '\n')
            buf_puts(b, "\\n");
        else if (c == '\t')
            buf_puts(b, "\\t");
        else if (c == '\r')
            buf_puts(b, "\\r");
        else if (c < 0x20 || c == 0x7f)
            buf_printf(b, "\\x%02x", c);
        else if (c == 0xC2 && i + 1 < n &&
                 (((unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0xA0) ||
                  (unsigned char)s[i + 1] == 0xAD))
            buf_printf(b, "\\x%02x", (unsigned char)s[++i]);
        else
            buf_append(b, s + i, 1);
    }
    buf_append(b, &q, 1);
}

/* Appends Python's repr() of a JSON value (for view_range in messages: "[1, 2]"). */
void
py_repr(buf_t *b, json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: buf_puts(b, "None"); break;
    case json_type_boolean: buf_puts(b, json_object_get_boolean(v) ? "True" : "False"); break;
    case json_type_int: buf_printf(b, "%lld", (long long)json_object_get_int64(v)); break;
    case json_type_double: {
        char num[64];
        py_float_repr(json_object_get_double(v), num, sizeof num);
        buf_puts(b, num);
        break;
    }
    case json_type_string:
        py_repr_str(b, json_object_get_string(v), (size_t)json_object_get_string_len(v));
        break;
    case json_type_array: {
        buf_puts(b, "[");
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            if (i)
                buf_puts(b, ", ");
            py_repr(b, json_object_array_get_idx(v, i));
        }
        buf_puts(b, "]");
        break;
    }
    case json_type_object: {
        int first = 1;
        buf_puts(b, "{");
        json_object_object_foreach(v, key, val)
        {
            if (!first)
                buf_puts(b, ", ");
            py_repr_str(b, key, strlen(key));
            buf_puts(b, ": ");
            py_repr(b, val);
            first = 0;
        }
        buf_puts(b, "}");
        break;
    }
    }
}

/* str(value) in an f-string: a str prints bare, everything else as repr(). */
void
py_str(buf_t *b, json_object *v)
{
    if (json_object_is_type(v, json_type_string))
        buf_puts(b, json_object_get_string(v));
    else
        py_repr(b, v);
}

/* Python truthiness of a JSON value (None, [], "", 0, {} and false are false). */
int
py_truthy(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: return 0;
    case json_type_boolean: return json_object_get_boolean(v);
    case json_type_int: return json_object_get_int64(v) != 0;
    case json_type_double: return json_object_get_double(v) != 0;
    case json_type_string: return json_object_get_string_len(v) != 0;
    case json_type_array: return json_object_array_length(v) != 0;
    case json_type_object: return json_object_object_length(v) != 0;
    }
    return 0;
}

/* str.isspace() for the code point starting at s[i]; its width in *w. Not an invalid byte. */
static int
py_space_at(const char *s, size_t n, size_t i, size_t *w)
{
    uint32_t cp;
    size_t len = utf8_decode(s + i, n - i, &cp);
    *w = len ? len : 1;
    return len && ((cp >= 9 && cp <= 13) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 ||
                   cp == 0xA0 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
                   cp == 0x202F || cp == 0x3000);
}

void
fa_py_strip(const char *s, size_t n, size_t *off, size_t *len)
{
    size_t a = 0, b = n, w;
    while (a < b && py_space_at(s, b, a, &w))
        a += w;
    while (b > a) {
        int hit = 0;
        for (size_t k = 1; k <= 3 && k <= b - a && !hit; k++)
            if (py_space_at(s, b, b - k, &w) && w == k) {
                b -= k;
                hit = 1;
            }
        if (!hit)
            break;
    }
    *off = a;
    *len = b - a;
}

/* repr(float): shortest round-trip digits; fixed notation for exponents -4..15, else
 * scientific with at least two exponent digits (1e-05, 1e+16). */
void
py_float_repr(double v, char *out, size_t cap)
{
    if (isnan(v)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(out, cap, v < 0 ? "-inf" : "inf");
        return;
    }
    char sci[64];
    int prec;
    for (prec = 0; prec < 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec, v);
        if (strtod(sci, NULL) == v)
            break;
    }
    /* sci = [-]d[.ddd]e[+-]XX */
    char digits[40];
    size_t nd = 0;
    const char *q = sci;
    bool neg = *q == '-';
    if (neg)
        q++;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9')
            digits[nd++] = *q;
    digits[nd] = '\0';
    int exp = atoi(q + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = '\0';
    buf_t b = BUF_INIT;
    if (neg)
        buf_puts(&b, "-");
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            buf_puts(&b, "0.");
            for (int i = -1; i > exp; i--)
                buf_puts(&b, "0");
            buf_puts(&b, digits);
        } else {
            for (int i = 0; i <= exp; i++)
                buf_append(&b, i < (int)nd ? &digits[i] : "0", 1);
            buf_puts(&b, ".");
            if ((int)nd > exp + 1)
                buf_puts(&b, digits + exp + 1);
            else
                buf_puts(&b, "0");
        }
    } else {
        buf_append(&b, digits, 1);
        if (nd > 1) {
            buf_puts(&b, ".");
            buf_puts(&b, digits + 1);
        }
        buf_printf(&b, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
    snprintf(out, cap, "%s", b.data);
    buf_free(&b);
}
