/* files.h — sandpipe's own file operations (not OpenHands actions): stat, list, read lines,
 * write (atomic, mode kept), mkdir, move, remove, and OpenHands' /list_files listing.
 * Synchronous; each takes the request JSON (borrowed) and returns a new result object, or
 * NULL with err set. Every path goes through path_resolve() against ctx->roots. */
#ifndef SP_FILES_H
#define SP_FILES_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "err.h"
#include "path_confine.h"

typedef struct {
    const char *cwd; /* relative paths resolve here */
    const path_roots_t *roots;
} files_ctx_t;

/* file.stat's reply for abs, a resolved path (lstat: a final symlink is not followed), with the
 * "details" fields when asked; NULL with err when it cannot be stat'ed. */
json_object *files_stat_path(const char *abs, bool details, err_t *err);

json_object *files_stat(const files_ctx_t *c, json_object *req, err_t *err);
json_object *files_list(const files_ctx_t *c, json_object *req, err_t *err);
json_object *files_read(const files_ctx_t *c, json_object *req, err_t *err);
json_object *files_write(const files_ctx_t *c, json_object *req, err_t *err);
json_object *files_mkdir(const files_ctx_t *c, json_object *req, err_t *err);
json_object *files_move(const files_ctx_t *c, json_object *req, err_t *err);
json_object *files_remove(const files_ctx_t *c, json_object *req, err_t *err);
/* OpenHands POST /list_files semantics: {"path": optional} -> {"files": [...]} */
json_object *files_oh_list(const files_ctx_t *c, json_object *req, err_t *err);

/* Atomic replacement of a file: write to a temp file in the same directory, then rename over
 * the target. An existing target's mode (and owner, where permitted) is kept. */
typedef struct {
    int fd;
    char path[PATH_MAX];
    char tmp[PATH_MAX];
} atomic_file_t;

int atomic_file_open(atomic_file_t *af, const char *abs_path, mode_t default_mode, err_t *err);
int atomic_file_write(atomic_file_t *af, const void *p, size_t n, err_t *err);
int atomic_file_commit(atomic_file_t *af, err_t *err); /* fsync-free: rename is the commit point */
void atomic_file_abort(atomic_file_t *af);             /* removes the temp file */

#endif
