/* ops.c — the table of protocol operations (OPEN "op" -> handler) and the small one-shot
 * handlers: OpenHands actions, bash session management, file operations, health. Streaming
 * operations live in their own modules (bash_session.c, proc.c, terminal.c, file_stream.c,
 * port_tunnel.c, port_watch.c, vscode.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "bash_obs.h"
#include "bash_session.h"
#include "browser.h"
#include "conn.h"
#include "durable.h"
#include "executor.h"
#include "file_actions.h"
#include "file_stream.h"
#include "files.h"
#include "health.h"
#include "ipython.h"
#include "json_util.h"
#include "legacy_edit.h"
#include "plugins.h"
#include "port_scan.h"
#include "port_tunnel.h"
#include "port_watch.h"
#include "proc.h"
#include "terminal.h"
#include "vscode.h"

static const char *
session_name(json_object *req)
{
    return json_get_str(req, "session", BASH_DEFAULT_SESSION);
}

/* The observation of an OpenHands file action (read, write, edit); others are not supported. */
static json_object *
file_action(const char *kind, const fa_ctx_t *ctx, json_object *args)
{
    if (strcmp(kind, "read") == 0)
        return fa_read(g_exec.editor, ctx, args);
    if (strcmp(kind, "write") == 0)
        return fa_write(g_exec.editor, ctx, args);
    if (strcmp(kind, "edit") == 0)
        return fa_edit(g_exec.editor, ctx, args);
    char msg[160];
    snprintf(msg, sizeof msg, "Action %.100s is not supported in the current runtime.", kind);
    return obs_error_new(msg);
}

/* {"op":"action","session":"default","id":"…","action":{OpenHands action}} -> observation.
 * With "id" the action is durable (durable.h): it survives the connection. */
static void
op_action(channel_t *ch, json_object *req)
{
    json_object *jid = json_get(req, "id");
    if (jid) {
        err_t derr = {0};
        if (!json_object_is_type(jid, json_type_string) ||
            durable_open(ch, json_object_get_string(jid), &derr) < 0) {
            chan_close_error(ch, derr.code ? derr.code : ERR_BAD_REQ,
                             derr.code ? derr.msg : "action \"id\" must be a string");
            return;
        }
    }
    json_object *action = json_get(req, "action");
    const char *kind = json_get_str(action, "action", NULL);
    if (!kind) {
        chan_close_error(ch, ERR_BAD_REQ,
                         "\"action\" must be an OpenHands action object with a string \"action\"");
        return;
    }
    json_object *args = json_get(action, "args");
    if (args && !json_object_is_type(args, json_type_object)) {
        chan_close_error(ch, ERR_BAD_REQ, "action \"args\" must be an object");
        return;
    }
    err_t err = {0};
    bash_session_t *s = bash_get(session_name(req), true, NULL, NULL, &err);
    if (!s) {
        chan_close_error(ch, err.code, err.msg);
        return;
    }
    if (strcmp(kind, "run") == 0) {
        if (args && json_get(args, "command") &&
            !json_object_is_type(json_get(args, "command"), json_type_string)) {
            chan_close_error(ch, ERR_BAD_REQ, "run: \"command\" must be a string");
            return;
        }
        bash_run_action(s, ch, action);
        return;
    }
    if (strcmp(kind, "browse") == 0 || strcmp(kind, "browse_interactive") == 0) {
        browser_run_action(ch, action, bash_cwd(s));
        return;
    }
    if (strcmp(kind, "run_ipython") == 0) {
        ipython_run_action(ch, action, bash_cwd(s));
        return;
    }
    fa_ctx_t ctx = {.cwd = bash_cwd(s), .workspace = g_exec.workspace, .roots = &g_exec.roots};
    json_object *empty = NULL, *legacy = NULL;
    if (!args)
        args = empty = json_object_new_object();
    json_object *obs;
    /* Older trajectories' file actions may carry their arguments as Python code only. */
    if (legacy_edit_args(args, &legacy, &err) < 0) {
        char msg[sizeof err.msg + 200];
        snprintf(msg, sizeof msg,
                 "Cannot decode translated_ipython_code: %s. It must be "
                 "print(file_editor(**{...})) with a dict of strings, integers, None, True, False "
                 "and lists.",
                 err.msg);
        obs = obs_error_new(msg);
    } else {
        obs = file_action(kind, &ctx, legacy ? legacy : args);
    }
    json_object_put(legacy);
    json_object_put(empty);
    chan_close(ch, obs);
}

