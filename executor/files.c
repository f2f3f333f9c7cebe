/* files.c — the executor's file.* operations (docs/protocol.md, "File operations").
 * Synchronous and stateless: each call borrows the request and returns a new result object (the
 * caller owns it) or NULL with err set. Paths go through path_resolve() against ctx->roots, so
 * everything below works on canonical absolute paths. This file: request fields, stat, mkdir,
 * move, remove; files_list.c: list; files_details.c: the "details" of an entry; files_rw.c:
 * read, write and atomic_file_*; files_oh_list.c: OpenHands' /list_files. Needs _GNU_SOURCE
 * (the build defines it) for renameat2 and newlocale. */
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
#include "xalloc.h"

/* ---- request fields ---- */

int
files_req_check(json_object *req, err_t *err)
{
    if (!req || !json_object_is_type(req, json_type_object))
        return err_set(err, ERR_BAD_REQ, "request must be a JSON object");
    return 0;
}

int
files_req_str(json_object *req, const char *key, const char **out, size_t *len, err_t *err)
{
    json_object *v = json_get(req, key);
    *out = NULL;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return err_set(err, ERR_BAD_REQ, "\"%s\" must be a string", key);
    *out = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    if (len)
        *len = n;
    else if (strlen(*out) != n)
        return err_set(err, ERR_BAD_REQ, "\"%s\" contains a NUL byte", key);
    return 0;
}

int
files_req_bool(json_object *req, const char *key, bool def, bool *out, err_t *err)
{
    json_object *v = json_get(req, key);
    *out = def;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_boolean))
        return err_set(err, ERR_BAD_REQ, "\"%s\" must be true or false", key);
    *out = json_object_get_boolean(v);
    return 0;
}

int
files_req_int(json_object *req, const char *key, int64_t def, int64_t *out, err_t *err)
{
    json_object *v = json_get(req, key);
    *out = def;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_int))
        return err_set(err, ERR_BAD_REQ, "\"%s\" must be an integer", key);
    *out = json_object_get_int64(v);
    return 0;
}

/* "mode": an octal string ("0644", "755"), at most 07777. */
int
files_req_mode(json_object *req, mode_t *mode, err_t *err)
{
    const char *s;
    if (files_req_str(req, "mode", &s, NULL, err) < 0)
        return -ERR_BAD_REQ;
    if (!s)
        return 0;
    size_t n = strlen(s);
    if (n == 0 || n > 5 || strspn(s, "01234567") != n)
        return err_set(err, ERR_BAD_REQ, "\"mode\" must be an octal string such as \"0644\"");
    unsigned long v = strtoul(s, NULL, 8);
    if (v > 07777)
        return err_set(err, ERR_BAD_REQ, "\"mode\" %s is larger than 07777", s);
    *mode = (mode_t)v;
    return 1;
}

int
files_req_path(const files_ctx_t *c, json_object *req, const char *key, int flags,
               char out[PATH_MAX], err_t *err)
{
    char name[PATH_MAX];
    int n = json_get_name(req, key, name, sizeof name, err);
    if (n == -ERR_NOT_FOUND)
        return err_set(err, ERR_BAD_REQ, "\"%s\" (or \"%s_b64\") is required", key, key);
    if (n < 0)
        return -ERR_BAD_REQ;
    return path_resolve(c->roots, c->cwd, name, flags, out, err);
}

/* True if abs is a root or holds one: removing or moving it would take a root away. */
static bool
holds_root(const files_ctx_t *c, const char *abs)
{
    for (int i = 0; i < c->roots->n; i++)
        if (path_is_within(c->roots->root[i], abs))
            return true;
    return false;
}

int
files_sys_err(err_t *err, int e, const char *what, const char *path)
{
    return err_set(err, e, "%s %s: %s", what, path, strerror(e));
}

/* ---- stat ---- */

const char *
files_type_name(mode_t m)
{
    return S_ISREG(m) ? "file" : S_ISDIR(m) ? "directory" : S_ISLNK(m) ? "symlink" : "other";
}

