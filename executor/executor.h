/* executor.h — the executor's process-wide state, shared by all modules: the loop, the
 * configuration (roots, workspace, run directory) and the registries of bash sessions and
 * processes. One instance, owned by main.c. */
#ifndef SP_EXECUTOR_H
#define SP_EXECUTOR_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "loop.h"
#include "path_confine.h"

#define SANDPIPE_VERSION "0.1.0"

typedef struct bash_session bash_session_t;
typedef struct proc proc_t;
typedef struct editor editor_t;

typedef struct {
    loop_t *loop;
    path_roots_t roots;
    char workspace[PATH_MAX]; /* initial working directory of sessions and processes */
    char rundir[256];         /* private 0700 directory for command files */
    char shell[PATH_MAX];     /* bash binary */
    double started;           /* loop_now() at start */
    bool is_init;             /* running as PID 1: reap every child */
    bash_session_t *sessions; /* linked list by name */
    proc_t *procs;            /* linked list by id */
    unsigned next_proc_id;
    editor_t *editor;
    char **base_env;        /* environment given to bash sessions and processes */
    double default_timeout; /* hard timeout for run actions, seconds */
    int no_change_timeout;  /* seconds */
} executor_t;

extern executor_t g_exec;

/* Called by main's SIGCHLD handling for each reaped child. */
void bash_on_child_exit(pid_t pid, int status);
void proc_on_child_exit(pid_t pid, int status);
void terminal_on_child_exit(pid_t pid, int status);

#endif
