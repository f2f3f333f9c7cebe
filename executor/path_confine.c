/* path_confine.c — path resolution and root confinement.
 *
 * path_resolve() walks the path one component at a time, as the kernel does: "." is skipped,
 * ".." goes to the parent of what has been resolved so far (so "link/.." is the parent of the
 * link's target, not the directory holding the link), a symlink is replaced by its target
 * (relative targets against the link's directory), and a component that does not exist is kept
 * as written, so a missing tail ("new/dir/file") is normalised lexically. Only the final result
 * is checked against the roots: it is what the caller operates on. */
#include "path_confine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_SYMLINKS_MAX 40 /* as Linux' MAXSYMLINKS: more is ELOOP */

int
path_roots_add(path_roots_t *r, const char *dir, err_t *err)
{
    struct stat st;
    if (r->n >= PATH_ROOTS_MAX)
        return err_set(err, ERR_BAD_REQ, "too many roots (max %d)", PATH_ROOTS_MAX);
    if (!realpath(dir, r->root[r->n]))
        return err_set(err, errno, "root %s: %s", dir, strerror(errno));
    if (stat(r->root[r->n], &st) < 0)
        return err_set(err, errno, "root %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return err_set(err, ENOTDIR, "root %s: not a directory", dir);
    r->n++;
    return 0;
}

int
path_is_within(const char *abs, const char *root)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return abs[0] == '/';
    return strncmp(abs, root, n) == 0 && (abs[n] == '\0' || abs[n] == '/');
}

/* Drops the last component of an absolute path ("/a/b" -> "/a", "/a" -> "/", "/" -> "/"). */
static void
parent_of(char *p)
{
    char *slash = strrchr(p, '/');
    if (slash == p)
        p[1] = '\0';
    else if (slash)
        *slash = '\0';
}

/* Appends one component to an absolute path; -1 if it would not fit in PATH_MAX. */
static int
append_component(char *p, const char *name, size_t len)
{
    size_t n = strlen(p);
    size_t sep = (n == 1 && p[0] == '/') ? 0 : 1;
    if (n + sep + len >= PATH_MAX)
        return -1;
    if (sep)
        p[n++] = '/';
    memcpy(p + n, name, len);
    p[n + len] = '\0';
    return 0;
}

/* Replaces rest with "target/rest" (the symlink's target goes in front of what is left). */
static int
splice_target(char *rest, const char *target)
{
    char joined[PATH_MAX];
    int n = snprintf(joined, sizeof joined, "%s%s%s", target, *rest ? "/" : "", rest);
    if (n < 0 || (size_t)n >= sizeof joined)
        return -1;
    memcpy(rest, joined, (size_t)n + 1);
    return 0;
}

int
path_resolve(const path_roots_t *r, const char *cwd, const char *path, int flags,
             char out[PATH_MAX], err_t *err)
{
    char rest[PATH_MAX]; /* components still to walk */
    char res[PATH_MAX];  /* what has been resolved so far: absolute, no ".", "..", "//" */
    int nlinks = 0;
    int missing = 0; /* once a component is missing, later ones are not looked up */

    if (!path || !*path)
        return err_set(err, ERR_BAD_REQ, "empty path");
    if (path[0] != '/' && (!cwd || cwd[0] != '/'))
        return err_set(err, ERR_BAD_REQ, "%s: relative path without an absolute working directory",
                       path);
    if (strlen(path) >= PATH_MAX)
        return err_set(err, ENAMETOOLONG, "path too long (%zu bytes)", strlen(path));
    memcpy(rest, path, strlen(path) + 1);
    /* A relative path is walked as cwd + "/" + path: cwd may hold symlinks or ".." too. */
    if (path[0] != '/' && splice_target(rest, cwd) < 0)
        return err_set(err, ENAMETOOLONG, "%s: path too long", path);
    strcpy(res, "/");

    char *p = rest;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *seg = p;
        while (*p && *p != '/')
            p++;
        size_t len = (size_t)(p - seg);
        /* Trailing slashes do not count: "a/" names "a" (NOFOLLOW keeps a link "a/" unresolved). */
        const char *after = p;
        while (*after == '/')
            after++;
        int final = *after == '\0';

        if (len == 1 && seg[0] == '.')
            continue;
        if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            parent_of(res);
            /* The parent of an existing directory exists; a missing one may reappear below it. */
            missing = 0;
            continue;
        }
        char prev[PATH_MAX];
        strcpy(prev, res);
        if (append_component(res, seg, len) < 0)
            return err_set(err, ENAMETOOLONG, "%s: path too long", path);
        if (missing)
            continue;

        struct stat st;
        if (lstat(res, &st) < 0) {
            if (errno == ENOENT || errno == ENOTDIR) {
                missing = 1;
                continue;
            }
            return err_set(err, errno, "%s: %s", path, strerror(errno));
        }
        if (!S_ISLNK(st.st_mode) || (final && (flags & PATH_NOFOLLOW)))
            continue;

        if (++nlinks > PATH_SYMLINKS_MAX)
            return err_set(err, ELOOP, "%s: too many levels of symbolic links", path);
        char target[PATH_MAX];
        ssize_t tn = readlink(res, target, sizeof target - 1);
        if (tn < 0)
            return err_set(err, errno, "%s: readlink %s: %s", path, res, strerror(errno));
        if (tn == 0) /* an empty symlink resolves to nothing: ENOENT, as for the kernel */
            return err_set(err, ENOENT, "%s: empty symbolic link %s", path, res);
        target[tn] = '\0';
        /* Go on from the link's directory (or "/" for an absolute target) with target + rest. */
        strcpy(res, target[0] == '/' ? "/" : prev);
        memmove(rest, p, strlen(p) + 1);
        if (splice_target(rest, target) < 0)
            return err_set(err, ENAMETOOLONG, "%s: path too long", path);
        p = rest;
    }

    memcpy(out, res, strlen(res) + 1);
    for (int i = 0; i < r->n; i++)
        if (path_is_within(out, r->root[i]))
            return 0;
    return err_set(err, ERR_ESCAPE, "%s resolves to %s, outside the sandbox roots (%s%s)", path,
                   out, r->n ? r->root[0] : "none", r->n > 1 ? ", ..." : "");
}
