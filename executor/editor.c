/* editor.c — the OHEditor of openhands-aci 0.3.2 in C: view, create, str_replace, insert and
 * undo_edit with upstream's texts, plus the per-file undo history (10 entries per file).
 *
 * Texts follow openhands_aci/editor/{editor,exceptions,prompts,results}.py. Upstream reads files
 * in Python text mode, so "\r\n" and "\r" become "\n" on read and edited files are written back
 * with "\n" (as upstream does). Files are treated as UTF-8 bytes: upstream's charset detection is
 * not reproduced (a latin-1 file is edited byte for byte). Lengths and the 16,000-character limit
 * count code points, as Python's len() does. Writes are atomic (temp file + rename), keeping an
 * existing file's mode, where upstream's insert would leave a 0600 temp file in its place.
 *
 * Ownership: editor_t owns the history; ed_result_t owns its strings. No event loop, no threads. */
#include "file_actions.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "xalloc.h"

#define ED_HISTORY_MAX 10
#define ED_MAX_RESPONSE_CHARS 16000
#define ED_SNIPPET_CONTEXT 4
#define ED_MAX_FILE_SIZE (10LL * 1024 * 1024)

static const char TEXT_TRUNCATED_NOTICE[] =
    "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to "
    "you. You should retry this tool after you have searched inside the file with `grep -n` in "
    "order to find the line numbers of what you are looking for.</NOTE>";
static const char DIR_TRUNCATED_NOTICE[] =
    "<response clipped><NOTE>Due to the max output limit, only part of this directory has been "
    "shown to you. You should use `ls -la` instead to view large directories incrementally.</NOTE>";

static const char *const SUPPORTED_BINARY_EXT[] = {".docx", ".xlsx", ".pptx", ".pdf",
                                                   ".mp3",  ".wav",  ".m4a",  ".flac"};

typedef struct {
    char *key; /* resolved path */
    char *text[ED_HISTORY_MAX];
    size_t len[ED_HISTORY_MAX];
    int n;
} file_history_t;

struct editor {
    file_history_t *files;
    int nfiles, cap;
};

editor_t *
editor_new(void)
{
    return xcalloc(1, sizeof(editor_t));
}

void
editor_free(editor_t *ed)
{
    if (!ed)
        return;
    for (int i = 0; i < ed->nfiles; i++) {
        for (int k = 0; k < ed->files[i].n; k++)
            free(ed->files[i].text[k]);
        free(ed->files[i].key);
    }
    free(ed->files);
    free(ed);
}

void
ed_result_clear(ed_result_t *res)
{
    free(res->output);
    free(res->error);
    free(res->old_content);
    free(res->new_content);
    memset(res, 0, sizeof *res);
}

static file_history_t *
history_find(editor_t *ed, const char *key, int create)
{
    for (int i = 0; i < ed->nfiles; i++)
        if (strcmp(ed->files[i].key, key) == 0)
            return &ed->files[i];
    if (!create)
        return NULL;
    if (ed->nfiles == ed->cap) {
        ed->cap = ed->cap ? ed->cap * 2 : 8;
        ed->files = xrealloc(ed->files, (size_t)ed->cap * sizeof *ed->files);
    }
    file_history_t *h = &ed->files[ed->nfiles++];
    memset(h, 0, sizeof *h);
    h->key = xstrdup(key);
    return h;
}

/* Keeps the last ED_HISTORY_MAX entries, dropping the oldest (FileHistoryManager). */
static void
history_add(editor_t *ed, const char *key, const char *text, size_t len)
{
    file_history_t *h = history_find(ed, key, 1);
    if (h->n == ED_HISTORY_MAX) {
        free(h->text[0]);
        memmove(h->text, h->text + 1, (ED_HISTORY_MAX - 1) * sizeof h->text[0]);
        memmove(h->len, h->len + 1, (ED_HISTORY_MAX - 1) * sizeof h->len[0]);
        h->n--;
    }
    h->text[h->n] = xmalloc(len + 1);
    memcpy(h->text[h->n], text, len);
    h->text[h->n][len] = '\0';
    h->len[h->n++] = len;
}

