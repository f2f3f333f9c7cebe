/* path_confine.c — path resolution and root confinement. */
#include "path_confine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int
path_roots_add(path_roots_t *r, const char *dir, err_t *err)
{
    if (r->n >= PATH_ROOTS_MAX)
        return err_set(err, ERR_BAD_REQ, "too many roots (max %d)", PATH_ROOTS_MAX);
    if (!realpath(dir, r->root[r->n]))
        return err_set(err, errno, "root %s: %s", dir, strerror(errno));
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

/* Lexically normalises an absolute path in place: collapses //, ".", "..". */
static void
normalise(char *p)
{
    char *out = p;
    const char *in = p;
    while (*in) {
        while (*in == '/')
            in++;
        if (!*in)
            break;
        const char *seg = in;
        while (*in && *in != '/')
            in++;
        size_t len = (size_t)(in - seg);
        if (len == 1 && seg[0] == '.')
            continue;
        if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            while (out > p && *--out != '/')
                ;
            continue;
        }
        *out++ = '/';
        memmove(out, seg, len);
        out += len;
    }
    if (out == p)
        *out++ = '/';
    *out = '\0';
}

int
path_resolve(const path_roots_t *r, const char *cwd, const char *path, int flags, char out[PATH_MAX],
             err_t *err)
{
    char joined[PATH_MAX];
    if (!path || !*path)
        return err_set(err, ERR_BAD_REQ, "empty path");
    int n = path[0] == '/' ? snprintf(joined, sizeof joined, "%s", path)
                           : snprintf(joined, sizeof joined, "%s/%s", cwd ? cwd : "/", path);
    if (n < 0 || (size_t)n >= sizeof joined)
        return err_set(err, ENAMETOOLONG, "path too long");
    normalise(joined);

    /* Find the longest existing prefix and canonicalise it; keep the rest lexical.
     * With PATH_NOFOLLOW the final component is never resolved. */
    char head[PATH_MAX];
    strcpy(head, joined);
    char *last = strrchr(head, '/');
    const char *tail = "";
    char tailbuf[PATH_MAX] = "";
    if ((flags & PATH_NOFOLLOW) && strcmp(head, "/") != 0) {
        snprintf(tailbuf, sizeof tailbuf, "%s", last + 1);
        *last = '\0';
        if (!*head)
            strcpy(head, "/");
        tail = tailbuf;
    }
    char resolved[PATH_MAX];
    for (;;) {
        if (realpath(head, resolved))
            break;
        if (errno != ENOENT && errno != ENOTDIR)
            return err_set(err, errno, "%s: %s", path, strerror(errno));
        /* Move the last component of head into the tail. */
        char *slash = strrchr(head, '/');
        if (!slash || slash == head) {
            strcpy(resolved, "/");
            char t[PATH_MAX];
            snprintf(t, sizeof t, "%s%s%s", head + 1, *tail ? "/" : "", tail);
            snprintf(tailbuf, sizeof tailbuf, "%s", t);
            tail = tailbuf;
            break;
        }
        char t[PATH_MAX];
        snprintf(t, sizeof t, "%s%s%s", slash + 1, *tail ? "/" : "", tail);
        snprintf(tailbuf, sizeof tailbuf, "%s", t);
        tail = tailbuf;
        *slash = '\0';
    }
    n = *tail ? snprintf(out, PATH_MAX, "%s/%s", strcmp(resolved, "/") ? resolved : "", tail)
              : snprintf(out, PATH_MAX, "%s", resolved);
    if (n < 0 || n >= PATH_MAX)
        return err_set(err, ENAMETOOLONG, "path too long");
    for (int i = 0; i < r->n; i++)
        if (path_is_within(out, r->root[i]))
            return 0;
    return err_set(err, ERR_ESCAPE, "%s resolves to %s, outside the sandbox roots (%s%s)", path, out,
                   r->n ? r->root[0] : "none", r->n > 1 ? ", ..." : "");
}
