/* browser.c — the browser plugin (browser.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bash_obs.h"
#include "browser.h"
#include "browser_obs.h"
#include "env.h"
#include "executor.h"
#include "json_util.h"
#include "plugin_proc.h"
#include "plugins.h"
#include "xalloc.h"

static struct {
    plugin_proc_t proc;
    pid_t chromium; /* its pid once up (the helper's view: the sandbox's) */
    long start_ms;
    channel_t *ch; /* the action in progress (NULL once its client left) */
    bool busy;
    char *trigger, *action_str;
    unsigned actions;
} br;

/* The plugin's state in the plugins table: Chromium is its pid, the helper's group its memory. */
static void
set_state(plugin_state_t st, const char *reason)
{
    if (st != PLUGIN_RUNNING)
        br.chromium = 0;
    plugins_set_state(PLUGIN_BROWSER, st, br.chromium, br.proc.pgid, reason);
}

static void
finish(json_object *obs)
{
    channel_t *ch = br.ch;
    br.ch = NULL;
    br.busy = false;
    free(br.trigger);
    free(br.action_str);
    br.trigger = br.action_str = NULL;
    br.actions++;
    if (ch) {
        ch->owner = NULL;
        chan_close(ch, obs);
    } else {
        json_object_put(obs);
    }
}

static void
on_event(plugin_proc_t *p, json_object *ev)
{
    (void)p;
    if (strcmp(json_get_str(ev, "ev", ""), "browser") == 0) {
        bool running = strcmp(json_get_str(ev, "state", ""), "running") == 0;
        br.chromium = running ? (pid_t)json_get_int(ev, "pid", 0) : 0;
        if (running)
            br.start_ms = (long)json_get_int(ev, "start_ms", 0);
        set_state(running ? PLUGIN_RUNNING : PLUGIN_EXITED,
                  running ? NULL : json_get_str(ev, "message", "Chromium exited"));
        return;
    }
    if (!br.busy || strcmp(json_get_str(ev, "ev", ""), "done") != 0)
        return;
    const char *fatal = json_get_str(ev, "fatal", NULL);
    if (fatal) {
        char msg[ERR_MSG_MAX + 64];
        snprintf(msg, sizeof msg, "Browser is not available: %s", fatal);
        finish(browser_obs_error(br.trigger, "", br.action_str, msg));
        return;
    }
    finish(browser_obs_build(br.trigger, ev, br.action_str));
}

static void
on_gone(plugin_proc_t *p)
{
    (void)p;
    set_state(PLUGIN_EXITED, "the browser helper (sandpipe-browser) exited");
    if (br.busy)
        finish(
            browser_obs_error(br.trigger, "", br.action_str,
                              "The browser helper exited; it starts again with the next action"));
}

static void
on_detach(channel_t *ch)
{
    (void)ch;
    br.ch = NULL; /* the step finishes in the browser; its observation is dropped */
}

static const channel_ops_t br_ops = {.detach = on_detach};

static int
start(err_t *err)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/browser", g_exec.rundir);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return err_set(err, errno, "cannot create %s: %s", dir, strerror(errno));
    br.proc.on_event = on_event;
    br.proc.on_gone = on_gone;
    char *av[] = {NULL, "--dir", dir, NULL};
    if (plugin_proc_start(&br.proc, "sandpipe-browser", av, g_exec.base_env, err) < 0) {
        set_state(err->code == ENOENT ? PLUGIN_UNAVAILABLE : PLUGIN_EXITED, err->msg);
        return -1;
    }
    return 0;
}

/* The BrowserGym action a `browse` means: goto("url") as given; a url without a scheme is a
 * file under cwd (upstream prefixes its own cwd, which makes no usable URL). */
static char *
goto_action(const char *url, const char *cwd)
{
    char *full;
    if (strstr(url, "://") || !strncmp(url, "about:", 6) || !strncmp(url, "data:", 5))
        full = xstrdup(url);
    else if (url[0] == '/')
        full = xasprintf("file://%s", url);
    else
        full = xasprintf("file://%s/%s", cwd, url);
    json_object *s = json_object_new_string(full);
    free(full);
    char *r =
        xasprintf("goto(%s)", json_object_to_json_string_ext(s, JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(s);
    return r;
}

void
browser_run_action(channel_t *ch, json_object *action, const char *cwd)
{
    const char *kind = json_get_str(action, "action", "");
    json_object *args = json_get(action, "args");
    bool interactive = strcmp(kind, "browse_interactive") == 0;
    const char *text = json_get_str(args, interactive ? "browser_actions" : "url", NULL);
    if (!text) {
        chan_close_error(ch, ERR_BAD_REQ,
                         interactive ? "browse_interactive: \"browser_actions\" must be a string"
                                     : "browse: \"url\" must be a string");
        return;
    }
    if (!plugin_allowed(PLUGIN_BROWSER)) {
        chan_close(ch, obs_error_new(PLUGIN_BROWSER_MISSING));
        return;
    }
    if (br.busy) {
        chan_close_error(ch, ERR_BUSY, "a browser action is running in this sandbox");
        return;
    }
    char *action_str = interactive ? xstrdup(text) : goto_action(text, cwd ? cwd : "/");
    err_t err = {0};
    if (!br.proc.running && start(&err) < 0) {
        char msg[ERR_MSG_MAX + 64];
        snprintf(msg, sizeof msg, "Browser is not available: %s", err.msg);
        chan_close(ch, browser_obs_error(kind, interactive ? "" : text, action_str, msg));
        free(action_str);
        return;
    }
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "step");
    json_set_str(req, "action", action_str);
    json_set_str(req, "workspace", g_exec.workspace);
    json_set_bool(req, "axtree", interactive); /* only browse_interactive shows it */
    int rc = plugin_proc_send(&br.proc, req);
    json_object_put(req);
    if (plugins_state(PLUGIN_BROWSER) != PLUGIN_RUNNING) /* Chromium starts with this step */
        set_state(PLUGIN_STARTING, NULL);
    br.busy = true;
    br.ch = ch;
    br.trigger = xstrdup(kind);
    br.action_str = action_str;
    ch->ops = &br_ops;
    ch->owner = &br;
    if (rc < 0) {
        plugin_proc_stop(&br.proc);
        on_gone(&br.proc);
    }
}

void
browser_status_extras(json_object *o)
{
    if (br.start_ms)
        json_set_int(o, "start_ms", br.start_ms);
    json_set_int(o, "actions", br.actions);
}

void
browser_on_child_exit(pid_t pid, int status)
{
    (void)status;
    plugin_proc_reaped(&br.proc, pid);
}

void
browser_shutdown(void)
{
    plugin_proc_stop(&br.proc);
}
