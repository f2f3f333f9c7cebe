/* envd_fs.c — envd's filesystem.Filesystem service over Connect (docs/e2b-wire.md 3.3, 3.4,
 * 3.8): Stat, MakeDir, Move, ListDir and Remove as the executor's file.* ops (with its
 * "details": what envd reports of a file), answered in envd's words; WatchDir and the polling
 * watchers (CreateWatcher, GetWatcherEvents, RemoveWatcher): envd_watch.c.
 *
 * A call's paths are made absolute and clean first (envd_path.h: "~" and relative paths against
 * the user's home, which the executor's HELLO names), so the answers name them as envd does.
 * The files are the sandbox user's: a call naming root (Authorization) resolves "~" to /root,
 * but runs as the sandbox's user like every file op. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envd_connect.h"
#include "envd_entry.h"
#include "envd_fs.h"
#include "envd_path.h"
#include "envd_routes.h"
#include "err_http.h"
#include "json_util.h"
#include "session.h"
#include "xalloc.h"

/* ---- paths ---- */

int
envd_fs_home(http_req_t *h, gw_session_t *s, bool stream, char *out, size_t cap)
{
    char user[64];
    if (envd_user(h, user, sizeof user) < 0) {
        if (stream)
            envd_stream_fail(h, ENVD_INVALID_ARGUMENT,
                             "Authorization names the user as Basic base64(\"<user>:\")");
        else
            envd_fail(h, ENVD_INVALID_ARGUMENT,
                      "Authorization names the user as Basic base64(\"<user>:\")");
        return -1;
    }
    snprintf(out, cap, "%s", !strcmp(user, "root") ? "/root" : session_home(s));
    return 0;
}

int
envd_fs_path(http_req_t *h, json_object *req, const char *key, const char *home, bool stream,
             char out[ENVD_PATH_MAX])
{
    json_object *v = json_get(req, key);
    char why[400];
    if (v && !json_object_is_type(v, json_type_string)) {
        snprintf(why, sizeof why, "%s must be a string", key);
    } else if (envd_path_abs(home, v ? json_object_get_string(v) : "",
                             v ? (size_t)json_object_get_string_len(v) : 0, out, ENVD_PATH_MAX, why,
                             sizeof why) == 0) {
        return 0;
    }
    if (stream)
        envd_stream_fail(h, ENVD_INVALID_ARGUMENT, "%s", why);
    else
        envd_fail(h, ENVD_INVALID_ARGUMENT, "%s", why);
    return -1;
}

bool
envd_fs_error_is(json_object *res, int code)
{
    json_object *e = json_get(res, "error");
    return e && err_from_gateway_name(json_get_str(e, "code", "")) == code;
}

/* ---- one call: an executor op (or two in a row), then its answer ---- */

typedef struct call call_t;
typedef void (*then_fn)(call_t *c, http_req_t *h, json_object *res);

struct call {
    uint64_t req;
    char sid[128];
    then_fn then; /* NULL once answered: the call is freed */
    char path[ENVD_PATH_MAX], dest[ENVD_PATH_MAX];
};

static void
on_done(void *ud, json_object *res)
{
    call_t *c = ud;
    then_fn then = c->then;
    c->then = NULL;
    http_req_t *h = http_find(c->req);
    if (h)
        then(c, h, res); /* may run another op (exec): then c->then is set again */
    if (!c->then)
        free(c);
}

/* Runs op (taken) for c, then(c, h, result) once it is done. */
static void
exec(call_t *c, http_req_t *h, json_object *op, then_fn then)
{
    gw_session_t *s = session_find(c->sid);
    err_t err = {0};
    c->then = then;
    if (!s || session_exec_op(s, op, on_done, c, &err) < 0) {
        c->then = NULL;
        envd_fail(h, s ? envd_code_of(err.code) : ENVD_UNAVAILABLE, "%s",
                  s ? err.msg : "the sandbox is not running");
    }
    json_object_put(op);
}

/* exec for a call's first op: c is freed here when it could not even start (answered then). */
static void
start(call_t *c, http_req_t *h, json_object *op, then_fn then)
{
    exec(c, h, op, then);
    if (!c->then)
        free(c);
}

static json_object *
file_op(const char *name, const char *key, const char *path)
{
    json_object *op = json_object_new_object();
    json_set_str(op, "op", name);
    json_set_str(op, key, path);
    return op;
}

