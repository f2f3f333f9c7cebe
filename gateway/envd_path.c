/* envd_path.c — E2B's envd's paths (envd_path.h). */
#include "envd_path.h"

#include <stdio.h>
#include <string.h>

void
envd_path_clean(char *path)
{
    /* Rebuilt in place: the write point never passes the read point. */
    char *w = path;
    const char *r = path;
    while (*r) {
        while (*r == '/')
            r++;
        const char *e = r;
        while (*e && *e != '/')
            e++;
        size_t n = (size_t)(e - r);
        if (n == 0 || (n == 1 && r[0] == '.')) {
            /* nothing */
        } else if (n == 2 && r[0] == '.' && r[1] == '.') {
            while (w > path && *--w != '/')
                ;
        } else {
            *w++ = '/';
            memmove(w, r, n);
            w += n;
        }
        r = e;
    }
    if (w == path)
        *w++ = '/';
    *w = '\0';
}

int
envd_path_abs(const char *home, const char *path, size_t len, char *out, size_t cap, char *why,
              size_t why_cap)
{
    if (memchr(path, '\0', len)) {
        snprintf(why, why_cap, "the path holds a NUL byte");
        return -1;
    }
    const char *rest = path;
    bool from_home = path[0] != '/';
    if (path[0] == '~') {
        if (path[1] && path[1] != '/' && path[1] != '\\') {
            snprintf(why, why_cap,
                     "failed to expand path '%.200s': cannot expand user-specific home dir", path);
            return -1;
        }
        rest = path + 1;
    }
    if (from_home && home[0] != '/') {
        snprintf(why, why_cap,
                 "the sandbox's executor named no home directory, so the relative path '%.200s' "
                 "names nothing: send an absolute path",
                 path);
        return -1;
    }
    int n = from_home ? snprintf(out, cap, "%s/%s", home, rest) : snprintf(out, cap, "%s", rest);
    if (n < 0 || (size_t)n >= cap || (size_t)n >= ENVD_PATH_MAX) {
        snprintf(why, why_cap, "the path is longer than %d bytes", ENVD_PATH_MAX - 1);
        return -1;
    }
    envd_path_clean(out);
    return 0;
}

const char *
envd_path_rel(const char *base, const char *path)
{
    size_t n = strlen(base);
    if (!strcmp(base, path))
        return ".";
    if (!strcmp(base, "/"))
        return path[0] == '/' && path[1] ? path + 1 : NULL;
    if (strncmp(base, path, n) != 0 || path[n] != '/' || !path[n + 1])
        return NULL;
    return path + n + 1;
}

const char *
envd_path_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}