void
files_stat_fields(json_object *o, const struct stat *st, int at, const char *name)
{
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", (unsigned)(st->st_mode & 07777));
    json_set_str(o, "type", files_type_name(st->st_mode));
    json_set_int(o, "size", st->st_size);
    json_set_str(o, "mode", mode);
    json_set(o, "mtime",
             json_object_new_double((double)st->st_mtim.tv_sec + st->st_mtim.tv_nsec / 1e9));
    if (S_ISLNK(st->st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(at, name, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        json_set_name(o, "target", target);
    }
}

json_object *
files_stat_path(const char *abs, bool details, err_t *err)
{
    struct stat st;
    if (lstat(abs, &st) < 0) {
        files_sys_err(err, errno, "stat", abs);
        return NULL;
    }
    json_object *o = json_object_new_object();
    json_set_name(o, "path", abs);
    files_stat_fields(o, &st, AT_FDCWD, abs);
    if (details) {
        files_details(o, &st, abs, NULL);
    } else {
        json_set_int(o, "uid", st.st_uid);
        json_set_int(o, "gid", st.st_gid);
    }
    return o;
}

json_object *
files_stat(const files_ctx_t *c, json_object *req, err_t *err)
{
    char abs[PATH_MAX];
    bool details;
    if (files_req_check(req, err) < 0 ||
        files_req_path(c, req, "path", PATH_NOFOLLOW, abs, err) < 0 ||
        files_req_bool(req, "details", false, &details, err) < 0)
        return NULL;
    return files_stat_path(abs, details, err);
}

/* ---- mkdir ---- */

int
files_mkdir_parents(const char *abs, mode_t mode, bool set_mode, bool *created, err_t *err)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", abs);
    *created = false;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char saved = *s;
        bool last = saved == '\0';
        struct stat st;
        *s = '\0';
        if (stat(p, &st) < 0) {
            if (errno != ENOENT)
                return files_sys_err(err, errno, "mkdir", p);
            if (mkdir(p, last ? mode : FILES_DIR_MODE) < 0 && errno != EEXIST)
                return files_sys_err(err, errno, "mkdir", p);
            if (last && set_mode && chmod(p, mode) < 0)
                return files_sys_err(err, errno, "chmod", p);
            *created = last;
        } else if (!S_ISDIR(st.st_mode)) {
            return err_set(err, EEXIST, "mkdir %s: exists and is not a directory", p);
        }
        if (last)
            return 0;
        *s = saved;
    }
}

json_object *
files_mkdir(const files_ctx_t *c, json_object *req, err_t *err)
{
    char abs[PATH_MAX];
    bool parents, created = false;
    mode_t mode = FILES_DIR_MODE;
    int has_mode;
    if (files_req_check(req, err) < 0 ||
        files_req_path(c, req, "path", PATH_FOLLOW, abs, err) < 0 ||
        files_req_bool(req, "parents", true, &parents, err) < 0 ||
        (has_mode = files_req_mode(req, &mode, err)) < 0)
        return NULL;
    if (parents) {
        if (files_mkdir_parents(abs, mode, has_mode, &created, err) < 0)
            return NULL;
    } else {
        if (mkdir(abs, mode) < 0) {
            files_sys_err(err, errno, "mkdir", abs);
            return NULL;
        }
        created = true;
        if (has_mode && chmod(abs, mode) < 0) {
            files_sys_err(err, errno, "chmod", abs);
            return NULL;
        }
    }
    json_object *o = json_object_new_object();
    json_set_name(o, "path", abs);
    json_set_bool(o, "created", created);
    return o;
}

/* ---- move ---- */

/* Copies a regular file onto to through atomic_file (mode kept), for moves across filesystems. */
static int
copy_file(const char *from, const char *to, err_t *err)
{
    char chunk[65536];
    atomic_file_t af;
    int fd = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return files_sys_err(err, e, "move: open", from);
    }
    if (atomic_file_open(&af, to, st.st_mode & 07777, err) < 0) {
        close(fd);
        return -err->code;
    }
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            atomic_file_abort(&af);
            close(fd);
            return files_sys_err(err, e, "move: read", from);
        }
        if (n == 0)
            break;
        if (atomic_file_write(&af, chunk, (size_t)n, err) < 0) {
            atomic_file_abort(&af);
            close(fd);
            return -err->code;
        }
    }
    close(fd);
    /* A fresh target gets the source's mode, not the default. */
    if (fchmod(af.fd, st.st_mode & 07777) < 0) { /* best effort */
    }
    return atomic_file_commit(&af, err);
}