static char *
history_pop(editor_t *ed, const char *key, size_t *len)
{
    file_history_t *h = history_find(ed, key, 0);
    if (!h || h->n == 0)
        return NULL;
    h->n--;
    *len = h->len[h->n];
    return h->text[h->n];
}

/* ---- small Python-compatible helpers ---- */

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

/* Python's OSError text: "[Errno 2] No such file or directory: '/x'". */
static void
py_oserror(buf_t *b, int e, const char *path)
{
    buf_printf(b, "[Errno %d] %s: '%s'", e, strerror(e), path);
}

/* Appends Python's repr() of a JSON value (for view_range in messages: "[1, 2]"). */
static void
py_repr(buf_t *b, json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: buf_puts(b, "None"); break;
    case json_type_boolean: buf_puts(b, json_object_get_boolean(v) ? "True" : "False"); break;
    case json_type_int: buf_printf(b, "%lld", (long long)json_object_get_int64(v)); break;
    case json_type_double: {
        double d = json_object_get_double(v);
        char tmp[40];
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(tmp, sizeof tmp, "%.*g", prec, d);
            if (strtod(tmp, NULL) == d)
                break;
        }
        buf_puts(b, tmp);
        if (!strpbrk(tmp, ".eni"))
            buf_puts(b, ".0");
        break;
    }
    case json_type_string: {
        const char *s = json_object_get_string(v);
        char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
        buf_append(b, &q, 1);
        for (; *s; s++) {
            if (*s == q || *s == '\\')
                buf_printf(b, "\\%c", *s);
            else if (*s == '\n')
                buf_puts(b, "\\n");
            else if (*s == '\t')
                buf_puts(b, "\\t");
            else
                buf_append(b, s, 1);
        }
        buf_append(b, &q, 1);
        break;
    }
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
        json_object_object_foreach(v, key, val) {
            buf_printf(b, "%s'%s': ", first ? "" : ", ", key);
            py_repr(b, val);
            first = 0;
        }
        buf_puts(b, "}");
        break;
    }
    }
}

/* str(value) in an f-string: a str prints bare, everything else as repr(). */
static void
py_str(buf_t *b, json_object *v)
{
    if (json_object_is_type(v, json_type_string))
        buf_puts(b, json_object_get_string(v));
    else
        py_repr(b, v);
}

/* Python truthiness of a JSON value (None, [], "", 0, {} and false are false). */
static int
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

/* Byte offset just past the first max code points of s (n if shorter). */
static size_t
utf8_prefix(const char *s, size_t n, size_t max)
{
    size_t chars = 0;
    for (size_t i = 0; i < n; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (chars == max)
                return i;
            chars++;
        }
    }
    return n;
}

static size_t
count_char(const char *s, size_t n, char c)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == c;
    return k;
}

/* Lines as Python iterates a text file: each ends at "\n" (the last may not). */
static long
count_lines(const char *s, size_t n)
{
    return (long)count_char(s, n, '\n') + (n && s[n - 1] != '\n');
}

/* Byte offset where 1-based line `line` starts (n if past the end). */
static size_t
line_offset(const char *s, size_t n, long line)
{
    size_t off = 0;
    for (long l = 1; l < line && off < n; l++) {
        const char *nl = memchr(s + off, '\n', n - off);
        off = nl ? (size_t)(nl - s) + 1 : n;
    }
    return off;
}

/* read_file(path, start_line, end_line): lines start..end inclusive, with their newlines. */
static void
line_span(const char *s, size_t n, long start, long end, size_t *off, size_t *len)
{
    if (start < 1)
        start = 1;
    if (end < start) {
        *off = 0;
        *len = 0;
        return;
    }
    *off = line_offset(s, n, start);
    *len = line_offset(s, n, end + 1) - *off;
}

/* ---- file I/O ---- */

