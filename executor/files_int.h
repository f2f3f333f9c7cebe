/* files_int.h — helpers shared by files.c (tree operations) and files_rw.c (read, write,
 * atomic replacement). Internal to the files module: not for other executor code. */
#ifndef SP_FILES_INT_H
#define SP_FILES_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "files.h"

#define FILES_DIR_MODE  0755 /* directories created for "parents" and by file.mkdir */
#define FILES_FILE_MODE 0644 /* new files written without "mode" */

/* Request fields. Each returns 0 (absent fields give the default) or < 0 with err set
 * (ERR_BAD_REQ for a wrong type). files_req_str refuses embedded NULs unless len is asked for;
 * *out is NULL when the field is absent or null. files_req_mode returns 1 if "mode" was given. */
int files_req_check(json_object *req, err_t *err);
int files_req_str(json_object *req, const char *key, const char **out, size_t *len, err_t *err);
int files_req_bool(json_object *req, const char *key, bool def, bool *out, err_t *err);
int files_req_int(json_object *req, const char *key, int64_t def, int64_t *out, err_t *err);
int files_req_mode(json_object *req, mode_t *mode, err_t *err);
/* Resolves the required path field key through path_resolve(): its exact bytes from key_b64
 * when given (json_get_name), else the string key. */
int files_req_path(const files_ctx_t *c, json_object *req, const char *key, int flags,
                   char out[PATH_MAX], err_t *err);

/* err_set(err, e, "<what> <path>: <strerror(e)>"). */
int files_sys_err(err_t *err, int e, const char *what, const char *path);
/* "file", "directory", "symlink" or "other". */
const char *files_type_name(mode_t m);
/* mkdir -p abs: missing directories get FILES_DIR_MODE, abs itself mode (exactly, past the
 * umask, when set_mode). *created tells whether abs itself was made. */
int files_mkdir_parents(const char *abs, mode_t mode, bool set_mode, bool *created, err_t *err);

/* Owner and group names already looked up (a listing's entries mostly share a few). */
#define FILES_NAMES_CACHE 8
typedef struct {
    int n;
    struct {
        bool group;
        unsigned id;
        char name[64];
    } slot[FILES_NAMES_CACHE];
} files_names_t;
/* Adds the "details" of st to o (docs/protocol.md "file.stat"): kind, mtime_ns, uid, gid,
 * owner, group; for a symlink at abs (NULL: not known), resolved, resolved_kind and
 * resolved_mode when it resolves. names may be NULL (no cache). files_details.c. */
void files_details(json_object *o, const struct stat *st, const char *abs, files_names_t *names);
/* type, size, mode, mtime of st (and target for a symlink, read at at/name) into o. */
void files_stat_fields(json_object *o, const struct stat *st, int at, const char *name);

/* A growing list of names (owned copies). */
typedef struct {
    char **names;
    size_t n, cap;
} names_t;
void names_add(names_t *v, const char *s);
void names_free(names_t *v);

#endif