json_object *
files_move(const files_ctx_t *c, json_object *req, err_t *err)
{
    char from[PATH_MAX], to[PATH_MAX];
    bool overwrite, parents;
    struct stat st, tst;
    if (files_req_check(req, err) < 0 ||
        files_req_path(c, req, "from", PATH_NOFOLLOW, from, err) < 0 ||
        files_req_path(c, req, "to", PATH_NOFOLLOW, to, err) < 0 ||
        files_req_bool(req, "overwrite", false, &overwrite, err) < 0 ||
        files_req_bool(req, "parents", false, &parents, err) < 0)
        return NULL;
    if (holds_root(c, from) || holds_root(c, to)) {
        err_set(err, EPERM, "move %s to %s: refusing to move or replace a sandbox root", from, to);
        return NULL;
    }
    if (lstat(from, &st) < 0) {
        files_sys_err(err, errno, "move", from);
        return NULL;
    }
    if (parents) {
        char dir[PATH_MAX];
        bool created;
        snprintf(dir, sizeof dir, "%s", to);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            if (files_mkdir_parents(dir, FILES_DIR_MODE, false, &created, err) < 0)
                return NULL;
        }
    }
    int rc =
        overwrite ? rename(from, to) : renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
    if (rc < 0 && !overwrite && (errno == EINVAL || errno == ENOSYS)) {
        /* The filesystem has no RENAME_NOREPLACE: check, then rename (racy, but only then). */
        if (lstat(to, &tst) == 0)
            errno = EEXIST;
        else
            rc = rename(from, to);
    }
    if (rc < 0 && errno == EXDEV && S_ISREG(st.st_mode)) {
        if (!overwrite && lstat(to, &tst) == 0) {
            errno = EEXIST;
        } else {
            if (copy_file(from, to, err) < 0)
                return NULL;
            if (unlink(from) < 0) {
                files_sys_err(err, errno, "move: copied, but cannot remove", from);
                return NULL;
            }
            rc = 0;
        }
    }
    if (rc < 0) {
        int e = errno;
        if (e == EEXIST)
            err_set(err, e, "move %s: %s already exists (set \"overwrite\")", from, to);
        else if (e == EXDEV)
            err_set(err, e, "move %s to %s: a %s cannot be moved across filesystems", from, to,
                    files_type_name(st.st_mode));
        else
            err_set(err, e, "move %s to %s: %s", from, to, strerror(e));
        return NULL;
    }
    json_object *o = json_object_new_object();
    json_set_name(o, "from", from);
    json_set_name(o, "to", to);
    return o;
}

/* ---- remove ---- */

/* Removes name (relative to dirfd) and, for a directory, everything below it. Symlinks are
 * removed, never followed: a directory is entered only by openat(O_NOFOLLOW | O_DIRECTORY). */
static int
remove_tree(int parent, const char *name, const char *top, err_t *err)
{
    struct stat st;
    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : files_sys_err(err, errno, "remove: stat", name);
    if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
            return err_set(err, errno, "remove %s: %s: %s", top, name, strerror(errno));
        return 0;
    }
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return err_set(err, e, "remove %s: open %s: %s", top, name, strerror(e));
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = remove_tree(dirfd(d), e->d_name, top, err);
    }
    closedir(d);
    if (rc == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        rc = err_set(err, errno, "remove %s: %s: %s", top, name, strerror(errno));
    return rc;
}

json_object *
files_remove(const files_ctx_t *c, json_object *req, err_t *err)
{
    char abs[PATH_MAX];
    bool recursive;
    struct stat st;
    if (files_req_check(req, err) < 0 ||
        files_req_path(c, req, "path", PATH_NOFOLLOW, abs, err) < 0 ||
        files_req_bool(req, "recursive", false, &recursive, err) < 0)
        return NULL;
    if (holds_root(c, abs)) {
        err_set(err, EPERM, "remove %s: refusing to remove a sandbox root", abs);
        return NULL;
    }
    if (lstat(abs, &st) < 0) {
        files_sys_err(err, errno, "remove", abs);
        return NULL;
    }
    if (S_ISDIR(st.st_mode) && recursive) {
        if (remove_tree(AT_FDCWD, abs, abs, err) < 0)
            return NULL;
    } else if (S_ISDIR(st.st_mode)) {
        if (rmdir(abs) < 0) {
            if (errno == ENOTEMPTY || errno == EEXIST)
                err_set(err, ENOTEMPTY, "remove %s: directory not empty (set \"recursive\")", abs);
            else
                files_sys_err(err, errno, "remove", abs);
            return NULL;
        }
    } else if (unlink(abs) < 0) {
        files_sys_err(err, errno, "remove", abs);
        return NULL;
    }
    json_object *o = json_object_new_object();
    json_set_name(o, "path", abs);
    return o;
}
