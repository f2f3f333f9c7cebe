/* sandbox_userns.c — a user namespace mapping a sandbox's block of ids. See sandbox_userns.h. */
#include "sandbox_userns.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child: becomes the block's first uid for good, makes the namespace (so that uid owns it),
 * forbids namespaces below it, says so, and waits until the parent has the fd (a byte, or the
 * pipe's end if the parent is gone). Async-signal-safe calls only. */
static void __attribute__((noreturn)) holder(uid_t uid, gid_t gid, int ready_fd, int wait_fd)
{
    char status = 'x';
    if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0 ||
        unshare(CLONE_NEWUSER) < 0)
        status = 'u';
    int m = status == 'x' ? open("/proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC) : -1;
    if (status == 'x' && (m < 0 || write(m, "0\n", 2) != 2))
        status = 'm';
    if (write(ready_fd, &status, 1) != 1)
        _exit(1);
    char c;
    while (read(wait_fd, &c, 1) < 0 && errno == EINTR)
        ;
    _exit(0);
}

static int
write_map(pid_t pid, const char *which, unsigned from, uint32_t count, err_t *err)
{
    char path[64], map[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, which);
    int n = snprintf(map, sizeof map, "0 %u %u\n", from, (unsigned)count);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, map, (size_t)n) != n) {
        int e = err_set(err, errno, "user namespace %s (0 %u %u): %s", which, from, (unsigned)count,
                        strerror(errno));
        if (fd >= 0)
            close(fd);
        return e;
    }
    close(fd);
    return 0;
}

int
sandbox_userns_open(uid_t uid, gid_t gid, uint32_t count, err_t *err)
{
    int ready[2], hold[2];
    if (pipe2(ready, O_CLOEXEC) < 0)
        return err_set(err, errno, "pipe: %s", strerror(errno));
    if (pipe2(hold, O_CLOEXEC) < 0) {
        int e = err_set(err, errno, "pipe: %s", strerror(errno));
        close(ready[0]);
        close(ready[1]);
        return e;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        close(hold[1]);
        holder(uid, gid, ready[1], hold[0]);
    }
    close(ready[1]);
    close(hold[0]);
    int e = 0, fd = -1;
    char status = 0, path[64];
    if (pid < 0)
        e = err_set(err, errno, "fork: %s", strerror(errno));
    else if (read(ready[0], &status, 1) != 1 || status != 'x')
        e = err_set(err, EPERM, "user namespace for uid %u: %s", (unsigned)uid,
                    status == 'm' ? "cannot limit namespaces in it"
                                  : "cannot make it (are user namespaces enabled?)");
    /* gid_map first: a privileged writer needs no setgroups "deny". */
    else if ((e = write_map(pid, "gid_map", (unsigned)gid, count, err)) < 0 ||
             (e = write_map(pid, "uid_map", (unsigned)uid, count, err)) < 0)
        ;
    else {
        snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            e = err_set(err, errno, "%s: %s", path, strerror(errno));
    }
    /* The holder may go (the fd keeps the namespace): told with a byte, not by the pipe's end
     * alone, because a child another start forked meanwhile (gateway/sandbox_start.h) may hold
     * a copy of hold[1]; two holders each keeping the other's pipe open never ended. */
    if (status) { /* it said so, and now waits in read: the byte cannot meet a closed pipe */
        ssize_t told = write(hold[1], "x", 1);
        (void)told;
    }
    close(hold[1]);
    close(ready[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    return e < 0 ? e : fd;
}
