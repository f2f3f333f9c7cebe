/* path_confine.h — resolve a client path and keep it inside the sandbox's allowed roots.
 * Pure apart from realpath()/lstat() on the existing part of the path.
 * This is a guard against mistakes and path tricks from clients ("..", symlinks pointing out);
 * the security boundary is the sandbox itself (namespaces), since the sandbox user can race it. */
#ifndef SP_PATH_CONFINE_H
#define SP_PATH_CONFINE_H

#include <limits.h>

#include "err.h"

#define PATH_ROOTS_MAX 8

typedef struct {
    int n;
    char root[PATH_ROOTS_MAX][PATH_MAX]; /* canonical (realpath'd) absolute roots */
} path_roots_t;

/* Adds a root (must exist); it is canonicalised. Returns 0 or < 0 with err. */
int path_roots_add(path_roots_t *r, const char *dir, err_t *err);

enum {
    PATH_FOLLOW = 0,   /* resolve a final symlink (read/write the target) */
    PATH_NOFOLLOW = 1, /* keep the final component as is (lstat/unlink/rename the link) */
};

/* Resolves path (relative paths against cwd, which must be absolute) into out:
 * symlinks in the existing prefix are resolved, a missing tail is normalised lexically.
 * Fails with -ERR_ESCAPE (message names the path and the roots) if the result is outside
 * every root, -ERR_BAD_REQ for an empty path or one containing NUL, -ENAMETOOLONG. */
int path_resolve(const path_roots_t *r, const char *cwd, const char *path, int flags,
                 char out[PATH_MAX], err_t *err);

/* True if abs (canonical) equals root or lies beneath it. */
int path_is_within(const char *abs, const char *root);

#endif
