/* plugin_proc.h — a plugin helper process (sandpipe-jupyter, sandpipe-browser): started from
 * the executor's plugins folder as the executor's child (so as the sandbox user, inside its
 * cgroup), in its own process group, spoken to in JSON lines over two pipes. The owner gets each
 * line the helper writes (on_event) and learns when it is gone (on_gone). */
#ifndef SP_PLUGIN_PROC_H
#define SP_PLUGIN_PROC_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "buf.h"
#include "err.h"
#include "loop.h"

typedef struct plugin_proc plugin_proc_t;
struct plugin_proc {
    pid_t pid;  /* 0: not running (or reaped) */
    pid_t pgid; /* its process group, killed whole on stop (the helper's children too) */
    int to, from;
    watch_t w;
    buf_t in;
    bool running; /* the pipes are open */
    size_t line_max;
    void (*on_event)(plugin_proc_t *p, json_object *ev); /* borrowed for the call */
    void (*on_gone)(plugin_proc_t *p);
    bool (*can_read)(plugin_proc_t *p); /* false: leave the pipe unread (backpressure) */
};

/* The executor's plugins folder (next to its binary): 0 or -1. */
int plugin_dir(char *out, size_t cap);

/* Starts <plugins>/<name> with av (av[0] is replaced by the path) and env. err says why not,
 * ENOENT when the helper is not installed. */
int plugin_proc_start(plugin_proc_t *p, const char *name, char **av, char **env, err_t *err);
/* Writes one request line; < 0 if the helper is gone. */
int plugin_proc_send(plugin_proc_t *p, json_object *req);
/* Re-evaluates can_read (after the owner drained what it held). */
void plugin_proc_update(plugin_proc_t *p);
/* Kills the helper's process group and closes the pipes. */
void plugin_proc_stop(plugin_proc_t *p);
/* For main's SIGCHLD loop: true if pid was this helper. */
bool plugin_proc_reaped(plugin_proc_t *p, pid_t pid);

#endif
