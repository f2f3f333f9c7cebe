/* file_actions_fixture.h — the fixture of the editor and file action unit tests: a fresh
 * mkdtemp tree per test (base/ws: the root, cwd and workspace; base/outside/secret), an editor,
 * and helpers to build action args and compare observation texts. Included once per test binary. */
#ifndef SP_FILE_ACTIONS_FIXTURE_H
#define SP_FILE_ACTIONS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define _XOPEN_SOURCE_EXTENDED 1
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "executor/file_actions.h"
#include "json_util.h"
#include "xalloc.h"

static char base[256], ws[300];
static path_roots_t roots;
static fa_ctx_t ctx;
static editor_t *ed;

static inline int
rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static inline int
setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sp_fa.XXXXXX";
    if (!mkdtemp(tmpl) || !realpath(tmpl, base))
        return -1;
    snprintf(ws, sizeof ws, "%s/ws", base);
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/outside", base);
    if (mkdir(ws, 0755) < 0 || mkdir(out, 0755) < 0)
        return -1;
    memset(&roots, 0, sizeof roots);
    err_t err;
    if (path_roots_add(&roots, ws, &err) < 0)
        return -1;
    ctx.cwd = ws;
    ctx.workspace = ws;
    ctx.roots = &roots;
    ed = editor_new();
    return 0;
}

static inline int
teardown(void **state)
{
    (void)state;
    editor_free(ed);
    ed = NULL;
    return nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- helpers ---- */

static char *
P(const char *rel) /* absolute path in ws; caller frees */
{
    return xasprintf("%s/%s", ws, rel);
}

static inline void
put(const char *rel, const char *text)
{
    char *p = P(rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(p);
}

static inline char *
get(const char *rel)
{
    char *p = P(rel);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    buf_t b = BUF_INIT;
    size_t n;
    while ((n = fread(buf_reserve(&b, 4096), 1, 4096, f)) > 0)
        buf_advance(&b, n);
    fclose(f);
    free(p);
    return buf_steal(&b);
}

/* Builds args from key/value string pairs, NULL-terminated. */
static inline json_object *
args(const char *k, ...)
{
    json_object *o = json_object_new_object();
    va_list ap;
    va_start(ap, k);
    for (; k; k = va_arg(ap, const char *))
        json_set_str(o, k, va_arg(ap, const char *));
    va_end(ap);
    return o;
}

static json_object *last;

/* Returns obs's content; obs becomes `last`, which owns it until the next observation. */
static inline const char *
content(json_object *obs)
{
    if (obs != last)
        json_object_put(last);
    last = obs;
    return json_get_str(obs, "content", NULL);
}

static inline const char *
edit_in(json_object *a)
{
    json_object *o = fa_edit(ed, &ctx, a);
    json_object_put(a);
    return content(o);
}

#define EDIT(...) edit_in(args(__VA_ARGS__, NULL))

/* fa_read / fa_write on args built in place; the observation is kept in `last`. */
static inline json_object *
run_args(json_object *(*fn)(editor_t *, const fa_ctx_t *, json_object *), json_object *a)
{
    json_object *o = fn(ed, &ctx, a);
    json_object_put(a);
    content(o);
    return o;
}

#define READ(...)  run_args(fa_read, args(__VA_ARGS__, NULL))
#define WRITE(...) run_args(fa_write, args(__VA_ARGS__, NULL))

static inline const char *
edit_insert(const char *path, int line, const char *new_str)
{
    json_object *a = args("command", "insert", "path", path, "new_str", new_str, NULL);
    json_set_int(a, "insert_line", line);
    return edit_in(a);
}

static inline const char *
view_range(const char *path, const char *range_json)
{
    json_object *a = args("command", "view", "path", path, "impl_source", "oh_aci", NULL);
    json_set(a, "view_range", json_tokener_parse(range_json));
    json_object *o = fa_read(ed, &ctx, a);
    json_object_put(a);
    return content(o);
}

static inline void
assert_has(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("expected to find\n%s\nin\n%s", needle, hay);
}

static inline void
assert_lacks(const char *hay, const char *needle)
{
    if (strstr(hay, needle))
        fail_msg("did not expect\n%s\nin\n%s", needle, hay);
}

static void expect_eq(const char *got, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void
expect_eq(const char *got, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *want = NULL;
    assert_true(vasprintf(&want, fmt, ap) >= 0);
    va_end(ap);
    assert_string_equal(got, want);
    free(want);
}

static const char *TEST_TXT = "This is a test file.\nThis file is for testing purposes.";

#endif
