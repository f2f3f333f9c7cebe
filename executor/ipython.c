/* ipython.c — the IPython plugin (ipython.h): the helper process, the cell in progress, output
 * delivery within the channel's credit, and the observation. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bash_obs.h"
#include "buf.h"
#include "env.h"
#include "executor.h"
#include "io.h"
#include "ipython.h"
#include "ipython_obs.h"
#include "json_util.h"
#include "net_hint.h"
#include "plugin_proc.h"
#include "plugins.h"
#include "xalloc.h"

#define PENDING_MAX (1u << 20) /* output held for a slow client before we stop reading */

static struct {
    plugin_proc_t proc; /* sandpipe-jupyter */
    /* the cell in progress */
    channel_t *ch;
    json_object *action;
    char *cwd;
    buf_t pending;    /* output not yet sent for lack of credit */
    json_object *obs; /* the observation, once known, waiting for pending to drain */
    bool busy;
    /* status */
    int kernel_pid;
    char python[PATH_MAX];
    long start_ms;
    unsigned cells, restarts;
} ipy;

/* The kernel's interpreter: the sandbox's Python environment (VIRTUAL_ENV, the image's:
 * gateway/sandbox/provider_env.c), so `%pip install` and bash's `pip install` put packages where
 * both `import` them; else Debian's python3, which has ipykernel (a python3 earlier in PATH may
 * lack it). */
