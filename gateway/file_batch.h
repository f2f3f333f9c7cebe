/* file_batch.h — the file events a client has not been sent yet (docs/api.md, "File events"):
 * repeated events (the same event on the same path) kept once, and past FILE_BATCH_MAX events
 * one summary instead of each: {"event":"many","path":X,"count":N}, X the deepest directory
 * holding every change, so a burst (git checkout, npm install) costs a client one message and
 * one listing, and a batch never holds more than FILE_BATCH_MAX events. Pure: no I/O. */
#ifndef SP_FILE_BATCH_H
#define SP_FILE_BATCH_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#define FILE_BATCH_MAX 256

typedef struct {
    json_object *events; /* array of the batch's events; NULL when empty or summed up */
    char *many;          /* summed up: the directory under which every change happened */
    uint64_t count;      /* events added since the batch was last taken */
} file_batch_t;

/* Adds ev ({"event","path",...} with an absolute path; a reference is taken). An event whose
 * "path" is a directory to list again as a whole ("many", "resync") stands for changes in it;
 * any other, for a change in its path's directory. */
void file_batch_add(file_batch_t *b, json_object *ev);
bool file_batch_empty(const file_batch_t *b);
/* The batch as an array of events (the caller owns it), then empty; NULL when it was empty. */
json_object *file_batch_take(file_batch_t *b);
void file_batch_clear(file_batch_t *b);

/* The length of the longest directory both absolute paths are in or are ("/a/b" and "/a/bc":
 * 2, "/a"; "/x" and "/y": 1, "/"). */
size_t file_batch_common_dir(const char *a, size_t na, const char *b, size_t nb);

#endif
