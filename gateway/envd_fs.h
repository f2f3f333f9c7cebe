/* envd_fs.h — what envd's filesystem service (envd_fs.c), its watchers (envd_watch.c) and its
 * /files routes (envd_files.c, envd_upload.c) share. Not for other modules. */
#ifndef SP_ENVD_FS_H
#define SP_ENVD_FS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "envd_path.h"
#include "http_server.h"

typedef struct gw_session gw_session_t;

/* The home of the user a call names (Authorization: root's is /root, anyone else is the
 * sandbox's user, session_home) into out. -1 once answered (a malformed Authorization). */
int envd_fs_home(http_req_t *h, gw_session_t *s, bool stream, char *out, size_t cap);
/* req's path field key ("" when absent) made absolute and clean against home (envd_path.h).
 * -1 once answered (invalid_argument). */
int envd_fs_path(http_req_t *h, json_object *req, const char *key, const char *home, bool stream,
                 char out[ENVD_PATH_MAX]);
/* Whether an executor op's result is the error code (err.h; ERR_NOT_FOUND, EEXIST, ...). */
bool envd_fs_error_is(json_object *res, int code);

/* The session of a /files request of sandbox sid, for a caller holding its envdAccessToken
 * (X-Access-Token) or a URL signed with it for op ("read", "write": the query's signature and
 * signature_expiration, envd_token.h); NULL once answered (401, 502: E2B's shape). */
gw_session_t *envd_files_session(http_req_t *h, const char *sid, const char *op);
/* path (a query's or a form part's) made absolute against the home of the query's username.
 * -1 once answered (400). */
int envd_files_path(http_req_t *h, gw_session_t *s, const char *path, char out[ENVD_PATH_MAX]);
/* The HTTP status and envd's message (into msg) of an executor op's error about path. */
int envd_files_status(json_object *res, const char *path, char *msg, size_t cap);

/* filesystem.Filesystem's watch methods (envd_watch.c); home: as envd_fs_home gave it. */
void envd_watch_dir(http_req_t *h, gw_session_t *s, json_object *req, const char *home);
void envd_watcher_create(http_req_t *h, gw_session_t *s, json_object *req, const char *home);
void envd_watcher_events(http_req_t *h, gw_session_t *s, json_object *req, const char *home);
void envd_watcher_remove(http_req_t *h, gw_session_t *s, json_object *req, const char *home);

#endif
