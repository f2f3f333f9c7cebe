/* proc_launch.c — see proc_launch.h. */
#include "proc_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <unistd.h>

static void
close_pair(int p[2])
{
    for (int i = 0; i < 2; i++)
        if (p[i] >= 0)
            close(p[i]);
}

int
proc_launch(char **av, char **envp, const char *dir, int user, int group, proc_launch_t *l)
{
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1}, pexec[2] = {-1, -1};
    if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0 ||
        pipe2(pexec, O_CLOEXEC) < 0) {
        int e = errno;
        close_pair(pin);
        close_pair(pout);
        close_pair(perr);
        close_pair(pexec);
        return e;
    }
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        setsid();
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        dup2(perr[1], 2);
        if (user >= 0 && geteuid() == 0) {
            if (setgroups(0, NULL) < 0 || setgid((gid_t)group) < 0 || setuid((uid_t)user) < 0)
                goto fail;
        }
        if (chdir(dir) < 0)
            goto fail;
        execvpe(av[0], av, envp);
    fail:;
        int e = errno;
        if (write(pexec[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    int e = pid < 0 ? errno : 0;
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    close(pexec[1]);
    if (pid > 0 && read(pexec[0], &e, sizeof e) != sizeof e)
        e = 0; /* exec succeeded: the pipe closed on exec */
    close(pexec[0]);
    if (e) {
        close(pin[1]);
        close(pout[0]);
        close(perr[0]);
        return e;
    }
    *l = (proc_launch_t){.pid = pid, .in = pin[1], .out = pout[0], .err = perr[0]};
    return 0;
}
