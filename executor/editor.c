/* editor.c — the OHEditor of openhands-aci 0.3.2 in C: the command dispatch (OHEditor.__call__
 * and validate_path), create, str_replace, insert and undo_edit with upstream's texts, and the
 * per-file undo history (10 entries per file). `view` is in editor_view.c; reading, validating,
 * writing and showing files (`cat -n`) in editor_io.c.
 *
 * Texts follow openhands_aci/editor/{editor,exceptions,prompts,results}.py. Upstream reads files
 * in Python text mode, so "\r\n" and "\r" become "\n" on read and edited files are written back
 * with "\n" (as upstream does). Files are treated as UTF-8 bytes: upstream's charset detection is
 * not reproduced (a latin-1 file is edited byte for byte). Lengths and the 16,000-character limit
 * count code points, as Python's len() does. Writes are atomic (temp file + rename), keeping an
 * existing file's mode, where upstream's insert would leave a 0600 temp file in its place.
 *
 * Ownership: editor_t owns the history; ed_result_t owns its strings. No event loop, no threads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "editor_int.h"
#include "file_kind.h"
#include "py_compat.h"
#include "xalloc.h"

#define ED_HISTORY_MAX     10
#define ED_SNIPPET_CONTEXT 4

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

static char *
dup_bytes(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* ---- create, str_replace, insert, undo_edit ---- */

static int
missing(ed_result_t *res, const char *command, const char *param)
{
    return ed_set_error(res,
                        xasprintf("Parameter `%s` is required for command: %s.", param, command));
}

/* The existing text file's contents into text (freed on failure): NULL, or the error text. */
static char *
read_existing(const char *real, const char *display, buf_t *text)
{
    char *msg = ed_validate_file(real, display);
    if (!msg && (msg = ed_read_text(real, display, text)))
        buf_free(text);
    return msg;
}

/* An edit's result: the text before and after (both taken) and the output. */
static int
edited(ed_result_t *res, buf_t *before, char *after, size_t after_len, buf_t *out)
{
    res->old_len = before->len;
    res->old_content = buf_steal(before);
    res->new_len = after_len;
    res->new_content = after;
    return ed_set_output(res, out);
}

static int
cmd_create(editor_t *ed, const char *real, const char *display, const ed_args_t *a,
           ed_result_t *res)
{
    if (!a->file_text)
        return missing(res, "create", "file_text");
    char *msg = ed_write_file(real, display, a->file_text, a->file_text_len);
    if (msg)
        return ed_set_error(res, msg);
    history_add(ed, real, a->file_text, a->file_text_len);
    buf_t out = BUF_INIT;
    buf_printf(&out, "File created successfully at: %s", display);
    res->new_content = dup_bytes(a->file_text, a->file_text_len);
    res->new_len = a->file_text_len;
    return ed_set_output(res, &out);
}

/* Non-overlapping matches (re.finditer); returns their count, the first offset, and the
 * distinct 1-based line numbers as a Python list in lines_repr. */