/* Python text-mode read: universal newlines. Returns NULL or a ToolError text. */
static char *
read_text(const char *real, const char *display, buf_t *out)
{
    int fd = open(real, O_RDONLY | O_CLOEXEC);
    ssize_t r = 0;
    if (fd >= 0) {
        while ((r = read(fd, buf_reserve(out, 65536), 65536)) > 0)
            buf_advance(out, (size_t)r);
        int e = errno;
        close(fd);
        errno = e;
    }
    if (fd < 0 || r < 0) {
        buf_t m = BUF_INIT;
        buf_puts(&m, "Ran into ");
        py_oserror(&m, errno, display);
        buf_printf(&m, " while trying to read %s", display);
        return buf_steal(&m);
    }
    size_t w = 0;
    for (size_t i = 0; i < out->len; i++) {
        if (out->data[i] == '\r') {
            out->data[w++] = '\n';
            if (i + 1 < out->len && out->data[i + 1] == '\n')
                i++;
        } else {
            out->data[w++] = out->data[i];
        }
    }
    if (out->data) {
        out->len = w;
        out->data[w] = '\0';
    }
    return NULL;
}

static const char *
py_suffix(const char *path)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name || dot[1] == '\0')
        return "";
    return dot;
}

static int
is_supported_binary(const char *path)
{
    const char *suf = py_suffix(path);
    for (size_t i = 0; i < sizeof SUPPORTED_BINARY_EXT / sizeof *SUPPORTED_BINARY_EXT; i++)
        if (strcasecmp(suf, SUPPORTED_BINARY_EXT[i]) == 0)
            return 1;
    return 0;
}

/* validate_file(): NULL when fine, else a FileValidationError text. */
static char *
validate_file(const char *real, const char *display)
{
    struct stat st;
    if (stat(real, &st) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    if (st.st_size > ED_MAX_FILE_SIZE)
        return xasprintf("File validation failed for %s: File is too large (%.1fMB). Maximum "
                         "allowed size is %dMB.",
                         display, (double)st.st_size / 1024 / 1024, (int)(ED_MAX_FILE_SIZE >> 20));
    if (is_supported_binary(display))
        return NULL;
    if (fa_is_binary(real))
        return xasprintf("File validation failed for %s: File appears to be binary and this file "
                         "type cannot be read or edited by this tool.",
                         display);
    return NULL;
}

static char *
write_file(const char *real, const char *display, const char *text, size_t len)
{
    char *verr = validate_file(real, display);
    if (verr)
        return verr;
    int rc = fa_write_atomic(real, text, len, -1);
    if (rc >= 0)
        return NULL;
    buf_t m = BUF_INIT;
    buf_puts(&m, "Ran into ");
    py_oserror(&m, -rc, display);
    buf_printf(&m, " while trying to write to %s", display);
    return buf_steal(&m);
}

/* _make_output(): "Here's the result of running `cat -n` on {desc}:\n" + numbered lines. */
static void
make_output(buf_t *out, const char *s, size_t n, const char *desc, long start)
{
    buf_printf(out, "Here's the result of running `cat -n` on %s:\n", desc);
    size_t cut = utf8_prefix(s, n, ED_MAX_RESPONSE_CHARS);
    buf_t body = BUF_INIT;
    buf_append(&body, s, cut);
    if (cut < n)
        buf_puts(&body, TEXT_TRUNCATED_NOTICE);
    size_t off = 0;
    for (long line = start;; line++) {
        const char *nl = body.len > off ? memchr(body.data + off, '\n', body.len - off) : NULL;
        size_t end = nl ? (size_t)(nl - body.data) : body.len;
        buf_printf(out, "%6ld\t", line);
        buf_append(out, body.data + off, end - off);
        if (!nl)
            break;
        buf_puts(out, "\n");
        off = end + 1;
    }
    buf_puts(out, "\n");
    buf_free(&body);
}

static int
set_error(ed_result_t *res, char *msg)
{
    res->error = msg;
    res->error_len = strlen(msg);
    return 0;
}

static int
set_output(ed_result_t *res, buf_t *out)
{
    res->output_len = out->len;
    res->output = buf_steal(out);
    return 0;
}

static char *
dup_bytes(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* ---- view ---- */

typedef struct {
    char *line;
    int is_dir;
} dir_entry_t;

static int
dir_entry_cmp(const void *a, const void *b)
{
    return strcmp(((const dir_entry_t *)a)->line, ((const dir_entry_t *)b)->line);
}

static char *
join(const char *dir, const char *name)
{
    return xasprintf("%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);
}

static int
is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct {
    dir_entry_t *v;
    size_t n, cap;
} dir_list_t;

static void
dir_list_add(dir_list_t *l, char *line, int dir)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n].line = line;
    l->v[l->n++].is_dir = dir;
}

/* Lists the non-hidden children of real (shown under display). With depth 1 it also lists
 * their non-hidden children, like `find -L` with -maxdepth 2. Errors go to find_err as find
 * prints them. Returns the number of hidden entries. */
static int
list_children(dir_list_t *l, const char *real, const char *display, int depth, buf_t *find_err)
{
    DIR *d = opendir(real);
    if (!d) {
        buf_printf(find_err, "find: '%s': %s\n", display, strerror(errno));
        return 0;
    }
    int hidden = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (de->d_name[0] == '.') {
            hidden++;
            continue;
        }
        char *child_real = join(real, de->d_name);
        int dir = is_dir(child_real);
        char *child_display = join(display, de->d_name);
        dir_list_add(l, child_display, dir);
        if (dir && depth == 1)
            list_children(l, child_real, child_display, 2, find_err);
        free(child_real);
    }
    closedir(d);
    return hidden;
}

