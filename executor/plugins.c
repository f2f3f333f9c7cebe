/* plugins.c — the plugins table (plugins.h). */
#include "plugins.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "browser.h"
#include "executor.h"
#include "ipython.h"
#include "json_util.h"
#include "vscode.h"

#define WATCHERS_MAX  8
#define MEM_CHECK_MS  5000      /* how often watchers' memory figures are looked at again */
#define MEM_CHANGE_MB (1 << 20) /* a change of resident memory worth telling watchers */

static const char *const names[PLUGIN_COUNT] = {"agent_skills", "jupyter", "browser", "vscode"};
static const char *const state_names[] = {"not_started", "starting",    "running",
                                          "exited",      "unavailable", "disabled"};

typedef struct {
    plugin_state_t state;
    pid_t pid, pgid;
    char reason[256];
} plugin_t;

static struct {
    bool limited; /* a `plugins` op gave the session's list */
    bool allowed[PLUGIN_COUNT];
    plugin_t p[PLUGIN_COUNT];
    channel_t *watchers[WATCHERS_MAX];
    long long told_rss[PLUGIN_COUNT]; /* the memory figures watchers last heard */
    ltimer_t mem_timer;
} pl;

const char *
plugin_name(plugin_id_t id)
{
    return (unsigned)id < PLUGIN_COUNT ? names[id] : "";
}

int
plugin_by_name(const char *name)
{
    for (int i = 0; i < PLUGIN_COUNT; i++)
        if (name && strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

bool
plugin_allowed(plugin_id_t id)
{
    return !pl.limited || pl.allowed[id];
}

plugin_state_t
plugins_state(plugin_id_t id)
{
    return pl.p[id].state;
}

long long
plugins_group_rss(pid_t pgid)
{
    if (pgid <= 0)
        return 0;
    long long pages = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], line[1024];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[n] = '\0';
        char *p = strrchr(line, ')'); /* comm may hold spaces and parentheses */
        long long grp = 0, rss = 0;
        /* after comm: state ppid pgrp ... rss is field 24 */
        if (p &&
            sscanf(p + 2,
                   "%*c %*d %lld %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
                   "%*d %*u %*u %lld",
                   &grp, &rss) == 2 &&
            grp == pgid)
            pages += rss;
    }
    if (d)
        closedir(d);
    return pages * sysconf(_SC_PAGESIZE);
}

/* The state a status shows: the table's, or what the session's list and the installed
 * programs decide. agent_skills lives in the kernel, so it follows jupyter. */
static plugin_state_t
shown_state(plugin_id_t id, const char **reason)
{
    *reason = pl.p[id].reason[0] ? pl.p[id].reason : NULL;
    if (!plugin_allowed(id)) {
        *reason = NULL;
        return PLUGIN_DISABLED;
    }
    char path[PATH_MAX];
    if (id == PLUGIN_VSCODE && pl.p[id].state != PLUGIN_STARTING &&
        pl.p[id].state != PLUGIN_RUNNING && !vscode_find(path, sizeof path)) {
        *reason = VSCODE_MISSING;
        return PLUGIN_UNAVAILABLE;
    }
    if (id == PLUGIN_AGENT_SKILLS) {
        if (!plugin_allowed(PLUGIN_JUPYTER)) {
            *reason = "agent_skills runs inside the IPython kernel: the session's plugins must "
                      "include jupyter";
            return PLUGIN_UNAVAILABLE;
        }
        return shown_state(PLUGIN_JUPYTER, reason);
    }
    return pl.p[id].state;
}

json_object *
plugins_status(void)
{
    json_object *all = json_object_new_object();
    for (int i = 0; i < PLUGIN_COUNT; i++) {
        const char *reason;
        plugin_state_t st = shown_state((plugin_id_t)i, &reason);
        json_object *o = json_object_new_object();
        json_set_str(o, "state", state_names[st]);
        if (reason && (st == PLUGIN_EXITED || st == PLUGIN_UNAVAILABLE))
            json_set_str(o, "reason", reason);
        plugin_t *p = &pl.p[i == PLUGIN_AGENT_SKILLS ? PLUGIN_JUPYTER : i];
        if (st == PLUGIN_RUNNING && p->pid > 0)
            json_set_int(o, "pid", p->pid);
        if (i != PLUGIN_AGENT_SKILLS && (st == PLUGIN_RUNNING || st == PLUGIN_STARTING))
            json_set_int(o, "rss_bytes", plugins_group_rss(p->pgid));
        if (i == PLUGIN_JUPYTER)
            ipython_status_extras(o);
        else if (i == PLUGIN_BROWSER)
            browser_status_extras(o);
        else if (i == PLUGIN_VSCODE && st != PLUGIN_DISABLED && st != PLUGIN_UNAVAILABLE)
            vscode_status_extras(o);
        json_set(all, names[i], o);
    }
    return all;
}

