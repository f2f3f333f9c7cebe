/* vscode.h — the VS Code plugin: code-server, when the sandbox has it (on PATH or
 * /usr/local/bin: an image built with `sandpipe-image build --vscode`), started on the first
 * vscode.start as the executor's child (so as the sandbox user, inside its cgroup), in its own
 * process group, listening on 127.0.0.1:VSCODE_PORT (the session's env, else 60001) with the
 * workspace open. The gateway reaches it through the sandbox's preview of that port
 * (docs/api.md, "VS Code"). One instance per sandbox; once it exits, the next vscode.start
 * starts it again. Its state is the plugins table's (plugins.h): starting until it listens,
 * then running, or exited with why. */
#ifndef SP_VSCODE_H
#define SP_VSCODE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "conn.h"

#define VSCODE_PORT_DEFAULT 60001 /* upstream's (OpenHands V1's VS Code port) */
#define VSCODE_START_MS     90000 /* how long code-server may take to listen */
#define VSCODE_WAITERS_MAX  16    /* vscode.start requests waiting for it at once */

/* Why VS Code cannot run here (plugins.c shows it as the plugin's reason). */
#define VSCODE_MISSING                                                                             \
    "code-server is not installed in this runtime: VS Code is disabled (an image built with "      \
    "sandpipe-image build --vscode has it)"

/* The path of code-server into out (PATH of the sandbox's environment, then
 * /usr/local/bin/code-server): true when it is there. */
bool vscode_find(char *out, size_t cap);

/* {"op":"vscode.start"}: starts code-server unless it runs, and answers once it listens:
 * {"port":N,"pid":N,"start_ms":N}; or an error with why not (unsupported: not installed or not
 * among the session's plugins; timeout; internal: it exited, with its last words). */
void vscode_op_start(channel_t *ch, json_object *req);

/* Adds the plugin's figures to its status (plugins.c): "port", "start_ms". */
void vscode_status_extras(json_object *o);
void vscode_on_child_exit(pid_t pid, int status);
void vscode_shutdown(void);

#endif