static int
view_directory(const char *real, const char *display, json_object *view_range, ed_result_t *res)
{
    if (view_range && py_truthy(view_range)) {
        buf_t m = BUF_INIT;
        buf_puts(&m, "Invalid `view_range` parameter: ");
        py_str(&m, view_range);
        buf_puts(&m, ". The `view_range` parameter is not allowed when `path` points to a directory.");
        return set_error(res, buf_steal(&m));
    }
    dir_list_t l = {0};
    buf_t find_err = BUF_INIT;
    dir_list_add(&l, xstrdup(display), 1);
    int hidden = list_children(&l, real, display, 1, &find_err);
    qsort(l.v, l.n, sizeof *l.v, dir_entry_cmp);

    /* run_shell_cmd() truncates find's raw stdout before the trailing "/" are added. */
    buf_t raw = BUF_INIT;
    for (size_t i = 0; i < l.n; i++)
        buf_printf(&raw, "%s\n", l.v[i].line);
    size_t cut = utf8_prefix(raw.data, raw.len, ED_MAX_RESPONSE_CHARS);
    if (cut < raw.len) {
        raw.len = cut;
        buf_puts(&raw, DIR_TRUNCATED_NOTICE);
    }
    size_t off = 0, len = raw.len;
    fa_py_strip(raw.data, raw.len, &off, &len);

    if (find_err.len) {
        set_error(res, buf_steal(&find_err));
    } else {
        buf_t out = BUF_INIT;
        buf_printf(&out, "Here's the files and directories up to 2 levels deep in %s, excluding hidden items:\n",
                   display);
        size_t pos = off, idx = 0;
        while (len > 0 && pos <= off + len) {
            const char *nl = memchr(raw.data + pos, '\n', off + len - pos);
            size_t end = nl ? (size_t)(nl - raw.data) : off + len;
            buf_append(&out, raw.data + pos, end - pos);
            if (idx < l.n && l.v[idx].is_dir && strlen(l.v[idx].line) == end - pos &&
                memcmp(l.v[idx].line, raw.data + pos, end - pos) == 0)
                buf_puts(&out, "/");
            idx++;
            if (!nl)
                break;
            buf_puts(&out, "\n");
            pos = end + 1;
        }
        if (hidden > 0)
            buf_printf(&out,
                       "\n\n%d hidden files/directories in this directory are excluded. You can use "
                       "'ls -la %s' to see them.",
                       hidden, display);
        set_output(res, &out);
    }
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i].line);
    free(l.v);
    buf_free(&raw);
    buf_free(&find_err);
    return 0;
}

static int
view_range_error(ed_result_t *res, json_object *vr, const char *hint)
{
    buf_t m = BUF_INIT;
    buf_puts(&m, "Invalid `view_range` parameter: ");
    py_str(&m, vr);
    buf_printf(&m, ". %s", hint);
    return set_error(res, buf_steal(&m));
}