static void
op_bash_open(channel_t *ch, json_object *req)
{
    err_t err = {0};
    const char *name = session_name(req);
    if (bash_get(name, false, NULL, NULL, NULL)) {
        chan_close_error(ch, EEXIST, "a bash session with that name exists");
        return;
    }
    bash_session_t *s =
        bash_get(name, true, json_get(req, "env"), json_get_str(req, "cwd", NULL), &err);
    if (!s) {
        chan_close_error(ch, err.code, err.msg);
        return;
    }
    json_object *r = json_object_new_object();
    json_set_str(r, "session", name);
    chan_close(ch, r);
}

static void
op_bash_close(channel_t *ch, json_object *req)
{
    err_t err = {0};
    if (bash_close(session_name(req), &err) < 0)
        chan_close_error(ch, err.code, err.msg);
    else
        chan_close(ch, NULL);
}

static void
op_bash_list(channel_t *ch, json_object *req)
{
    (void)req;
    chan_close(ch, bash_list());
}

static void
op_bash_env(channel_t *ch, json_object *req)
{
    json_object *env = json_get(req, "env");
    err_t err = {0};
    if (!env || !json_object_is_type(env, json_type_object)) {
        chan_close_error(ch, ERR_BAD_REQ, "bash.env needs \"env\": an object of NAME: value");
        return;
    }
    bash_session_t *s = bash_get(session_name(req), true, NULL, NULL, &err);
    if (!s)
        chan_close_error(ch, err.code, err.msg);
    else
        bash_add_env(s, ch, env);
}

static void
op_bash_signal(channel_t *ch, json_object *req)
{
    err_t err = {0};
    int sig = signal_from_json(json_get(req, "signal"));
    bash_session_t *s = bash_get(session_name(req), false, NULL, NULL, &err);
    if (sig < 0)
        chan_close_error(ch, ERR_BAD_REQ, "unknown signal");
    else if (!s || bash_signal(s, sig, &err) < 0)
        chan_close_error(ch, err.code, err.msg);
    else
        chan_close(ch, NULL);
}

/* One-shot file operations share one shape. */
typedef json_object *(*file_fn)(const files_ctx_t *, json_object *, err_t *);

static void
run_file_op(channel_t *ch, json_object *req, file_fn fn)
{
    err_t err = {0};
    files_ctx_t ctx = {.cwd = json_get_str(req, "cwd", g_exec.workspace), .roots = &g_exec.roots};
    json_object *r = fn(&ctx, req, &err);
    if (r)
        chan_close(ch, r);
    else
        chan_close_error(ch, err.code ? err.code : ERR_BAD_REQ, err.msg[0] ? err.msg : "failed");
}

#define FILE_OP(name, fn)                                                                          \
    static void name(channel_t *ch, json_object *req)                                              \
    {                                                                                              \
        run_file_op(ch, req, fn);                                                                  \
    }
FILE_OP(op_file_stat, files_stat)
FILE_OP(op_file_list, files_list)
FILE_OP(op_file_read, files_read)
FILE_OP(op_file_write, files_write)
FILE_OP(op_file_mkdir, files_mkdir)
FILE_OP(op_file_move, files_move)
FILE_OP(op_file_remove, files_remove)
FILE_OP(op_oh_list_files, files_oh_list)

static void
op_health(channel_t *ch, json_object *req)
{
    (void)req;
    chan_close(ch, health_snapshot());
}

static const struct {
    const char *name;
    op_handler_t fn;
} ops[] = {
    {"action", op_action},
    {"action.attach", durable_op_attach},
    {"action.release", durable_op_release},
    {"action.list", durable_op_list},
    {"bash.open", op_bash_open},
    {"bash.close", op_bash_close},
    {"bash.list", op_bash_list},
    {"bash.env", op_bash_env},
    {"bash.signal", op_bash_signal},
    {"proc.spawn", proc_op_spawn},
    {"proc.attach", proc_op_attach},
    {"proc.list", proc_op_list},
    {"proc.signal", proc_op_signal},
    {"terminal", terminal_op_open},
    {"terminal.attach", terminal_op_attach},
    {"file.stat", op_file_stat},
    {"file.list", op_file_list},
    {"file.read", op_file_read},
    {"file.write", op_file_write},
    {"file.mkdir", op_file_mkdir},
    {"file.move", op_file_move},
    {"file.remove", op_file_remove},
    {"file.upload", file_op_upload},
    {"file.download", file_op_download},
    {"file.watch", file_op_watch},
    {"port.connect", port_op_connect},
    {"port.list", port_op_list},
    {"port.watch", port_op_watch},
    {"oh.list_files", op_oh_list_files},
    {"health", op_health},
    {"plugins", plugins_op},
    {"vscode.start", vscode_op_start},
};

op_handler_t
ops_lookup(const char *name)
{
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i].name, name) == 0)
            return ops[i].fn;
    return NULL;
}