static size_t
find_occurrences(const char *s, size_t n, const char *pat, size_t pn, size_t *first,
                 buf_t *lines_repr)
{
    size_t count = 0;
    long last_line = 0, line = 1;
    size_t scanned = 0;
    buf_puts(lines_repr, "[");
    if (pn == 0) {
        /* An empty pattern matches at every position: every line. */
        *first = 0;
        count = n + 1;
        long total = (long)ed_count_char(s, n, '\n') + 1;
        for (long l = 1; l <= total; l++)
            buf_printf(lines_repr, "%s%ld", l > 1 ? ", " : "", l);
    } else {
        const char *p = s;
        while ((p = memmem(p, n - (size_t)(p - s), pat, pn))) {
            size_t pos = (size_t)(p - s);
            line += (long)ed_count_char(s + scanned, pos - scanned, '\n');
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
cmd_str_replace(editor_t *ed, const char *real, const char *display, const ed_args_t *a,
                ed_result_t *res)
{
    if (!a->old_str)
        return missing(res, "str_replace", "old_str");
    if (a->new_str && a->new_len == a->old_len && memcmp(a->new_str, a->old_str, a->old_len) == 0) {
        buf_t m = BUF_INIT;
        buf_puts(&m, "Invalid `new_str` parameter: ");
        buf_append(&m, a->new_str, a->new_len);
        buf_puts(&m, ". No replacement was performed. `new_str` and `old_str` must be different.");
        return ed_set_error(res, buf_steal(&m));
    }
    buf_t text = BUF_INIT;
    char *msg = read_existing(real, display, &text);
    if (msg)
        return ed_set_error(res, msg);
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
        buf_puts(&m, count == 0
                         ? "No replacement was performed, old_str `"
                         : "No replacement was performed. Multiple occurrences of old_str `");
        buf_append(&m, old, old_len);
        if (count == 0)
            buf_printf(&m, "` did not appear verbatim in %s.", display);
        else
            buf_printf(&m, "` in lines %s. Please ensure it is unique.", lines.data);
        buf_free(&lines);
        buf_free(&text);
        return ed_set_error(res, buf_steal(&m));
    }
    buf_free(&lines);
    long line = (long)ed_count_char(text.data, idx, '\n') + 1;
    buf_t updated = BUF_INIT;
    buf_append(&updated, text.data, idx);
    buf_append(&updated, new, new_len);
    buf_append(&updated, text.data + idx + old_len, text.len - idx - old_len);
    if ((msg = ed_write_file(real, display, updated.data, updated.len))) {
        buf_free(&updated);
        buf_free(&text);
        return ed_set_error(res, msg);
    }
    history_add(ed, real, text.data ? text.data : "", text.len);

    long start = line - ED_SNIPPET_CONTEXT > 0 ? line - ED_SNIPPET_CONTEXT : 0;
    long end = line + ED_SNIPPET_CONTEXT + (long)ed_count_char(new, new_len, '\n');
    size_t off, len;
    ed_line_span(updated.data, updated.len, start + 1, end, &off, &len);
    buf_t out = BUF_INIT;
    char *desc = xasprintf("a snippet of %s", display);
    buf_printf(&out, "The file %s has been edited. ", display);
    ed_make_output(&out, updated.data + off, len, desc, start + 1);
    free(desc);
    buf_puts(
        &out,
        "Review the changes and make sure they are as expected. Edit the file again if necessary.");
    size_t updated_len = updated.len;
    return edited(res, &text, buf_steal(&updated), updated_len, &out);
}

static int
cmd_insert(editor_t *ed, const char *real, const char *display, const ed_args_t *a,
           ed_result_t *res)
{
    if (!a->has_insert_line)
        return missing(res, "insert", "insert_line");
    if (!a->new_str)
        return missing(res, "insert", "new_str");
    buf_t text = BUF_INIT;
    char *msg = read_existing(real, display, &text);
    if (msg)
        return ed_set_error(res, msg);
    long num_lines = ed_count_lines(text.data, text.len);
    long long at = a->insert_line;
    if (at < 0 || at > num_lines) {
        buf_free(&text);
        return ed_set_error(
            res, xasprintf("Invalid `insert_line` parameter: %lld. It should be within the "
                           "range of allowed values: [0, %ld]",
                           at, num_lines));
    }
    /* Lines before the insertion point are copied as they are, so a last line without "\n"
     * runs into the inserted text, as upstream's line-by-line copy does. */
    size_t split = ed_line_offset(text.data, text.len, (long)at + 1);
    buf_t updated = BUF_INIT;
    buf_append(&updated, text.data, split);
    buf_append(&updated, a->new_str, a->new_len);
    buf_puts(&updated, "\n");
    buf_append(&updated, text.data + split, text.len - split);
    if ((msg = ed_write_file(real, display, updated.data, updated.len))) {
        buf_free(&updated);
        buf_free(&text);
        return ed_set_error(res, msg);
    }
    long new_lines = (long)ed_count_char(a->new_str, a->new_len, '\n') + 1;
    long start = at - ED_SNIPPET_CONTEXT > 0 ? (long)at - ED_SNIPPET_CONTEXT : 0;
    long end = (long)at + ED_SNIPPET_CONTEXT + new_lines;
    if (num_lines + new_lines < end)
        end = num_lines + new_lines;
    size_t off, len;
    ed_line_span(updated.data, updated.len, start + 1, end, &off, &len);
    history_add(ed, real, text.data ? text.data : "", text.len);

    buf_t out = BUF_INIT;
    buf_printf(&out, "The file %s has been edited. ", display);
    ed_make_output(&out, updated.data + off, len, "a snippet of the edited file",
                   at - ED_SNIPPET_CONTEXT + 1 > 1 ? (long)at - ED_SNIPPET_CONTEXT + 1 : 1);
    buf_puts(&out, "Review the changes and make sure they are as expected (correct indentation, no "
                   "duplicate lines, etc). Edit the file again if necessary.");
    size_t updated_len = updated.len;
    return edited(res, &text, buf_steal(&updated), updated_len, &out);
}

static int
cmd_undo_edit(editor_t *ed, const char *real, const char *display, ed_result_t *res)
{
    buf_t current = BUF_INIT;
    char *msg = read_existing(real, display, &current);
    if (msg)
        return ed_set_error(res, msg);
    size_t len = 0;
    char *old = history_pop(ed, real, &len);
    if (!old) {
        buf_free(&current);
        return ed_set_error(res, xasprintf("No edit history found for %s.", display));
    }
    if ((msg = ed_write_file(real, display, old, len))) {
        free(old);
        buf_free(&current);
        return ed_set_error(res, msg);
    }
    buf_t out = BUF_INIT;
    buf_printf(&out, "Last edit to %s undone successfully. ", display);
    ed_make_output(&out, old, len, display, 1);
    return edited(res, &current, old, len, &out);
}

/* ---- dispatch: OHEditor.__call__ and validate_path ---- */

static int
invalid_path(ed_result_t *res, const char *display, const char *hint)
{
    return ed_set_error(res, xasprintf("Invalid `path` parameter: %s. %s", display, hint));
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
        int n =
            snprintf(hint, sizeof hint, "The path should be an absolute path, starting with `/`.");
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
        /* Only an executor confined to its workspace (no sandbox) gets here with ERR_ESCAPE: same
         * words as OpenHands' own workspace check (runtime/utils/files.py). */
        ed_set_error(
            res, err.code == ERR_ESCAPE
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
                 "File already exists at: %s. Cannot overwrite files using command `create`.",
                 display);
        invalid_path(res, display, hint);
    } else if (!create && !exists) {
        snprintf(hint, sizeof hint, "The path %s does not exist. Please provide a valid path.",
                 display);
        invalid_path(res, display, hint);
    } else if (strcmp(cmd, "view") != 0 && dir) {
        snprintf(
            hint, sizeof hint,
            "The path %s is a directory and only the `view` command can be used on directories.",
            display);
        invalid_path(res, display, hint);
    } else if (strcmp(cmd, "view") != 0 && fa_is_supported_binary(display)) {
        snprintf(
            hint, sizeof hint,
            "The path %s points to a binary file (%s) and only the `view` command can be used on "
            "supported binary files.",
            display, py_suffix(display));
        invalid_path(res, display, hint);
    } else if (strcmp(cmd, "view") == 0) {
        if (dir)
            ed_view_directory(real, display, a->view_range, res);
        else
            ed_view_file(real, display, a->view_range, res);
    } else if (create) {
        cmd_create(ed, real, display, a, res);
    } else if (strcmp(cmd, "str_replace") == 0) {
        cmd_str_replace(ed, real, display, a, res);
    } else if (strcmp(cmd, "insert") == 0) {
        cmd_insert(ed, real, display, a, res);
    } else if (strcmp(cmd, "undo_edit") == 0) {
        cmd_undo_edit(ed, real, display, res);
    } else {
        ed_set_error(
            res, xasprintf("Unrecognized command %s. The allowed commands for the oh_editor tool "
                           "are: view, create, str_replace, insert, undo_edit",
                           cmd));
    }
out:
    free(display);
    return rc;
}
