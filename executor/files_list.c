/* files_list.c — file.list (docs/protocol.md "file.list"): a directory's entries sorted by name,
 * and with "depth" N > 1 the entries of its subdirectories down to N levels, each right after
 * its directory (the order of a depth-first walk, as E2B's envd lists). The walk never follows a
 * symlink: a subdirectory is entered by openat(O_NOFOLLOW | O_DIRECTORY) from its parent's fd.
 * A reply is bounded twice, by FILES_LIST_MAX entries and by FILES_LIST_BYTES of JSON (it
 * travels in one CLOSE frame), and says when it was cut ("truncated"). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files_int.h"
#include "json_util.h"
#include "xalloc.h"

#define FILES_LIST_MAX       10000         /* entries per reply */
#define FILES_LIST_BYTES     (960u * 1024) /* their JSON: under the 1 MiB frame, with room */
#define FILES_LIST_DEPTH_MAX 128           /* levels a walk goes down (an fd held per level) */

void
names_add(names_t *v, const char *s)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 64;
        v->names = xrealloc(v->names, v->cap * sizeof *v->names);
    }
    v->names[v->n++] = xstrdup(s);
}

void
names_free(names_t *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->names[i]);
    free(v->names);
}

static int
cmp_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keeps the max smallest names: sorted, the rest freed. */
static void
names_trim(names_t *v, size_t max)
{
    if (v->n > 1)
        qsort(v->names, v->n, sizeof *v->names, cmp_bytes);
    while (v->n > max)
        free(v->names[--v->n]);
}

typedef struct {
    bool hidden, details;
    int depth;
    json_object *entries;
    size_t total, bytes;
    bool truncated, stop; /* something is left out; the reply is full */
    files_names_t names;
} walk_t;

static bool
full(const walk_t *w)
{
    return json_object_array_length(w->entries) >= FILES_LIST_MAX;
}

/* Lists the directory open at fd (abs its path, rel its path below the listed one, "" for the
 * listed one itself) at level (1: the listed directory's own entries). */
static void
list_dir(walk_t *w, int fd, const char *abs, const char *rel, int level)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    /* Sorting then cutting keeps the reply deterministic; trimming at twice the cap keeps
     * memory bounded however large the directory is. */
    names_t v = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (!w->hidden && e->d_name[0] == '.')
            continue;
        w->total++;
        names_add(&v, e->d_name);
        if (v.n >= 2 * FILES_LIST_MAX)
            names_trim(&v, FILES_LIST_MAX);
    }
    names_trim(&v, FILES_LIST_MAX);
    for (size_t i = 0; i < v.n; i++) {
        if (w->stop || full(w)) {
            w->stop = w->truncated = true;
            break;
        }
        struct stat st;
        if (fstatat(dirfd(d), v.names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue; /* removed since readdir */
        char sub_rel[PATH_MAX], sub_abs[PATH_MAX];
        if (snprintf(sub_rel, sizeof sub_rel, "%s%s%s", rel, rel[0] ? "/" : "", v.names[i]) >=
                (int)sizeof sub_rel ||
            snprintf(sub_abs, sizeof sub_abs, "%s/%s", strcmp(abs, "/") ? abs : "", v.names[i]) >=
                (int)sizeof sub_abs) {
            w->truncated = true; /* deeper than a path can name */
            continue;
        }
        json_object *en = json_object_new_object();
        json_set_name(en, "name", sub_rel);
        files_stat_fields(en, &st, dirfd(d), v.names[i]);
        if (w->details)
            files_details(en, &st, sub_abs, &w->names);
        size_t len;
        json_text(en, &len);
        if (w->bytes + len + 1 > FILES_LIST_BYTES) {
            json_object_put(en);
            w->stop = w->truncated = true;
            break;
        }
        w->bytes += len + 1;
        json_object_array_add(w->entries, en);
        if (!S_ISDIR(st.st_mode) || level >= w->depth)
            continue;
        if (level >= FILES_LIST_DEPTH_MAX) {
            w->truncated = true;
            continue;
        }
        int sub = openat(dirfd(d), v.names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0)
            list_dir(w, sub, sub_abs, sub_rel, level + 1); /* takes sub */
    }
    closedir(d);
    names_free(&v);
}

json_object *
files_list(const files_ctx_t *c, json_object *req, err_t *err)
{
    char abs[PATH_MAX];
    walk_t w = {0};
    int64_t depth;
    if (files_req_check(req, err) < 0 ||
        files_req_path(c, req, "path", PATH_FOLLOW, abs, err) < 0 ||
        files_req_bool(req, "hidden", true, &w.hidden, err) < 0 ||
        files_req_bool(req, "details", false, &w.details, err) < 0 ||
        files_req_int(req, "depth", 1, &depth, err) < 0)
        return NULL;
    if (depth < 1) {
        err_set(err, ERR_BAD_REQ, "\"depth\" must be at least 1");
        return NULL;
    }
    w.depth = depth > FILES_LIST_DEPTH_MAX ? FILES_LIST_DEPTH_MAX + 1 : (int)depth;
    int fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        files_sys_err(err, errno, "list", abs);
        return NULL;
    }
    w.entries = json_object_new_array();
    list_dir(&w, fd, abs, "", 1);
    json_object *o = json_object_new_object();
    json_set_name(o, "path", abs);
    json_set(o, "entries", w.entries);
    json_set_int(o, "total", (int64_t)w.total);
    json_set_bool(o, "truncated", w.truncated || w.total > FILES_LIST_MAX);
    return o;
}
