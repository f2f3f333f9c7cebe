/* pty.c — a child on a new pseudo-terminal (see pty.h). forkpty does the terminal part
 * (openpty with the modes and size, then in the child setsid, TIOCSCTTY and the three standard
 * fds); the rest of the child's prologue is here, once. */
#include "pty.h"

#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* In the child, between fork and exec: only async-signal-safe calls, no return. */
static void __attribute__((noreturn)) child_exec(const pty_spawn_opts_t *o)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* the executor blocks signals for its signalfd */
    signal(SIGPIPE, SIG_DFL);              /* the executor ignores it */
    const char *const *dir = o->dirs;
    while (*dir && chdir(*dir) < 0)
        dir++;
    if (!*dir)
        _exit(127);
    if (o->search_path)
        execvpe(o->argv[0], o->argv, o->envp);
    else
        execve(o->argv[0], o->argv, o->envp);
    _exit(127);
}

int
pty_spawn(const pty_spawn_opts_t *o, pid_t *pid, err_t *err)
{
    int master;
    struct winsize size = o->size;
    pid_t child = forkpty(&master, NULL, o->termios, &size);
    if (child < 0)
        return err_set(err, errno, "forkpty: %s", strerror(errno));
    if (child == 0)
        child_exec(o);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    fcntl(master, F_SETFD, FD_CLOEXEC);
    *pid = child;
    return master;
}
