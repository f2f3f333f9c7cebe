/* files_oh_list.c — OpenHands' /list_files for the executor (op oh.list_files): directories
 * first with a trailing "/", then files, each group sorted case-insensitively the way upstream's
 * Python sorts (str.lower), hidden entries included, [] for a missing path or a file. */
#include "files.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wctype.h>

#include "files_int.h"
#include "json_util.h"
#include "utf8.h"
#include "xalloc.h"

/* Next code point of a UTF-8 name ending at end; an invalid byte b stands for U+DC00 + b, as
 * Python's surrogateescape decodes file names. */
static uint32_t
next_cp(const unsigned char **ps, const unsigned char *end)
{
    const unsigned char *s = *ps;
    uint32_t cp;
    size_t len = utf8_decode(s, (size_t)(end - s), &cp);
    if (len == 0) {
        *ps = s + 1;
        return 0xDC00u + s[0];
    }
    *ps = s + len;
    return cp;
}

/* Python's sorted(key=str.lower): code points compared after lowering (C.UTF-8 tables; ASCII
 * only if that locale is missing). Ties, which Python leaves in listdir order, go by bytes. */
static int
cmp_lower(const void *pa, const void *pb)
{
    static locale_t utf8;
    static bool tried;
    if (!tried) {
        utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
        tried = true;
    }
    const char *a0 = *(char *const *)pa, *b0 = *(char *const *)pb;
    const unsigned char *a = (const unsigned char *)a0, *b = (const unsigned char *)b0;
    const unsigned char *a_end = a + strlen(a0), *b_end = b + strlen(b0);
    while (a < a_end && b < b_end) {
        uint32_t ca = next_cp(&a, a_end), cb = next_cp(&b, b_end);
        if (utf8) {
            ca = (uint32_t)towlower_l((wint_t)ca, utf8);
            cb = (uint32_t)towlower_l((wint_t)cb, utf8);
        } else {
            ca = ca < 0x80 ? (uint32_t)tolower((int)ca) : ca;
            cb = cb < 0x80 ? (uint32_t)tolower((int)cb) : cb;
        }
        if (ca != cb)
            return ca < cb ? -1 : 1;
    }
    if (a < a_end || b < b_end)
        return a < a_end ? 1 : -1;
    return strcmp(a0, b0);
}

json_object *
files_oh_list(const files_ctx_t *c, json_object *req, err_t *err)
{
    char abs[PATH_MAX];
    const char *path;
    if (files_req_check(req, err) < 0 || files_req_str(req, "path", &path, NULL, err) < 0)
        return NULL;
    json_object *files = json_object_new_array();
    json_object *o = json_object_new_object();
    json_set(o, "files", files);
    /* Upstream answers [] whenever the path cannot be listed; only an escape is an error. */
    int rc = path_resolve(c->roots, c->cwd, path && *path ? path : c->cwd, PATH_FOLLOW, abs, err);
    if (rc == -ERR_ESCAPE || rc == -ERR_BAD_REQ) {
        json_object_put(o);
        return NULL;
    }
    DIR *d = rc < 0 ? NULL : opendir(abs);
    if (!d)
        return o;
    names_t dirs = {0}, others = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        /* os.path.exists / isdir follow symlinks: a dangling link is left out. */
        if (fstatat(dirfd(d), e->d_name, &st, 0) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            char *name = xasprintf("%s/", e->d_name);
            names_add(&dirs, name);
            free(name);
        } else {
            names_add(&others, e->d_name);
        }
    }
    closedir(d);
    if (dirs.n > 1)
        qsort(dirs.names, dirs.n, sizeof *dirs.names, cmp_lower);
    if (others.n > 1)
        qsort(others.names, others.n, sizeof *others.names, cmp_lower);
    /* Upstream's reply is an array of names: no room for a name's bytes beside it. A name that
     * is not UTF-8 leaves with U+FFFD for its bad bytes (conn.c); file.list has them. */
    for (size_t i = 0; i < dirs.n; i++)
        json_object_array_add(files, json_object_new_string(dirs.names[i]));
    for (size_t i = 0; i < others.n; i++)
        json_object_array_add(files, json_object_new_string(others.names[i]));
    names_free(&dirs);
    names_free(&others);
    return o;
}
