/* proc_launch.h — starting a child process on three pipes (stdin, stdout, stderr), in its own
 * session, in a directory, optionally as another user; exec failures are reported back through
 * a close-on-exec pipe, so "cannot start" is known before anything is promised to the client. */
#ifndef SP_PROC_LAUNCH_H
#define SP_PROC_LAUNCH_H

#include <sys/types.h>

typedef struct {
    pid_t pid;
    int in;  /* write end of the child's stdin */
    int out; /* read end of its stdout */
    int err; /* read end of its stderr */
} proc_launch_t;

/* Runs av (NULL-terminated; av[0] searched in PATH) with envp in dir; as user (and group) when
 * user >= 0 and the executor is root. Returns 0 with l filled (close-on-exec fds), or an errno:
 * the parent's pipe/fork failure or the child's setup/exec failure (that child exits 127 and is
 * left to the SIGCHLD handler). */
int proc_launch(char **av, char **envp, const char *dir, int user, int group, proc_launch_t *l);

#endif
