/* plugins.h — the sandbox's plugins as one table: which ones the session allows (its `plugins`
 * list, given by the gateway's `plugins` op; every plugin until then, so a bare executor under
 * sandpipe-exec has them all), each one's state (not_started, starting, running, exited with a
 * reason, unavailable, disabled) with its pid and memory, and the channels told when a state
 * changes. ipython.c, browser.c and vscode.c report their transitions here; they stay the owners of
 * their processes. */
#ifndef SP_PLUGINS_H
#define SP_PLUGINS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#include "conn.h"
#include "plugin_texts.h"

typedef enum { PLUGIN_AGENT_SKILLS, PLUGIN_JUPYTER, PLUGIN_BROWSER, PLUGIN_VSCODE } plugin_id_t;
#define PLUGIN_COUNT (PLUGIN_VSCODE + 1)

typedef enum {
    PLUGIN_NOT_STARTED,
    PLUGIN_STARTING,
    PLUGIN_RUNNING,
    PLUGIN_EXITED,      /* with a reason; starts again on next use */
    PLUGIN_UNAVAILABLE, /* its program is not installed (reason says what is missing) */
    PLUGIN_DISABLED,    /* not in the session's plugins */
} plugin_state_t;

const char *plugin_name(plugin_id_t id);
/* The id of an OpenHands plugin name, or -1. */
int plugin_by_name(const char *name);
bool plugin_allowed(plugin_id_t id);

/* A plugin's transition: pid is its main process (kernel, Chromium; 0 none), pgid the process
 * group whose resident memory it counts (0 none), reason why it exited or is unavailable (NULL
 * otherwise). Watchers hear of changes of state, pid or reason. */
void plugins_set_state(plugin_id_t id, plugin_state_t st, pid_t pid, pid_t pgid,
                       const char *reason);
plugin_state_t plugins_state(plugin_id_t id);

/* {"agent_skills":{...},"jupyter":{"state","pid","rss_bytes","reason",...plugin extras},...} */
json_object *plugins_status(void);

/* Resident memory (bytes) of every process in process group pgid. */
long long plugins_group_rss(pid_t pgid);

/* The `plugins` op: {"op":"plugins","allowed":[names]} sets the session's list (optional),
 * then the channel stays open with {"event":"plugins","plugins":{status}} now and after every
 * change, until the client closes it. */
void plugins_op(channel_t *ch, json_object *req);

#endif
