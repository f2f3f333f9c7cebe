/* ipython.h — the IPython plugin: OpenHands `run_ipython` actions run in one Jupyter kernel per
 * sandbox, driven by the sandpipe-jupyter helper (plugins/jupyter/), which this module starts on
 * the first cell as a child of the executor (so as the sandbox user, inside its limits) and
 * talks to by JSON lines on two pipes. Output streams to the action's channel as DATA within
 * its credit (the helper's pipe is not read while the client is behind: bounded memory); the
 * observation (ipython_obs.h) closes the channel. One cell at a time. */
#ifndef SP_IPYTHON_H
#define SP_IPYTHON_H

#include <json-c/json.h>
#include <sys/types.h>

#include "conn.h"

/* Runs an OpenHands run_ipython action (borrowed) with bash's cwd; the observation closes ch. */
void ipython_run_action(channel_t *ch, json_object *action, const char *cwd);

/* Adds the plugin's figures to its status (plugins.c): "python","start_ms","cells","restarts". */
void ipython_status_extras(json_object *o);

/* Called by main's SIGCHLD handling for each reaped child. */
void ipython_on_child_exit(pid_t pid, int status);

/* Stops the helper (and so the kernel) at shutdown. */
void ipython_shutdown(void);

#endif
