/* pty.h — starting a child on a new pseudo-terminal: the one forkpty and child prologue behind
 * bash sessions (bash_shell.c) and raw terminals (terminal.c). The child gets the PTY as its
 * controlling terminal and stdin/stdout/stderr, in a new session, with the signal mask the
 * executor blocks for its signalfd cleared and SIGPIPE back to default. */
#ifndef SP_PTY_H
#define SP_PTY_H

#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <termios.h>

#include "err.h"

typedef struct {
    char *const *argv;             /* NULL-terminated; argv[0] is the program */
    char *const *envp;             /* the child's whole environment */
    bool search_path;              /* argv[0] looked up in PATH (execvpe), else run as given */
    const char *const *dirs;       /* working directories tried in order (NULL-terminated);
                                    * when none can be entered the child exits 127 */
    const struct termios *termios; /* the terminal's modes; NULL: the kernel's defaults */
    struct winsize size;           /* rows and columns */
} pty_spawn_opts_t;

/* Forks a child on a new PTY as o says. Returns the master fd (non-blocking, close-on-exec;
 * the caller closes it) with the child's pid in *pid, or -errno with err set when forkpty fails.
 * A child that cannot enter a directory or exec exits 127; the caller reaps it. */
int pty_spawn(const pty_spawn_opts_t *o, pid_t *pid, err_t *err);

#endif
