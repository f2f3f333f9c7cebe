/* file_actions.h — OpenHands file actions (read, write, edit) turned into observation JSON,
 * with the OHEditor's semantics and texts (openhands-aci 0.3.2, OpenHands 0.62.0).
 * Synchronous, no event loop: each call reads/writes files and returns the observation.
 * The editor keeps per-file undo history (10 entries per file) in editor_t. */
#ifndef SP_FILE_ACTIONS_H
#define SP_FILE_ACTIONS_H

#include <json-c/json.h>

#include "path_confine.h"
/* Also shared by the editor and the actions, each a concept of its own: */
#include "file_kind.h" /* fa_is_binary, fa_is_supported_binary, fa_media_type */
#include "py_compat.h" /* fa_py_path, fa_py_strip and Python's repr/str/OSError texts */
#include "text_diff.h" /* fa_unified_diff */

typedef struct editor editor_t;

editor_t *editor_new(void);
void editor_free(editor_t *ed); /* NULL is a no-op */

typedef struct {
    const char *cwd;           /* bash session's current directory: relative paths resolve here */
    const char *workspace;     /* initial working directory (for "Maybe you meant ...?") */
    const path_roots_t *roots; /* every path must resolve inside these ("/" in a sandbox) */
} fa_ctx_t;

/* Each takes the action's "args" object (borrowed) and returns a new observation object
 * {"observation": ..., "content": ..., "extras": {...}, "message": ...} exactly as the
 * OpenHands action-execution server serialises it (FileReadObservation, FileWriteObservation,
 * FileEditObservation, ErrorObservation). Never NULL. */
json_object *fa_read(editor_t *ed, const fa_ctx_t *ctx, json_object *args);
json_object *fa_write(editor_t *ed, const fa_ctx_t *ctx, json_object *args);
json_object *fa_edit(editor_t *ed, const fa_ctx_t *ctx, json_object *args);

/* ---- Shared between the editor (editor*.c, the OHEditor core) and file_actions.c; not for
 * other callers. */

#include <stddef.h>

/* One OHEditor call. Strings are borrowed; NULL means "not given" (Python None). */
typedef struct {
    const char *command;
    const char *path; /* as the agent wrote it */
    const char *file_text;
    const char *old_str;
    size_t old_len;
    const char *new_str;
    size_t new_len;
    size_t file_text_len;
    int has_insert_line;
    long long insert_line;
    json_object *view_range; /* borrowed; NULL or json null when absent */
} ed_args_t;

/* CLIResult: output on success, error (a ToolError message, without "ERROR:\n") on failure.
 * old/new content feed the diff. All owned by the result; free with ed_result_clear(). */
typedef struct {
    char *output;
    size_t output_len;
    char *error;
    size_t error_len;
    char *old_content;
    size_t old_len;
    char *new_content;
    size_t new_len;
} ed_result_t;

/* Runs one editor command. Returns 0 (result filled, error or not), or -ERR_ESCAPE when the
 * path leaves ctx->roots (res->error then holds the observation text). */
int editor_run(editor_t *ed, const fa_ctx_t *ctx, const ed_args_t *a, ed_result_t *res);
void ed_result_clear(ed_result_t *res);

/* Replaces abs_path atomically (atomic_file_*: temp file in the same directory, then rename),
 * with the checks upstream's open(path, "w") makes: a directory or an existing file we may not
 * write is refused. An existing file keeps its mode and owner; a new one gets new_mode (or
 * 0666 & ~umask if new_mode < 0). Returns 0, 1 if written but the owner could not be kept, or
 * -errno. */
int fa_write_atomic(const char *abs_path, const void *p, size_t n, int new_mode);

#endif