static call_t *
call_new(http_req_t *h, gw_session_t *s)
{
    call_t *c = xcalloc(1, sizeof *c);
    c->req = h->id;
    snprintf(c->sid, sizeof c->sid, "%s", session_id(s));
    return c;
}

static void
answer_entry(http_req_t *h, json_object *st, const char *path)
{
    json_object *o = json_object_new_object();
    json_set(o, "entry", envd_entry_info(st, path));
    envd_answer(h, o);
}

/* ---- Stat ---- */

static void
stat_done(call_t *c, http_req_t *h, json_object *res)
{
    if (envd_fs_error_is(res, ERR_NOT_FOUND))
        envd_fail(h, ENVD_NOT_FOUND, "file not found: lstat %s: no such file or directory",
                  c->path);
    else if (json_get(res, "error"))
        envd_fail_result(h, res);
    else
        answer_entry(h, res, c->path);
}

static void
rpc_stat(http_req_t *h, gw_session_t *s, json_object *req, const char *home)
{
    call_t *c = call_new(h, s);
    if (envd_fs_path(h, req, "path", home, false, c->path) < 0) {
        free(c);
        return;
    }
    json_object *op = file_op("file.stat", "path", c->path);
    json_set_bool(op, "details", true);
    start(c, h, op, stat_done);
}

/* ---- MakeDir ---- */

static void
mkdir_done(call_t *c, http_req_t *h, json_object *res)
{
    if (envd_fs_error_is(res, EEXIST)) {
        envd_fail(h, ENVD_INVALID_ARGUMENT, "path already exists but it is not a directory: %s",
                  c->path);
    } else if (json_get(res, "error")) {
        envd_fail_result(h, res);
    } else if (!json_get_bool(res, "created", false)) {
        envd_fail(h, ENVD_ALREADY_EXISTS, "directory already exists: %s", c->path);
    } else {
        /* envd's answer names the directory only */
        json_object *e = json_object_new_object(), *o = json_object_new_object();
        json_set_str(e, "name", envd_path_base(c->path));
        json_set_str(e, "type", "FILE_TYPE_DIRECTORY");
        json_set_str(e, "path", c->path);
        json_set(o, "entry", e);
        envd_answer(h, o);
    }
}

static void
rpc_make_dir(http_req_t *h, gw_session_t *s, json_object *req, const char *home)
{
    call_t *c = call_new(h, s);
    if (envd_fs_path(h, req, "path", home, false, c->path) < 0) {
        free(c);
        return;
    }
    json_object *op = file_op("file.mkdir", "path", c->path);
    json_set_bool(op, "parents", true);
    start(c, h, op, mkdir_done);
}

/* ---- Move ---- */

static void
moved_stat_done(call_t *c, http_req_t *h, json_object *res)
{
    if (json_get(res, "error"))
        envd_fail_result(h, res);
    else
        answer_entry(h, res, c->dest);
}

static void
move_done(call_t *c, http_req_t *h, json_object *res)
{
    if (envd_fs_error_is(res, ERR_NOT_FOUND)) {
        envd_fail(h, ENVD_NOT_FOUND,
                  "source file not found: rename %s %s: no such file or directory", c->path,
                  c->dest);
        return;
    }
    if (json_get(res, "error")) {
        envd_fail_result(h, res);
        return;
    }
    json_object *op = file_op("file.stat", "path", c->dest);
    json_set_bool(op, "details", true);
    exec(c, h, op, moved_stat_done);
}

static void
rpc_move(http_req_t *h, gw_session_t *s, json_object *req, const char *home)
{
    call_t *c = call_new(h, s);
    if (envd_fs_path(h, req, "source", home, false, c->path) < 0 ||
        envd_fs_path(h, req, "destination", home, false, c->dest) < 0) {
        free(c);
        return;
    }
    /* os.Rename after the destination's parents are made, as envd does */
    json_object *op = file_op("file.move", "from", c->path);
    json_set_str(op, "to", c->dest);
    json_set_bool(op, "overwrite", true);
    json_set_bool(op, "parents", true);
    start(c, h, op, move_done);
}

/* ---- ListDir ---- */