static int
view_file(const char *real, const char *display, json_object *vr, ed_result_t *res)
{
    char *msg = validate_file(real, display);
    if (msg)
        return set_error(res, msg);
    if (is_supported_binary(display))
        /* Upstream converts Office/PDF/audio files to Markdown; this runtime has no converter. */
        return set_error(res, xasprintf("Error in converting file to Markdown: conversion of %s files "
                                        "is not supported by this runtime. Please use Python code to "
                                        "read %s",
                                        py_suffix(display), display));
    buf_t text = BUF_INIT, out = BUF_INIT;
    if ((msg = read_text(real, display, &text))) {
        buf_free(&text);
        return set_error(res, msg);
    }
    long num_lines = count_lines(text.data, text.len);
    if (!vr || !py_truthy(vr)) {
        make_output(&out, text.data ? text.data : "", text.len, display, 1);
        buf_free(&text);
        return set_output(res, &out);
    }
    buf_free(&text);
    if (json_object_is_type(vr, json_type_int) || json_object_is_type(vr, json_type_double) ||
        json_object_is_type(vr, json_type_boolean))
        /* len() of a number: a TypeError, which _execute_file_editor reports as is. */
        return set_error(res, xasprintf("object of type '%s' has no len()",
                                        json_object_is_type(vr, json_type_int)      ? "int"
                                        : json_object_is_type(vr, json_type_double) ? "float"
                                                                                    : "bool"));
    if (!json_object_is_type(vr, json_type_array) || json_object_array_length(vr) != 2 ||
        !(json_object_is_type(json_object_array_get_idx(vr, 0), json_type_int) ||
          json_object_is_type(json_object_array_get_idx(vr, 0), json_type_boolean)) ||
        !(json_object_is_type(json_object_array_get_idx(vr, 1), json_type_int) ||
          json_object_is_type(json_object_array_get_idx(vr, 1), json_type_boolean)))
        return view_range_error(res, vr, "It should be a list of two integers.");
    long long start = json_object_get_int64(json_object_array_get_idx(vr, 0));
    long long end = json_object_get_int64(json_object_array_get_idx(vr, 1));
    if (start < 1 || start > num_lines) {
        char hint[160];
        snprintf(hint, sizeof hint,
                 "Its first element `%lld` should be within the range of lines of the file: [1, %ld].",
                 start, num_lines);
        return view_range_error(res, vr, hint);
    }
    int clamped = 0;
    if (end == -1) {
        end = num_lines;
    } else if (end > num_lines) {
        clamped = 1;
        end = num_lines;
    }
    if (end < start) {
        char hint[160];
        snprintf(hint, sizeof hint,
                 "Its second element `%lld` should be greater than or equal to the first element `%lld`.",
                 end, start);
        return view_range_error(res, vr, hint);
    }
    buf_t again = BUF_INIT;
    if ((msg = read_text(real, display, &again))) {
        buf_free(&again);
        return set_error(res, msg);
    }
    size_t off, len;
    line_span(again.data, again.len, (long)start, (long)end, &off, &len);
    /* '\n'.join(content.splitlines()): drops the final newline of the range. */
    if (len && again.data[off + len - 1] == '\n')
        len--;
    if (clamped)
        buf_printf(&out, "NOTE: We only show up to %ld since there're only %ld lines in this file.\n",
                   num_lines, num_lines);
    make_output(&out, again.data ? again.data + off : "", len, display, (long)start);
    buf_free(&again);
    return set_output(res, &out);
}

/* ---- create, str_replace, insert, undo_edit ---- */

static int
missing(ed_result_t *res, const char *command, const char *param)
{
    return set_error(res, xasprintf("Parameter `%s` is required for command: %s.", param, command));
}

static int
cmd_create(editor_t *ed, const char *real, const char *display, const ed_args_t *a, ed_result_t *res)
{
    if (!a->file_text)
        return missing(res, "create", "file_text");
    char *msg = write_file(real, display, a->file_text, a->file_text_len);
    if (msg)
        return set_error(res, msg);
    history_add(ed, real, a->file_text, a->file_text_len);
    buf_t out = BUF_INIT;
    buf_printf(&out, "File created successfully at: %s", display);
    res->new_content = dup_bytes(a->file_text, a->file_text_len);
    res->new_len = a->file_text_len;
    return set_output(res, &out);
}

/* Non-overlapping matches (re.finditer); returns their count, the first offset, and the
 * distinct 1-based line numbers as a Python list in lines_repr. */
