/* editor_view.c — the OHEditor's `view` command: a file as `cat -n` (whole or a view_range),
 * a directory as upstream's `find -L -maxdepth 2` listing of non-hidden entries, with "/"
 * after directories and the count of hidden entries. Texts follow editor.py of openhands-aci
 * 0.3.2. The result strings belong to the ed_result_t. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "editor_int.h"
#include "file_kind.h"
#include "py_compat.h"
#include "utf8.h"
#include "xalloc.h"

static const char DIR_TRUNCATED_NOTICE[] =
    "<response clipped><NOTE>Due to the max output limit, only part of this directory has been "
    "shown to you. You should use `ls -la` instead to view large directories incrementally.</NOTE>";

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

int
ed_view_directory(const char *real, const char *display, json_object *view_range, ed_result_t *res)
{
    if (view_range && py_truthy(view_range)) {
        buf_t m = BUF_INIT;
        buf_puts(&m, "Invalid `view_range` parameter: ");
        py_str(&m, view_range);
        buf_puts(&m,
                 ". The `view_range` parameter is not allowed when `path` points to a directory.");
        return ed_set_error(res, buf_steal(&m));
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
    size_t cut = utf8_char_offset(raw.data, raw.len, ED_MAX_RESPONSE_CHARS);
    if (cut < raw.len) {
        raw.len = cut;
        buf_puts(&raw, DIR_TRUNCATED_NOTICE);
    }
    size_t off = 0, len = raw.len;
    fa_py_strip(raw.data, raw.len, &off, &len);

    if (find_err.len) {
        ed_set_error(res, buf_steal(&find_err));
    } else {
        buf_t out = BUF_INIT;
        buf_printf(
            &out,
            "Here's the files and directories up to 2 levels deep in %s, excluding hidden items:\n",
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
            buf_printf(
                &out,
                "\n\n%d hidden files/directories in this directory are excluded. You can use "
                "'ls -la %s' to see them.",
                hidden, display);
        ed_set_output(res, &out);
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
    return ed_set_error(res, buf_steal(&m));
}

int
ed_view_file(const char *real, const char *display, json_object *vr, ed_result_t *res)
{
    char *msg = ed_validate_file(real, display);
    if (msg)
        return ed_set_error(res, msg);
    if (fa_is_supported_binary(display))
        /* Upstream converts Office/PDF/audio files to Markdown; this runtime has no converter. */
        return ed_set_error(
            res, xasprintf("Error in converting file to Markdown: conversion of %s files "
                           "is not supported by this runtime. Please use Python code to "
                           "read %s",
                           py_suffix(display), display));
    buf_t text = BUF_INIT, out = BUF_INIT;
    if ((msg = ed_read_text(real, display, &text))) {
        buf_free(&text);
        return ed_set_error(res, msg);
    }
    long num_lines = ed_count_lines(text.data, text.len);
    if (!vr || !py_truthy(vr)) {
        ed_make_output(&out, text.data ? text.data : "", text.len, display, 1);
        buf_free(&text);
        return ed_set_output(res, &out);
    }
    buf_free(&text);
    if (json_object_is_type(vr, json_type_int) || json_object_is_type(vr, json_type_double) ||
        json_object_is_type(vr, json_type_boolean))
        /* len() of a number: a TypeError, which _execute_file_editor reports as is. */
        return ed_set_error(res, xasprintf("object of type '%s' has no len()",
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
        snprintf(
            hint, sizeof hint,
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
                 "Its second element `%lld` should be greater than or equal to the first element "
                 "`%lld`.",
                 end, start);
        return view_range_error(res, vr, hint);
    }
    buf_t again = BUF_INIT;
    if ((msg = ed_read_text(real, display, &again))) {
        buf_free(&again);
        return ed_set_error(res, msg);
    }
    size_t off, len;
    ed_line_span(again.data, again.len, (long)start, (long)end, &off, &len);
    /* '\n'.join(content.splitlines()): drops the final newline of the range. */
    if (len && again.data[off + len - 1] == '\n')
        len--;
    if (clamped)
        buf_printf(&out,
                   "NOTE: We only show up to %ld since there're only %ld lines in this file.\n",
                   num_lines, num_lines);
    ed_make_output(&out, again.data ? again.data + off : "", len, display, (long)start);
    buf_free(&again);
    return ed_set_output(res, &out);
}
