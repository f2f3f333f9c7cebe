/* provider_proc.c — a sandbox's processes as /proc shows them: is its top process (still the
 * same process) alive, and, where it has no cgroup, its process tree to kill; and whether its
 * executor answers, which is what "alive" means to the gateway. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "provider.h"
#include "xalloc.h"

int
provider_proc_stat(pid_t pid, char *state, uint64_t *start, pid_t *ppid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -ENOENT;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -ENOENT;
    buf[n] = '\0';
    char *s = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
    if (!s || s[1] != ' ')
        return -EIO;
    /* Fields after comm start at 3 (state); starttime is field 22. */
    char *save = NULL, *t = strtok_r(s + 2, " ", &save);
    for (int field = 3; t; field++, t = strtok_r(NULL, " ", &save)) {
        if (field == 3 && state)
            *state = t[0];
        else if (field == 4 && ppid)
            *ppid = (pid_t)strtol(t, NULL, 10);
        else if (field == 22) {
            if (start)
                *start = strtoull(t, NULL, 10);
            return 0;
        }
    }
    return -EIO;
}

int
provider_top_alive(const sandbox_t *sb)
{
    char state = 0;
    uint64_t start = 0;
    if (sb->pid <= 0 || provider_proc_stat(sb->pid, &state, &start, NULL) < 0)
        return 0;
    if (state == 'Z' || state == 'X')
        return 0;
    return sb->start_time == 0 || start == sb->start_time;
}

int
provider_generic_alive(const sandbox_t *sb)
{
    /* Connecting to a unix socket that listens completes at once (a frozen executor's too: the
     * kernel queues it); nothing listens once every process holding it, the executor, is gone.
     * The connection is closed unused: the executor drops it as any that sends no HELLO. */
    char dir[PATH_MAX + 16], addr[64];
    snprintf(dir, sizeof dir, "%s/" PROVIDER_CTL_DIR, sb->dir);
    int dfd = sb->dir[0] ? open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (dfd < 0)
        return 0;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(addr, sizeof addr, "/proc/self/fd/%d/" PROVIDER_SOCKET_NAME, dfd);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", addr);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int r = fd >= 0 ? connect(fd, (struct sockaddr *)&sa, sizeof sa) : -1;
    /* EAGAIN: its backlog is full, someone listens */
    int alive = r == 0 || (fd >= 0 && (errno == EAGAIN || errno == EINPROGRESS));
    if (fd >= 0)
        close(fd);
    close(dfd);
    return alive;
}

/* Pids of every descendant of root (and root), from one scan of /proc. Caller frees. */
static size_t
proc_tree(pid_t root, pid_t **out)
{
    size_t n = 0, cap = 64;
    pid_t *pids = xmalloc(cap * sizeof *pids), *parents = xmalloc(cap * sizeof *parents);
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        pid_t pid = (pid_t)strtol(de->d_name, NULL, 10), pp = 0;
        if (pid <= 0 || provider_proc_stat(pid, NULL, NULL, &pp) < 0)
            continue;
        if (n == cap) {
            cap *= 2;
            pids = xrealloc(pids, cap * sizeof *pids);
            parents = xrealloc(parents, cap * sizeof *parents);
        }
        pids[n] = pid;
        parents[n++] = pp;
    }
    if (d)
        closedir(d);
    /* Breadth-first over the parent links: tree[0..m) holds root and what we reached. */
    pid_t *tree = xmalloc((n + 1) * sizeof *tree);
    size_t m = 0;
    tree[m++] = root;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            if (parents[j] == tree[i] && pids[j] != root)
                tree[m++] = pids[j];
    free(pids);
    free(parents);
    *out = tree;
    return m;
}

void
provider_kill_tree(const sandbox_t *sb)
{
    for (int round = 0; round < 20 && provider_top_alive(sb); round++) {
        pid_t *tree;
        size_t n = proc_tree(sb->pid, &tree);
        for (size_t i = 0; i < n; i++)
            kill(tree[i], SIGSTOP);
        free(tree);
        n = proc_tree(sb->pid, &tree);
        for (size_t i = 0; i < n; i++)
            kill(tree[i], SIGKILL);
        free(tree);
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* The real uid of pid from /proc/<pid>/status ((uid_t)-1 if gone). */
static uid_t
proc_uid(pid_t pid)
{
    char p[64], buf[2048];
    snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return (uid_t)-1;
    buf[n] = '\0';
    const char *u = strstr(buf, "\nUid:");
    return u ? (uid_t)strtoul(u + 5, NULL, 10) : (uid_t)-1;
}

void
provider_kill_uids(uid_t uid, uint32_t count)
{
    if (uid == 0 || uid == geteuid() || uid == (uid_t)-1 || count == 0 ||
        (uid <= geteuid() && geteuid() - uid < count))
        return;
    for (int round = 0; round < 20; round++) {
        size_t found = 0;
        DIR *d = opendir("/proc");
        struct dirent *de;
        while (d && (de = readdir(d))) {
            pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
            uid_t u = pid > 0 ? proc_uid(pid) : (uid_t)-1;
            if (u != (uid_t)-1 && u >= uid && u - uid < count && kill(pid, SIGKILL) == 0)
                found++;
        }
        if (d)
            closedir(d);
        if (!found)
            return;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

int
provider_netns_open(const sandbox_t *sb, err_t *err)
{
    /* The top process (the outer bwrap) stays in the host's namespaces; its child, the
     * sandbox's pid 1, is in the sandbox's own. */
    char p[96], line[256];
    snprintf(p, sizeof p, "/proc/%d/task/%d/children", (int)sb->pid, (int)sb->pid);
    int fd = sb->pid > 0 ? open(p, O_RDONLY | O_CLOEXEC) : -1;
    ssize_t n = fd >= 0 ? read(fd, line, sizeof line - 1) : -1;
    if (fd >= 0)
        close(fd);
    pid_t child = 0;
    if (n > 0) {
        line[n] = '\0';
        child = (pid_t)strtol(line, NULL, 10);
    }
    if (child <= 0 || !provider_top_alive(sb))
        return err_set(err, ESRCH, "sandbox %s: no process inside it to find its network in",
                       sb->id);
    snprintf(p, sizeof p, "/proc/%d/ns/net", (int)child);
    int ns = open(p, O_RDONLY | O_CLOEXEC);
    pid_t parent = 0;
    /* the child may have died and its pid been reused between the two reads: check after */
    if (ns < 0 || provider_proc_stat(child, NULL, NULL, &parent) < 0 || parent != sb->pid) {
        if (ns >= 0)
            close(ns);
        return err_set(err, ESRCH, "sandbox %s: its process inside went away", sb->id);
    }
    return ns;
}