static const char *
python_path(char *out, size_t n)
{
    const char *venv = env_get(g_exec.base_env, "VIRTUAL_ENV");
    if (venv && venv[0] == '/') {
        int len = snprintf(out, n, "%s/bin/python3", venv);
        if (len > 0 && (size_t)len < n && access(out, X_OK) == 0)
            return out;
    }
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* The plugin's state in the plugins table: the kernel is its pid, the helper's group its memory. */
static void
set_state(plugin_state_t st, const char *reason)
{
    if (st != PLUGIN_RUNNING)
        ipy.kernel_pid = 0;
    plugins_set_state(PLUGIN_JUPYTER, st, ipy.kernel_pid, ipy.proc.pgid, reason);
}

static bool can_read(plugin_proc_t *p);
static void on_event(plugin_proc_t *p, json_object *ev);
static void on_gone(plugin_proc_t *p);

static int
start_helper(err_t *err)
{
    char dir[PATH_MAX], py[PATH_MAX + 16], kdir[PATH_MAX], python[PATH_MAX];
    if (plugin_dir(dir, sizeof dir) < 0)
        return err_set(err, ENOENT, "cannot find the executor's plugins folder");
    snprintf(py, sizeof py, "%s/python", dir);
    snprintf(kdir, sizeof kdir, "%s/jupyter", g_exec.rundir);
    if (mkdir(kdir, 0700) < 0 && errno != EEXIST)
        return err_set(err, errno, "cannot create %s: %s", kdir, strerror(errno));
    char **env = env_copy(g_exec.base_env);
    const char *old = env_get(env, "PYTHONPATH");
    char *pp = old && *old ? xasprintf("%s:%s", py, old) : xstrdup(py);
    env_set(&env, "PYTHONPATH", pp);
    free(pp);
    bool skills = access(py, R_OK) == 0 && plugin_allowed(PLUGIN_AGENT_SKILLS);
    char *av[] = {NULL,
                  "--dir",
                  kdir,
                  "--python",
                  (char *)python_path(python, sizeof python),
                  skills ? "--agent-skills" : NULL,
                  NULL};
    ipy.proc.on_event = on_event;
    ipy.proc.on_gone = on_gone;
    ipy.proc.can_read = can_read;
    int rc = plugin_proc_start(&ipy.proc, "sandpipe-jupyter", av, env, err);
    env_free(env);
    if (rc < 0) {
        set_state(err->code == ENOENT ? PLUGIN_UNAVAILABLE : PLUGIN_EXITED, err->msg);
        return -1;
    }
    set_state(PLUGIN_STARTING, NULL);
    return 0;
}

static bool
can_read(plugin_proc_t *p)
{
    (void)p;
    return ipy.pending.len < PENDING_MAX;
}

/* Sends held output within credit; closes the channel once the observation is known and all
 * output went out. */
static void
drain(void)
{
    if (ipy.ch && ipy.pending.len) {
        int64_t cr = chan_credit(ipy.ch);
        size_t n = cr > 0 ? (size_t)cr : 0;
        if (n > ipy.pending.len)
            n = ipy.pending.len;
        if (n) {
            chan_send_data(ipy.ch, 0, ipy.pending.data, n);
            buf_consume(&ipy.pending, n);
        }
    }
    if (!ipy.ch)
        buf_clear(&ipy.pending);
    if (ipy.obs && ipy.pending.len == 0) {
        channel_t *ch = ipy.ch;
        json_object *obs = ipy.obs;
        ipy.obs = NULL;
        ipy.ch = NULL;
        ipy.busy = false;
        json_object_put(ipy.action);
        ipy.action = NULL;
        free(ipy.cwd);
        ipy.cwd = NULL;
        if (ch) {
            ch->owner = NULL;
            chan_close(ch, obs);
        } else {
            json_object_put(obs);
        }
    }
    plugin_proc_update(&ipy.proc);
}

static void
finish(ipy_end_t end, const char *text, size_t len, json_object *images)
{
    json_object *args = json_get(ipy.action, "args");
    ipy_obs_in_t in = {
        .code = json_get_str(args, "code", ""),
        .end = end,
        .text = text,
        .text_len = len,
        .images = images,
        .timeout = json_get(ipy.action, "timeout"),
        .default_timeout = g_exec.default_timeout,
        .include_extra = json_get_bool(args, "include_extra", true),
        .cwd = ipy.cwd,
        .python = ipy.python,
    };
    /* as bash_session.c: /proc is read only when the output already shows a failure */
    in.no_network = net_hint_failure_shown(text ? text : "", len) && net_hint_offline();
    ipy.obs = ipython_obs_build(&in);
    ipy.cells++;
    drain();
}

static void
on_event(plugin_proc_t *p, json_object *ev)
{
    (void)p;
    const char *kind = json_get_str(ev, "ev", "");
    if (strcmp(kind, "kernel") == 0) {
        bool running = strcmp(json_get_str(ev, "state", ""), "running") == 0;
        ipy.kernel_pid = (int)json_get_int(ev, "pid", 0);
        if (running) {
            snprintf(ipy.python, sizeof ipy.python, "%s", json_get_str(ev, "python", ""));
            ipy.start_ms = (long)json_get_int(ev, "start_ms", 0);
            if (json_get(ev, "message"))
                ipy.restarts++;
        }
        set_state(running ? PLUGIN_RUNNING : PLUGIN_EXITED,
                  running ? NULL : json_get_str(ev, "message", "the kernel exited"));
    } else if (strcmp(kind, "out") == 0 && ipy.busy) {
        if (ipy.ch)
            buf_puts(&ipy.pending, json_get_str(ev, "text", ""));
        drain();
    } else if (strcmp(kind, "done") == 0 && ipy.busy) {
        const char *end = json_get_str(ev, "end", "");
        if (strcmp(end, "error") == 0) {
            char msg[ERR_MSG_MAX + 64];
            snprintf(msg, sizeof msg, "Cannot start the IPython kernel: %s",
                     json_get_str(ev, "message", ""));
            set_state(PLUGIN_EXITED, msg);
            ipy.obs = obs_error_new(msg);
            drain();
            return;
        }
        ipy_end_t e = strcmp(end, "ok") == 0        ? IPY_END_OK
                      : strcmp(end, "timeout") == 0 ? IPY_END_TIMEOUT
                                                    : IPY_END_DEAD;
        if (e == IPY_END_DEAD)
            set_state(PLUGIN_EXITED, json_get_str(ev, "message", "the kernel died during a cell"));
        json_object *t = json_get(ev, "text");
        finish(e, t ? json_object_get_string(t) : "", t ? (size_t)json_object_get_string_len(t) : 0,
               json_get(ev, "images"));
    }
}

static void
on_gone(plugin_proc_t *p)
{
    (void)p;
    set_state(PLUGIN_EXITED, "the IPython helper (sandpipe-jupyter) exited");
    if (ipy.busy && !ipy.obs)
        finish(IPY_END_DEAD, "", 0, NULL);
}

static void
on_resume(channel_t *ch)
{
    (void)ch;
    drain();
}

static void
on_detach(channel_t *ch)
{
    (void)ch;
    /* The client left: the cell runs on (upstream does not cancel it); its output is dropped. */
    ipy.ch = NULL;
    buf_clear(&ipy.pending);
    drain();
}

static const channel_ops_t ipy_ops = {.resume = on_resume, .detach = on_detach};

void
ipython_run_action(channel_t *ch, json_object *action, const char *cwd)
{
    json_object *args = json_get(action, "args");
    json_object *code = json_get(args, "code");
    if (!code || !json_object_is_type(code, json_type_string)) {
        chan_close_error(ch, ERR_BAD_REQ, "run_ipython: \"code\" must be a string");
        return;
    }
    if (!plugin_allowed(PLUGIN_JUPYTER)) {
        chan_close(ch, obs_error_new(PLUGIN_JUPYTER_MISSING));
        return;
    }
    if (ipy.busy) {
        chan_close_error(ch, ERR_BUSY, "an IPython cell is running in this sandbox");
        return;
    }
    err_t err = {0};
    if (!ipy.proc.running && start_helper(&err) < 0) {
        char msg[ERR_MSG_MAX + 64];
        snprintf(msg, sizeof msg, "Cannot start the IPython kernel: %s", err.msg);
        chan_close(ch, obs_error_new(msg));
        return;
    }
    json_object *to = json_get(action, "timeout");
    double timeout = to ? json_object_get_double(to) : g_exec.default_timeout;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "run");
    json_set(req, "code", json_object_get(code));
    json_set_str(req, "cwd", cwd);
    json_set(req, "timeout", json_object_new_double(timeout > 0 ? timeout : 0));
    int rc = plugin_proc_send(&ipy.proc, req);
    json_object_put(req);
    if (rc < 0) {
        plugin_proc_stop(&ipy.proc);
        set_state(PLUGIN_EXITED, "the IPython helper (sandpipe-jupyter) exited");
        chan_close(ch, obs_error_new("Cannot start the IPython kernel: the helper exited"));
        return;
    }
    if (plugins_state(PLUGIN_JUPYTER) != PLUGIN_RUNNING) /* a new or restarting kernel */
        set_state(PLUGIN_STARTING, NULL);
    ipy.busy = true;
    ipy.ch = ch;
    ipy.action = json_object_get(action);
    ipy.cwd = xstrdup(cwd ? cwd : g_exec.workspace);
    ch->ops = &ipy_ops;
    ch->owner = &ipy;
}

void
ipython_status_extras(json_object *o)
{
    if (ipy.python[0])
        json_set_str(o, "python", ipy.python);
    if (ipy.start_ms)
        json_set_int(o, "start_ms", ipy.start_ms);
    json_set_int(o, "cells", ipy.cells);
    json_set_int(o, "restarts", ipy.restarts);
}

void
ipython_on_child_exit(pid_t pid, int status)
{
    (void)status;
    plugin_proc_reaped(&ipy.proc, pid);
}

void
ipython_shutdown(void)
{
    plugin_proc_stop(&ipy.proc);
    char kdir[PATH_MAX];
    snprintf(kdir, sizeof kdir, "%s/jupyter", g_exec.rundir);
    io_remove_flat_dir(kdir);
}
