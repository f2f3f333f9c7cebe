/* files_fixture.h — shared by test_files.c and test_files_rw.c: a fresh mkdtemp root per test
 * (base/root is the sandbox root, base/outside must never be touched), helpers to make and check
 * files, and run()/OK()/FAILS() to call a files_* op on a printf-built JSON request.
 * Header-only (static inline) so each test binary stays one .c file. */
#ifndef SP_TEST_FILES_FIXTURE_H
#define SP_TEST_FILES_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "need.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/files.h"
#include "json_util.h"

static char base[512]; /* mkdtemp: base/root is the sandbox root, base/outside is not */
static char root[520];
static char outside[520];
static path_roots_t roots;
static files_ctx_t ctx;
static err_t err;

typedef json_object *(*op_fn)(const files_ctx_t *, json_object *, err_t *);

static inline int
setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sp_files_XXXXXX", real[PATH_MAX];
    if (!mkdtemp(tmpl) || !realpath(tmpl, real) || strlen(real) >= sizeof base)
        return -1;
    memcpy(base, real, strlen(real) + 1);
    snprintf(root, sizeof root, "%s/root", base);
    snprintf(outside, sizeof outside, "%s/outside", base);
    if (mkdir(root, 0755) < 0 || mkdir(outside, 0755) < 0)
        return -1;
    memset(&roots, 0, sizeof roots);
    if (path_roots_add(&roots, root, NULL) < 0)
        return -1;
    ctx.cwd = root;
    ctx.roots = &roots;
    memset(&err, 0, sizeof err);
    return 0;
}

static inline int
rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static inline int
teardown(void **state)
{
    (void)state;
    return nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- helpers: paths are relative to root unless absolute ---- */

/* root + "/" + rel (or rel if absolute); four static buffers, reused in turn. */

static inline const char *
at(const char *rel)
{
    static char bufs[4][PATH_MAX];
    static int i;
    char *p = bufs[i++ % 4];
    int n = rel[0] == '/' ? snprintf(p, PATH_MAX, "%s", rel)
                          : snprintf(p, PATH_MAX, "%s/%s", root, rel);
    assert_true(n > 0 && n < PATH_MAX);
    return p;
}

static inline void
put(const char *rel, const char *content, size_t n)
{
    int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, n), (ssize_t)n);
    close(fd);
}

static inline void
put_str(const char *rel, const char *content)
{
    put(rel, content, strlen(content));
}

/* The file's bytes (NUL-terminated, static until the next call), NULL if unreadable. */
static inline const char *
get(const char *rel, size_t *len)
{
    static char buf[65536];
    int fd = open(at(rel), O_RDONLY);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    assert_true(n >= 0);
    buf[n] = '\0';
    if (len)
        *len = (size_t)n;
    return buf;
}

static inline bool
exists(const char *rel)
{
    struct stat st;
    return lstat(at(rel), &st) == 0;
}

static inline mode_t
mode_of(const char *rel)
{
    struct stat st;
    assert_int_equal(lstat(at(rel), &st), 0);
    return st.st_mode & 07777;
}

/* Runs op on a request built from a printf format; returns the result (caller puts it). */
__attribute__((format(printf, 2, 3))) static inline json_object *
run(op_fn op, const char *fmt, ...)
{
    char text[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof text);
    json_object *req = json_tokener_parse(text);
    assert_non_null(req);
    memset(&err, 0, sizeof err);
    json_object *res = op(&ctx, req, &err);
    json_object_put(req);
    if (!res)
        assert_true(err.code != 0 && err.msg[0] != '\0');
    return res;
}

/* Asserts the op succeeds and frees the result. */
#define OK(op, ...)                                                                                \
    do {                                                                                           \
        json_object *r_ = run(op, __VA_ARGS__);                                                    \
        if (!r_)                                                                                   \
            fail_msg("unexpected error %d: %s", err.code, err.msg);                                \
        json_object_put(r_);                                                                       \
    } while (0)

/* Asserts the op fails with the code want. */
#define FAILS(want, op, ...)                                                                       \
    do {                                                                                           \
        json_object *r_ = run(op, __VA_ARGS__);                                                    \
        if (r_)                                                                                    \
            fail_msg("expected error %d, got %s", (int)(want), json_text(r_, NULL));               \
        if (err.code != (want))                                                                    \
            fail_msg("expected error %d, got %d: %s", (int)(want), err.code, err.msg);             \
    } while (0)

static inline const char *
str(json_object *o, const char *key)
{
    const char *s = json_get_str(o, key, NULL);
    if (!s)
        fail_msg("no string %s in %s", key, json_text(o, NULL));
    return s;
}

#endif