static size_t
find_occurrences(const char *s, size_t n, const char *pat, size_t pn, size_t *first, buf_t *lines_repr)
{
    size_t count = 0;
    long last_line = 0, line = 1;
    size_t scanned = 0;
    buf_puts(lines_repr, "[");
    if (pn == 0) {
        /* An empty pattern matches at every position: every line. */
        *first = 0;
        count = n + 1;
        long total = (long)count_char(s, n, '\n') + 1;
        for (long l = 1; l <= total; l++)
            buf_printf(lines_repr, "%s%ld", l > 1 ? ", " : "", l);
    } else {
        const char *p = s;
        while ((p = memmem(p, n - (size_t)(p - s), pat, pn))) {
            size_t pos = (size_t)(p - s);
            line += (long)count_char(s + scanned, pos - scanned, '\n');
            scanned = pos;
            if (count++ == 0)
                *first = pos;
            if (line != last_line)
                buf_printf(lines_repr, "%s%ld", last_line ? ", " : "", line);
            last_line = line;
            p += pn;
        }
    }
    buf_puts(lines_repr, "]");
    return count;
}

static int
cmd_str_replace(editor_t *ed, const char *real, const char *display, const ed_args_t *a, ed_result_t *res)
{
    if (!a->old_str)
        return missing(res, "str_replace", "old_str");
    if (a->new_str && a->new_len == a->old_len && memcmp(a->new_str, a->old_str, a->old_len) == 0) {
        buf_t m = BUF_INIT;
        buf_puts(&m, "Invalid `new_str` parameter: ");
        buf_append(&m, a->new_str, a->new_len);
        buf_puts(&m, ". No replacement was performed. `new_str` and `old_str` must be different.");
        return set_error(res, buf_steal(&m));
    }
    char *msg = validate_file(real, display);
    if (msg)
        return set_error(res, msg);
    buf_t text = BUF_INIT;
    if ((msg = read_text(real, display, &text))) {
        buf_free(&text);
        return set_error(res, msg);
    }
    const char *old = a->old_str, *new = a->new_str ? a->new_str : "";
    size_t old_len = a->old_len, new_len = a->new_str ? a->new_len : 0, idx = 0;
    buf_t lines = BUF_INIT;
    size_t count = find_occurrences(text.data, text.len, old, old_len, &idx, &lines);
    if (count == 0) {
        /* Retry without surrounding whitespace, on both old_str and new_str. */
        size_t o;
        fa_py_strip(old, old_len, &o, &old_len);
        old += o;
        fa_py_strip(new, new_len, &o, &new_len);
        new += o;
        buf_clear(&lines);
        count = find_occurrences(text.data, text.len, old, old_len, &idx, &lines);
    }
    if (count != 1) {
        buf_t m = BUF_INIT;
        buf_puts(&m, count == 0 ? "No replacement was performed, old_str `"
                                : "No replacement was performed. Multiple occurrences of old_str `");
        buf_append(&m, old, old_len);
        if (count == 0)
            buf_printf(&m, "` did not appear verbatim in %s.", display);
        else
            buf_printf(&m, "` in lines %s. Please ensure it is unique.", lines.data);
        buf_free(&lines);
        buf_free(&text);
        return set_error(res, buf_steal(&m));
    }
    buf_free(&lines);
    long line = (long)count_char(text.data, idx, '\n') + 1;
    buf_t updated = BUF_INIT;
    buf_append(&updated, text.data, idx);
    buf_append(&updated, new, new_len);
    buf_append(&updated, text.data + idx + old_len, text.len - idx - old_len);
    if ((msg = write_file(real, display, updated.data, updated.len))) {
        buf_free(&updated);
        buf_free(&text);
        return set_error(res, msg);
    }
    history_add(ed, real, text.data ? text.data : "", text.len);

    long start = line - ED_SNIPPET_CONTEXT > 0 ? line - ED_SNIPPET_CONTEXT : 0;
    long end = line + ED_SNIPPET_CONTEXT + (long)count_char(new, new_len, '\n');
    size_t off, len;
    line_span(updated.data, updated.len, start + 1, end, &off, &len);
    buf_t out = BUF_INIT;
    char *desc = xasprintf("a snippet of %s", display);
    buf_printf(&out, "The file %s has been edited. ", display);
    make_output(&out, updated.data + off, len, desc, start + 1);
    free(desc);
    buf_puts(&out, "Review the changes and make sure they are as expected. Edit the file again if necessary.");
    res->old_len = text.len;
    res->old_content = buf_steal(&text);
    res->new_len = updated.len;
    res->new_content = buf_steal(&updated);
    return set_output(res, &out);
}

