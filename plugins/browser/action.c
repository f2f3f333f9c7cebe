/* action.c — the BrowserGym action-string parser (action.h): a small recursive descent over
 * Python call syntax, bounded by the input length and BA_MAX_CALLS. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "buf.h"

typedef struct {
    const char *p, *end, *start;
    err_t *err;
} lex_t;

static void
skip_space(lex_t *l, bool newlines)
{
    while (l->p < l->end) {
        char c = *l->p;
        if (c == '#') {
            while (l->p < l->end && *l->p != '\n')
                l->p++;
        } else if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
            l->p++;
        } else {
            break;
        }
    }
}

static int
fail(lex_t *l, const char *what)
{
    return err_set(l->err, ERR_BAD_REQ, "%s at offset %zu", what, (size_t)(l->p - l->start));
}

static bool
is_ident(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

static int
parse_string(lex_t *l, json_object **out)
{
    char q = *l->p++;
    buf_t b = BUF_INIT;
    while (l->p < l->end && *l->p != q) {
        char c = *l->p++;
        if (c == '\n') {
            buf_free(&b);
            return fail(l, "unterminated string");
        }
        if (c == '\\' && l->p < l->end) {
            c = *l->p++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '0': c = '\0'; break;
            default: break; /* \\, \', \" and anything else: the character itself */
            }
        }
        buf_append(&b, &c, 1);
    }
    if (l->p >= l->end) {
        buf_free(&b);
        return fail(l, "unterminated string");
    }
    l->p++;
    *out = json_object_new_string_len(b.data ? b.data : "", (int)b.len);
    buf_free(&b);
    return 0;
}

static int parse_value(lex_t *l, json_object **out, int depth);

static int
parse_list(lex_t *l, json_object **out, int depth)
{
    char close = *l->p == '[' ? ']' : ')';
    l->p++;
    json_object *a = json_object_new_array();
    for (;;) {
        skip_space(l, true);
        if (l->p < l->end && *l->p == close) {
            l->p++;
            *out = a;
            return 0;
        }
        json_object *v = NULL;
        if (parse_value(l, &v, depth + 1) < 0) {
            json_object_put(a);
            return -1;
        }
        json_object_array_add(a, v);
        skip_space(l, true);
        if (l->p < l->end && *l->p == ',')
            l->p++;
        else if (!(l->p < l->end && *l->p == close)) {
            json_object_put(a);
            return fail(l, "expected ',' or the end of the list");
        }
    }
}

static int
parse_value(lex_t *l, json_object **out, int depth)
{
    skip_space(l, true);
    if (depth > 8)
        return fail(l, "lists nested too deep");
    if (l->p >= l->end)
        return fail(l, "expected a value");
    char c = *l->p;
    if (c == '"' || c == '\'')
        return parse_string(l, out);
    if (c == '[' || c == '(')
        return parse_list(l, out, depth);
    if (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9')) {
        char num[64];
        size_t n = 0;
        while (l->p < l->end && n < sizeof num - 1 && strchr("+-.eE0123456789", *l->p) != NULL)
            num[n++] = *l->p++;
        num[n] = '\0';
        char *e;
        double d = strtod(num, &e);
        if (e == num || *e)
            return fail(l, "bad number");
        bool integral = !strpbrk(num, ".eE");
        *out = integral ? json_object_new_int64((int64_t)d) : json_object_new_double(d);
        return 0;
    }
    static const char *const words[] = {"True", "False", "None"};
    for (int i = 0; i < 3; i++) {
        size_t wl = strlen(words[i]);
        if ((size_t)(l->end - l->p) >= wl && memcmp(l->p, words[i], wl) == 0 &&
            !(l->p + wl < l->end && is_ident(l->p[wl], false))) {
            l->p += wl;
            *out = i == 2 ? NULL : json_object_new_boolean(i == 0);
            return 0;
        }
    }
    return fail(l, "expected a string, a number, True, False, None or a list");
}

/* name(arg, ..., key=value, ...) */
static int
parse_call(lex_t *l, json_object *calls)
{
    const char *name = l->p;
    while (l->p < l->end && is_ident(*l->p, l->p == name))
        l->p++;
    if (l->p == name)
        return fail(l, "expected an action name");
    size_t name_len = (size_t)(l->p - name);
    skip_space(l, false);
    if (l->p >= l->end || *l->p != '(')
        return fail(l, "expected '(' after the action name");
    l->p++;
    json_object *args = json_object_new_array();
    for (;;) {
        skip_space(l, true);
        if (l->p < l->end && *l->p == ')') {
            l->p++;
            break;
        }
        /* key=value: the key is dropped, the value kept in order */
        const char *save = l->p;
        while (l->p < l->end && is_ident(*l->p, l->p == save))
            l->p++;
        skip_space(l, false);
        if (l->p > save && l->p < l->end && *l->p == '=' && !(l->p + 1 < l->end && l->p[1] == '='))
            l->p++;
        else
            l->p = save;
        json_object *v = NULL;
        if (parse_value(l, &v, 0) < 0) {
            json_object_put(args);
            return -1;
        }
        json_object_array_add(args, v);
        skip_space(l, true);
        if (l->p < l->end && *l->p == ',')
            l->p++;
        else if (!(l->p < l->end && *l->p == ')')) {
            json_object_put(args);
            return fail(l, "expected ',' or ')'");
        }
    }
    json_object *c = json_object_new_object();
    json_object_object_add(c, "name", json_object_new_string_len(name, (int)name_len));
    json_object_object_add(c, "args", args);
    json_object_array_add(calls, c);
    return 0;
}

json_object *
ba_parse(const char *text, size_t n, err_t *err)
{
    lex_t l = {.p = text, .end = text + n, .start = text, .err = err};
    json_object *calls = json_object_new_array();
    for (;;) {
        skip_space(&l, true);
        while (l.p < l.end && *l.p == ';') {
            l.p++;
            skip_space(&l, true);
        }
        if (l.p >= l.end)
            break;
        if (json_object_array_length(calls) >= BA_MAX_CALLS) {
            fail(&l, "too many actions");
            json_object_put(calls);
            return NULL;
        }
        if (parse_call(&l, calls) < 0) {
            json_object_put(calls);
            return NULL;
        }
        skip_space(&l, false);
        if (l.p < l.end && *l.p != '\n' && *l.p != ';') {
            fail(&l, "expected a new line or ';' after an action");
            json_object_put(calls);
            return NULL;
        }
    }
    if (json_object_array_length(calls) == 0) {
        err_set(err, ERR_BAD_REQ, "no action");
        json_object_put(calls);
        return NULL;
    }
    return calls;
}
