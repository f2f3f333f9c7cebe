/* axtree.c — BrowserGym's accessibility listing from Chromium's tree (axtree.h). */
#include "axtree.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "xalloc.h"

/* BrowserGym's IGNORED_AXTREE_ROLES and IGNORED_AXTREE_PROPERTIES */
static const char *const ignored_props[] = {"editable",  "readonly", "level",    "settable",
                                            "multiline", "invalid",  "focusable"};

typedef struct {
    int64_t backend;
    const char *bid; /* borrowed from the snapshot's strings */
    bool clickable;
} elem_t;

typedef struct {
    json_object **nodes; /* the AX nodes, borrowed */
    size_t n;
    json_object *ids; /* nodeId -> index */
    elem_t *elems;
    size_t nelems;
    bool *seen;
    buf_t *out;
    bool full;
} ctx_t;

/* json-c asserts on arrays of the wrong type: the page's data is checked first. */
static size_t
arr_len(json_object *a)
{
    return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static int
elem_cmp(const void *a, const void *b)
{
    int64_t x = ((const elem_t *)a)->backend, y = ((const elem_t *)b)->backend;
    return x < y ? -1 : x > y;
}

/* Elements with a browsergym_id in the snapshot's main document. */
static void
load_elems(ctx_t *c, json_object *snap)
{
    json_object *strings = json_get(snap, "strings");
    json_object *docs = json_get(snap, "documents");
    json_object *doc = arr_len(docs) ? json_object_array_get_idx(docs, 0) : NULL;
    json_object *nodes = json_get(doc, "nodes");
    json_object *backend = json_get(nodes, "backendNodeId");
    json_object *attrs = json_get(nodes, "attributes");
    json_object *clickable = json_get(json_get(nodes, "isClickable"), "index");
    if (!json_object_is_type(strings, json_type_array) ||
        !json_object_is_type(backend, json_type_array) ||
        !json_object_is_type(attrs, json_type_array))
        return;
    size_t nstr = json_object_array_length(strings);
    size_t n = json_object_array_length(backend);
    if (json_object_array_length(attrs) < n)
        n = json_object_array_length(attrs);
    c->elems = xcalloc(n ? n : 1, sizeof *c->elems);
    bool *click = xcalloc(n ? n : 1, sizeof *click);
    for (size_t i = 0; i < arr_len(clickable); i++) {
        int64_t k = json_object_get_int64(json_object_array_get_idx(clickable, i));
        if (k >= 0 && (size_t)k < n)
            click[k] = true;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *a = json_object_array_get_idx(attrs, i);
        size_t na = arr_len(a);
        for (size_t k = 0; k + 1 < na; k += 2) {
            int64_t ki = json_object_get_int64(json_object_array_get_idx(a, k));
            int64_t vi = json_object_get_int64(json_object_array_get_idx(a, k + 1));
            if (ki < 0 || vi < 0 || (size_t)ki >= nstr || (size_t)vi >= nstr)
                continue;
            json_object *name = json_object_array_get_idx(strings, (size_t)ki);
            json_object *val = json_object_array_get_idx(strings, (size_t)vi);
            if (!json_object_is_type(name, json_type_string) ||
                !json_object_is_type(val, json_type_string) ||
                strcmp(json_object_get_string(name), "browsergym_id") != 0)
                continue;
            elem_t *e = &c->elems[c->nelems++];
            e->backend = json_object_get_int64(json_object_array_get_idx(backend, i));
            e->bid = json_object_get_string(val);
            e->clickable = click[i];
            break;
        }
    }
    free(click);
    qsort(c->elems, c->nelems, sizeof *c->elems, elem_cmp);
}

static const elem_t *
elem_of(const ctx_t *c, json_object *node)
{
    json_object *b = json_get(node, "backendDOMNodeId");
    if (!b || !c->nelems)
        return NULL;
    elem_t key = {.backend = json_object_get_int64(b)};
    return bsearch(&key, c->elems, c->nelems, sizeof key, elem_cmp);
}

/* One code point at s (n bytes left): its value and length; invalid bytes count as U+FFFD. */
static uint32_t
utf8_next(const unsigned char *s, size_t n, size_t *len)
{
    uint32_t cp = s[0];
    size_t l = cp < 0x80 ? 1 : (cp >> 5) == 6 ? 2 : (cp >> 4) == 14 ? 3 : (cp >> 3) == 30 ? 4 : 0;
    if (l == 0 || l > n) {
        *len = 1;
        return 0xFFFD;
    }
    if (l > 1)
        cp &= 0x3F >> (l - 1);
    for (size_t i = 1; i < l; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *len = 1;
            return 0xFFFD;
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    *len = l;
    return cp;
}

/* Characters Python's repr escapes although pages hold them: controls, the Latin-1 block's
 * controls and no-break space, soft hyphen, and the separators and format characters of the
 * General Punctuation block (str.isprintable() is false for them). */
static bool
py_unprintable(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD ||
           (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
           (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF ||
           (cp >= 0xD800 && cp <= 0xDFFF);
}

void
axtree_py_repr(buf_t *out, const char *s, size_t n)
{
    bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    buf_append(out, &q, 1);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t l;
        uint32_t cp = utf8_next(u + i, n - i, &l);
        if (cp == '\\' || cp == (uint32_t)q)
            buf_printf(out, "\\%c", (char)cp);
        else if (cp == '\n')
            buf_puts(out, "\\n");
        else if (cp == '\r')
            buf_puts(out, "\\r");
        else if (cp == '\t')
            buf_puts(out, "\\t");
        else if (cp == 0xFFFD && l == 1) /* an invalid byte, as Python's decoder replaces it */
            buf_puts(out, "\xef\xbf\xbd");
        else if (py_unprintable(cp))
            buf_printf(out, cp < 0x100 ? "\\x%02x" : "\\u%04x", (unsigned)cp);
        else
            buf_append(out, s + i, l);
        i += l;
    }
    buf_append(out, &q, 1);
}

/* Python's repr() of a JSON scalar as CDP gives it. */
static void
py_value(buf_t *out, json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_boolean: buf_puts(out, json_object_get_boolean(v) ? "True" : "False"); break;
    case json_type_int: buf_printf(out, "%lld", (long long)json_object_get_int64(v)); break;
    case json_type_double: {
        double d = json_object_get_double(v);
        char t[40];
        for (int prec = 1; prec <= 17; prec++) { /* the shortest text that reads back the same */
            snprintf(t, sizeof t, "%.*g", prec, d);
            if (strtod(t, NULL) == d)
                break;
        }
        buf_puts(out, t);
        if (!strpbrk(t, ".eEni")) /* 100.0, as Python writes a whole float */
            buf_puts(out, ".0");
        break;
    }
    case json_type_string:
        axtree_py_repr(out, json_object_get_string(v), (size_t)json_object_get_string_len(v));
        break;
    case json_type_null: buf_puts(out, "None"); break;
    default: buf_puts(out, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    }
}

/* str.strip() for the whitespace names hold (ASCII and no-break space). */
static const char *
strip(const char *s, size_t *n)
{
    size_t len = strlen(s);
    for (;;) {
        if (len && strchr(" \t\n\r\f\v", s[0])) {
            s++, len--;
        } else if (len >= 2 && (unsigned char)s[0] == 0xC2 && (unsigned char)s[1] == 0xA0) {
            s += 2, len -= 2;
        } else {
            break;
        }
    }
    for (;;) {
        if (len && strchr(" \t\n\r\f\v", s[len - 1]))
            len--;
        else if (len >= 2 && (unsigned char)s[len - 2] == 0xC2 && (unsigned char)s[len - 1] == 0xA0)
            len -= 2;
        else
            break;
    }
    *n = len;
    return s;
}

static const char *
prop_value_field(json_object *o, const char *key, json_object **val)
{
    json_object *wrap = json_get(o, key);
    *val = wrap ? json_get(wrap, "value") : NULL;
    return *val ? key : NULL;
}

static void
line_break(ctx_t *c)
{
    if (c->out->len)
        buf_puts(c->out, "\n");
}

/* BrowserGym's dfs(): prints node i at depth, then its children (one level deeper unless the
 * node was skipped). */
static void
dfs(ctx_t *c, size_t i, int depth, int level, const char *parent_name)
{
    /* level: the recursion's own depth (skipped nodes do not add to depth) */
    if (c->seen[i] || depth > AXTREE_MAX_DEPTH || level > 4 * AXTREE_MAX_DEPTH || c->full)
        return;
    c->seen[i] = true;
    json_object *node = c->nodes[i];
    const char *role = json_get_str(json_get(node, "role"), "value", "");
    json_object *namev = NULL;
    prop_value_field(node, "name", &namev);
    /* BrowserGym ignores LineBreak; Chromium also lists the InlineTextBox pieces of a text,
     * which BrowserGym's listings never show */
    bool skip =
        !strcmp(role, "LineBreak") || !strcmp(role, "InlineTextBox") || !json_get(node, "name");
    const char *name = skip || !namev ? "" : json_object_get_string(namev);
    if (!skip) {
        buf_t attrs = BUF_INIT;
        const elem_t *e = elem_of(c, node);
        if (e && e->clickable)
            buf_puts(&attrs, ", clickable");
        json_object *props = json_get(node, "properties");
        for (size_t k = 0; k < arr_len(props); k++) {
            json_object *p = json_object_array_get_idx(props, k);
            json_object *v = NULL;
            const char *pn = json_get_str(p, "name", "");
            if (!prop_value_field(p, "value", &v))
                continue;
            bool ignored = false;
            for (size_t x = 0; x < sizeof ignored_props / sizeof *ignored_props && !ignored; x++)
                ignored = !strcmp(pn, ignored_props[x]);
            if (ignored)
                continue;
            if (!strcmp(pn, "required") || !strcmp(pn, "focused") || !strcmp(pn, "atomic")) {
                if (json_object_get_boolean(v))
                    buf_printf(&attrs, ", %s", pn);
            } else {
                buf_printf(&attrs, ", %s=", pn);
                py_value(&attrs, v);
            }
        }
        /* StaticText repeating (a part of) its parent's name adds nothing */
        if (!strcmp(role, "StaticText") && *name && strstr(parent_name, name))
            skip = true;
        if (!skip) {
            line_break(c);
            for (int d = 0; d < depth; d++)
                buf_puts(c->out, "\t");
            if (e)
                buf_printf(c->out, "[%s] ", e->bid);
            buf_puts(c->out, role);
            if (strcmp(role, "generic") || *name) {
                size_t sl;
                const char *s = strip(name, &sl);
                buf_puts(c->out, " ");
                axtree_py_repr(c->out, s, sl);
            }
            json_object *val = NULL;
            if (prop_value_field(node, "value", &val)) {
                buf_puts(c->out, " value=");
                py_value(c->out, val);
            }
            buf_append(c->out, attrs.data ? attrs.data : "", attrs.len);
        }
        buf_free(&attrs);
    }
    if (c->out->len > AXTREE_MAX_BYTES) {
        buf_printf(c->out, "\n[... the accessibility tree is longer than %u bytes: cut here]",
                   AXTREE_MAX_BYTES);
        c->full = true;
        return;
    }
    json_object *kids = json_get(node, "childIds");
    for (size_t k = 0; k < arr_len(kids); k++) {
        json_object *kid = json_object_array_get_idx(kids, k);
        json_object *ix = json_object_is_type(kid, json_type_string)
                              ? json_get(c->ids, json_object_get_string(kid))
                              : NULL;
        if (ix)
            dfs(c, (size_t)json_object_get_int64(ix), skip ? depth : depth + 1, level + 1, name);
    }
}

void
axtree_format(json_object *ax, json_object *snap, buf_t *out)
{
    json_object *nodes = json_get(ax, "nodes");
    if (arr_len(nodes) == 0)
        return;
    ctx_t c = {.n = json_object_array_length(nodes), .out = out};
    c.nodes = xcalloc(c.n, sizeof *c.nodes);
    c.seen = xcalloc(c.n, sizeof *c.seen);
    c.ids = json_object_new_object();
    for (size_t i = 0; i < c.n; i++) {
        c.nodes[i] = json_object_array_get_idx(nodes, i);
        const char *id = json_get_str(c.nodes[i], "nodeId", NULL);
        if (id && !json_get(c.ids, id))
            json_object_object_add(c.ids, id, json_object_new_int64((int64_t)i));
    }
    if (snap)
        load_elems(&c, snap);
    buf_t mine = BUF_INIT; /* line breaks are decided within this listing only */
    c.out = &mine;
    dfs(&c, 0, 0, 0, "");
    buf_append(out, mine.data ? mine.data : "", mine.len);
    buf_free(&mine);
    json_object_put(c.ids);
    free(c.elems);
    free(c.seen);
    free(c.nodes);
}