static int
cmd_insert(editor_t *ed, const char *real, const char *display, const ed_args_t *a, ed_result_t *res)
{
    if (!a->has_insert_line)
        return missing(res, "insert", "insert_line");
    if (!a->new_str)
        return missing(res, "insert", "new_str");
    char *msg = validate_file(real, display);
    if (msg)
        return set_error(res, msg);
    buf_t text = BUF_INIT;
    if ((msg = read_text(real, display, &text))) {
        buf_free(&text);
        return set_error(res, msg);
    }
    long num_lines = count_lines(text.data, text.len);
    long long at = a->insert_line;
    if (at < 0 || at > num_lines) {
        buf_free(&text);
        return set_error(res, xasprintf("Invalid `insert_line` parameter: %lld. It should be within the "
                                        "range of allowed values: [0, %ld]",
                                        at, num_lines));
    }
    /* Lines before the insertion point are copied as they are, so a last line without "\n"
     * runs into the inserted text, as upstream's line-by-line copy does. */
    size_t split = line_offset(text.data, text.len, (long)at + 1);
    buf_t updated = BUF_INIT;
    buf_append(&updated, text.data, split);
    buf_append(&updated, a->new_str, a->new_len);
    buf_puts(&updated, "\n");
    buf_append(&updated, text.data + split, text.len - split);
    if ((msg = write_file(real, display, updated.data, updated.len))) {
        buf_free(&updated);
        buf_free(&text);
        return set_error(res, msg);
    }
    long new_lines = (long)count_char(a->new_str, a->new_len, '\n') + 1;
    long start = at - ED_SNIPPET_CONTEXT > 0 ? (long)at - ED_SNIPPET_CONTEXT : 0;
    long end = (long)at + ED_SNIPPET_CONTEXT + new_lines;
    if (num_lines + new_lines < end)
        end = num_lines + new_lines;
    size_t off, len;
    line_span(updated.data, updated.len, start + 1, end, &off, &len);
    history_add(ed, real, text.data ? text.data : "", text.len);

    buf_t out = BUF_INIT;
    buf_printf(&out, "The file %s has been edited. ", display);
    make_output(&out, updated.data + off, len, "a snippet of the edited file",
                at - ED_SNIPPET_CONTEXT + 1 > 1 ? (long)at - ED_SNIPPET_CONTEXT + 1 : 1);
    buf_puts(&out, "Review the changes and make sure they are as expected (correct indentation, no "
                   "duplicate lines, etc). Edit the file again if necessary.");
    res->old_len = text.len;
    res->old_content = buf_steal(&text);
    res->new_len = updated.len;
    res->new_content = buf_steal(&updated);
    return set_output(res, &out);
}

static int
cmd_undo_edit(editor_t *ed, const char *real, const char *display, ed_result_t *res)
{
    char *msg = validate_file(real, display);
    if (msg)
        return set_error(res, msg);
    buf_t current = BUF_INIT;
    if ((msg = read_text(real, display, &current))) {
        buf_free(&current);
        return set_error(res, msg);
    }
    size_t len = 0;
    char *old = history_pop(ed, real, &len);
    if (!old) {
        buf_free(&current);
        return set_error(res, xasprintf("No edit history found for %s.", display));
    }
    if ((msg = write_file(real, display, old, len))) {
        free(old);
        buf_free(&current);
        return set_error(res, msg);
    }
    buf_t out = BUF_INIT;
    buf_printf(&out, "Last edit to %s undone successfully. ", display);
    make_output(&out, old, len, display, 1);
    res->old_len = current.len;
    res->old_content = buf_steal(&current);
    res->new_len = len;
    res->new_content = old;
    return set_output(res, &out);
}

/* ---- dispatch: OHEditor.__call__ and validate_path ---- */

static int
invalid_path(ed_result_t *res, const char *display, const char *hint)
{
    return set_error(res, xasprintf("Invalid `path` parameter: %s. %s", display, hint));
}