static bool
watched(void)
{
    for (int i = 0; i < WATCHERS_MAX; i++)
        if (pl.watchers[i])
            return true;
    return false;
}

static json_object *
status_event(void)
{
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "plugins");
    json_object *st = plugins_status();
    for (int i = 0; i < PLUGIN_COUNT; i++)
        pl.told_rss[i] = json_get_int(json_get(st, names[i]), "rss_bytes", 0);
    json_set(ev, "plugins", st);
    return ev;
}

static void
notify(void)
{
    if (!watched())
        return;
    json_object *ev = status_event();
    for (int i = 0; i < WATCHERS_MAX; i++)
        if (pl.watchers[i])
            chan_send_json(pl.watchers[i], ev);
    json_object_put(ev);
}

void
plugins_set_state(plugin_id_t id, plugin_state_t st, pid_t pid, pid_t pgid, const char *reason)
{
    plugin_t *p = &pl.p[id];
    bool changed = p->state != st || p->pid != pid || strcmp(p->reason, reason ? reason : "");
    p->state = st;
    p->pid = pid;
    p->pgid = pgid;
    snprintf(p->reason, sizeof p->reason, "%s", reason ? reason : "");
    if (changed)
        notify();
}

/* Memory moves without a change of state: watchers hear of a change of a MiB or more. */
static void
on_mem_timer(ltimer_t *t)
{
    (void)t;
    if (!watched())
        return;
    bool moved = false;
    for (int i = 0; i < PLUGIN_COUNT && !moved; i++) {
        plugin_state_t st = pl.p[i].state;
        long long rss =
            st == PLUGIN_RUNNING || st == PLUGIN_STARTING ? plugins_group_rss(pl.p[i].pgid) : 0;
        long long d = rss - pl.told_rss[i];
        moved = i != PLUGIN_AGENT_SKILLS && (d >= MEM_CHANGE_MB || -d >= MEM_CHANGE_MB);
    }
    if (moved)
        notify();
    loop_timer_start(g_exec.loop, &pl.mem_timer, MEM_CHECK_MS, on_mem_timer, NULL);
}

static void
on_watch_detach(channel_t *ch)
{
    for (int i = 0; i < WATCHERS_MAX; i++)
        if (pl.watchers[i] == ch)
            pl.watchers[i] = NULL;
}

static const channel_ops_t watch_ops = {.detach = on_watch_detach};

void
plugins_op(channel_t *ch, json_object *req)
{
    json_object *allowed = json_get(req, "allowed");
    if (allowed) {
        bool want[PLUGIN_COUNT] = {false};
        size_t n = json_object_is_type(allowed, json_type_array) ? json_object_array_length(allowed)
                                                                 : (size_t)-1;
        for (size_t i = 0; n != (size_t)-1 && i < n; i++) {
            json_object *v = json_object_array_get_idx(allowed, i);
            int id = json_object_is_type(v, json_type_string)
                         ? plugin_by_name(json_object_get_string(v))
                         : -1;
            if (id < 0) {
                n = (size_t)-1;
                break;
            }
            want[id] = true;
        }
        if (n == (size_t)-1) {
            chan_close_error(
                ch, ERR_BAD_REQ,
                "\"allowed\" must be a list of agent_skills, jupyter, browser, vscode");
            return;
        }
        pl.limited = true;
        memcpy(pl.allowed, want, sizeof want);
        notify(); /* the other watchers */
    }
    int slot = -1;
    for (int i = 0; i < WATCHERS_MAX && slot < 0; i++)
        if (!pl.watchers[i])
            slot = i;
    if (slot < 0) {
        chan_close_error(ch, ERR_BUSY, "too many plugin watchers");
        return;
    }
    pl.watchers[slot] = ch;
    ch->ops = &watch_ops;
    ch->owner = &pl;
    json_object *ev = status_event();
    chan_send_json(ch, ev);
    if (!pl.mem_timer.active)
        loop_timer_start(g_exec.loop, &pl.mem_timer, MEM_CHECK_MS, on_mem_timer, NULL);
    json_object_put(ev);
}