static void
list_done(call_t *c, http_req_t *h, json_object *res)
{
    if (envd_fs_error_is(res, ERR_NOT_FOUND)) {
        envd_fail(h, ENVD_NOT_FOUND, "directory not found: lstat %s: no such file or directory",
                  c->path);
        return;
    }
    if (envd_fs_error_is(res, ENOTDIR)) {
        envd_fail(h, ENVD_INVALID_ARGUMENT, "path is not a directory: %s", c->path);
        return;
    }
    if (json_get(res, "error")) {
        envd_fail_result(h, res);
        return;
    }
    if (json_get_bool(res, "truncated", false)) {
        /* no silent gaps: envd has no way to say a listing is partial */
        envd_fail(h, ENVD_RESOURCE_EXHAUSTED,
                  "%s holds more than one answer can carry (%lld entries read): list a smaller "
                  "depth or its subdirectories",
                  c->path, (long long)json_get_int(res, "total", 0));
        return;
    }
    json_object *entries = json_get(res, "entries"), *out = json_object_new_array();
    size_t n = entries && json_object_is_type(entries, json_type_array)
                   ? json_object_array_length(entries)
                   : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(entries, i);
        char p[2 * ENVD_PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", strcmp(c->path, "/") ? c->path : "",
                 json_get_str(e, "name", ""));
        envd_path_clean(p);
        json_object_array_add(out, envd_entry_info(e, p));
    }
    json_object *o = json_object_new_object();
    json_set(o, "entries", out);
    envd_answer(h, o);
}

static void
rpc_list_dir(http_req_t *h, gw_session_t *s, json_object *req, const char *home)
{
    json_object *d = json_get(req, "depth");
    int64_t depth = d && json_object_is_type(d, json_type_int) ? json_object_get_int64(d) : 0;
    if (d && (!json_object_is_type(d, json_type_int) || depth < 0 || depth > UINT32_MAX)) {
        envd_fail(h, ENVD_INVALID_ARGUMENT, "depth must be an unsigned 32-bit integer");
        return;
    }
    call_t *c = call_new(h, s);
    if (envd_fs_path(h, req, "path", home, false, c->path) < 0) {
        free(c);
        return;
    }
    json_object *op = file_op("file.list", "path", c->path);
    json_set_int(op, "depth", depth ? depth : 1); /* envd: 0 (absent) is 1 */
    json_set_bool(op, "details", true);
    start(c, h, op, list_done);
}

/* ---- Remove ---- */

static void
remove_done(call_t *c, http_req_t *h, json_object *res)
{
    (void)c;
    /* envd's os.RemoveAll: a path that is not there is removed already */
    if (json_get(res, "error") && !envd_fs_error_is(res, ERR_NOT_FOUND))
        envd_fail_result(h, res);
    else
        envd_answer(h, json_object_new_object());
}

static void
rpc_remove(http_req_t *h, gw_session_t *s, json_object *req, const char *home)
{
    call_t *c = call_new(h, s);
    if (envd_fs_path(h, req, "path", home, false, c->path) < 0) {
        free(c);
        return;
    }
    json_object *op = file_op("file.remove", "path", c->path);
    json_set_bool(op, "recursive", true);
    start(c, h, op, remove_done);
}

static const struct {
    const char *name;
    bool stream;
    void (*fn)(http_req_t *h, gw_session_t *s, json_object *req, const char *home);
} methods[] = {
    {"Stat", false, rpc_stat},
    {"MakeDir", false, rpc_make_dir},
    {"Move", false, rpc_move},
    {"ListDir", false, rpc_list_dir},
    {"Remove", false, rpc_remove},
    {"WatchDir", true, envd_watch_dir},
    {"CreateWatcher", false, envd_watcher_create},
    {"GetWatcherEvents", false, envd_watcher_events},
    {"RemoveWatcher", false, envd_watcher_remove},
};

void
envd_filesystem_rpc(http_req_t *h, const char *sid)
{
    const char *m = strrchr(h->path, '/') + 1;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        if (strcmp(m, methods[i].name) != 0)
            continue;
        gw_session_t *s = envd_session(h, sid, methods[i].stream);
        if (!s)
            return;
        char home[ENVD_PATH_MAX];
        if (envd_fs_home(h, s, methods[i].stream, home, sizeof home) < 0)
            return;
        json_object *req = envd_request(h, methods[i].stream);
        if (!req)
            return;
        methods[i].fn(h, s, req, home);
        json_object_put(req);
        return;
    }
    envd_fail(h, ENVD_UNIMPLEMENTED,
              "filesystem.Filesystem/%.100s is not a method of envd's filesystem service", m);
}