int
editor_run(editor_t *ed, const fa_ctx_t *ctx, const ed_args_t *a, ed_result_t *res)
{
    memset(res, 0, sizeof *res);
    const char *cmd = a->command ? a->command : "";
    char *display = fa_py_path(a->path ? a->path : "");
    char real[PATH_MAX], hint[PATH_MAX * 2 + 200];
    int rc = 0;
    if (display[0] != '/') {
        int n = snprintf(hint, sizeof hint, "The path should be an absolute path, starting with `/`.");
        if (ctx->workspace) {
            char *joined = xasprintf("%s/%s", ctx->workspace, display);
            char *suggested = fa_py_path(joined);
            struct stat st;
            if (stat(suggested, &st) == 0)
                snprintf(hint + n, sizeof hint - (size_t)n, " Maybe you meant %s?", suggested);
            free(joined);
            free(suggested);
        }
        invalid_path(res, display, hint);
        goto out;
    }
    err_t err;
    if (path_resolve(ctx->roots, "/", display, PATH_FOLLOW, real, &err) < 0) {
        /* Same words as OpenHands' own workspace check (runtime/utils/files.py). */
        set_error(res, err.code == ERR_ESCAPE
                           ? xasprintf("You're not allowed to access this path: %s. You can only access "
                                       "paths inside the workspace.",
                                       display)
                           : xasprintf("%s", err.msg));
        rc = -ERR_ESCAPE;
        goto out;
    }
    struct stat st;
    int exists = stat(real, &st) == 0, dir = exists && S_ISDIR(st.st_mode);
    int create = strcmp(cmd, "create") == 0;
    if (create && exists) {
        snprintf(hint, sizeof hint,
                 "File already exists at: %s. Cannot overwrite files using command `create`.", display);
        invalid_path(res, display, hint);
    } else if (!create && !exists) {
        snprintf(hint, sizeof hint, "The path %s does not exist. Please provide a valid path.", display);
        invalid_path(res, display, hint);
    } else if (strcmp(cmd, "view") != 0 && dir) {
        snprintf(hint, sizeof hint,
                 "The path %s is a directory and only the `view` command can be used on directories.",
                 display);
        invalid_path(res, display, hint);
    } else if (strcmp(cmd, "view") != 0 && is_supported_binary(display)) {
        snprintf(hint, sizeof hint,
                 "The path %s points to a binary file (%s) and only the `view` command can be used on "
                 "supported binary files.",
                 display, py_suffix(display));
        invalid_path(res, display, hint);
    } else if (strcmp(cmd, "view") == 0) {
        if (dir)
            view_directory(real, display, a->view_range, res);
        else
            view_file(real, display, a->view_range, res);
    } else if (create) {
        cmd_create(ed, real, display, a, res);
    } else if (strcmp(cmd, "str_replace") == 0) {
        cmd_str_replace(ed, real, display, a, res);
    } else if (strcmp(cmd, "insert") == 0) {
        cmd_insert(ed, real, display, a, res);
    } else if (strcmp(cmd, "undo_edit") == 0) {
        cmd_undo_edit(ed, real, display, res);
    } else {
        set_error(res, xasprintf("Unrecognized command %s. The allowed commands for the oh_editor tool "
                                 "are: view, create, str_replace, insert, undo_edit",
                                 cmd));
    }
out:
    free(display);
    return rc;
}

/* str.isspace() for the code point starting at s[i]; its width in *w. */
static int
py_space_at(const char *s, size_t n, size_t i, size_t *w)
{
    unsigned char c = (unsigned char)s[i];
    *w = 1;
    if ((c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20))
        return 1;
    if (c == 0xC2 && i + 1 < n && ((unsigned char)s[i + 1] == 0x85 || (unsigned char)s[i + 1] == 0xA0)) {
        *w = 2;
        return 1;
    }
    if (i + 2 < n && c == 0xE2 && (unsigned char)s[i + 1] == 0x80) {
        unsigned char d = (unsigned char)s[i + 2];
        *w = 3;
        return d <= 0x8A || d == 0xA8 || d == 0xA9 || d == 0xAF;
    }
    if (i + 2 < n && c == 0xE3 && (unsigned char)s[i + 1] == 0x80 && (unsigned char)s[i + 2] == 0x80) {
        *w = 3;
        return 1;
    }
    return 0;
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
