/* sudo_broker.c — runs sandpipe's sudo requests as root or any user of the sandbox. See
 * sudo_broker.h; the wire is sudo/sudo_wire.h.
 *
 * One process (forked from the executor while it is still root) accepts; each request gets a
 * process of its own, which starts the command in a process group of its own, passes on the
 * signals its client relays and answers the wait status. */
#include "sudo_broker.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "env.h"
#include "sudo/sudo_wire.h"
#include "sudo_request.h"
#include "xalloc.h"

extern char **environ;

int
sudo_block_mapped(void)
{
    FILE *f = fopen("/proc/self/uid_map", "re");
    unsigned long inside = 1, outside = 0, count = 0;
    int n = f ? fscanf(f, "%lu %lu %lu", &inside, &outside, &count) : 0;
    if (f)
        fclose(f);
    return n == 3 && inside == 0 && outside != 0 && count > 1;
}

/* ---- one request ---- */

typedef struct {
    sudo_request_t q; /* what to run (sudo_request.h) */
    int fds[SUDO_PASSED_FDS];
    struct ucred caller;
} request_t;

static int
read_all(int fd, void *buf, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t r = read(fd, (char *)buf + off, n - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        off += (size_t)r;
    }
    return 0;
}

/* Reads the request (its fds arrive with the length's first byte). Returns its bytes (the
 * strings in r point into them) or NULL. */
static char *
read_request(int c, request_t *r)
{
    uint32_t len = 0;
    char cbuf[CMSG_SPACE(sizeof(int) * SUDO_PASSED_FDS)];
    struct iovec iov = {&len, sizeof len};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    ssize_t got = recvmsg(c, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    int nfds = 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
        if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
            int n = (int)((h->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < n; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
                if (nfds < (int)SUDO_PASSED_FDS)
                    r->fds[nfds++] = fd;
                else
                    close(fd);
            }
        }
    if (got != (ssize_t)sizeof len || nfds != (int)SUDO_PASSED_FDS || (m.msg_flags & MSG_CTRUNC) ||
        len == 0 || len > SUDO_REQUEST_MAX)
        return NULL;
    char *buf = xmalloc(len);
    if (read_all(c, buf, len) < 0 || sudo_request_parse(buf, len, &r->q) < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* "name" or "#id" of the sandbox's passwd / group. */
static bool
find_user(const char *spec, struct passwd *out, char *buf, size_t n)
{
    struct passwd *res = NULL;
    const char *name = spec[0] ? spec : "root";
    if (name[0] == '#') {
        char *stop;
        unsigned long id = strtoul(name + 1, &stop, 10);
        if (*stop || !name[1])
            return false;
        if (getpwuid_r((uid_t)id, out, buf, n, &res) != 0 || !res) {
            /* sudo runs as an id passwd does not name too */
            memset(out, 0, sizeof *out);
            out->pw_uid = (uid_t)id;
            out->pw_gid = (gid_t)id;
            out->pw_name = (char *)name;
            out->pw_dir = (char *)"/";
            out->pw_shell = (char *)"/bin/sh";
        }
        return true;
    }
    return getpwnam_r(name, out, buf, n, &res) == 0 && res;
}

static bool
find_group(const char *spec, gid_t *gid)
{
    if (spec[0] == '#') {
        char *stop;
        unsigned long id = strtoul(spec + 1, &stop, 10);
        *gid = (gid_t)id;
        return spec[1] && !*stop;
    }
    struct group *g = getgrnam(spec);
    if (g)
        *gid = g->gr_gid;
    return g != NULL;
}

static bool
has_flag(const request_t *r, char f)
{
    return strchr(r->q.flags, f) != NULL;
}

/* What the environment keeps of the caller's when it is reset (Debian's env_keep, and the
 * terminal's), as sudo's env_reset does. */
static bool
kept_name(const char *kv)
{
    static const char *const keep[] = {"TERM",      "COLORTERM", "DISPLAY", "XAUTHORITY", "LANG",
                                       "LANGUAGE",  "LINGUAS",   "TZ",      "COLUMNS",    "LINES",
                                       "LS_COLORS", "PS1",       "PS2",     "HOSTNAME",   NULL};
    size_t n = strcspn(kv, "=");
    if (!strncmp(kv, "LC_", 3))
        return true;
    for (size_t i = 0; keep[i]; i++)
        if (strlen(keep[i]) == n && !strncmp(kv, keep[i], n))
            return true;
    return false;
}

/* Appends s to out with sudo's escaping for `shell -c`: every character but letters, digits,
 * '_', '-' and '$' gets a backslash. */
static char *
shell_join(char *const argv[])
{
    size_t cap = 1;
    for (size_t i = 0; argv[i]; i++)
        cap += strlen(argv[i]) * 2 + 1;
    char *out = xmalloc(cap), *o = out;
    for (size_t i = 0; argv[i]; i++) {
        if (i)
            *o++ = ' ';
        for (const char *s = argv[i]; *s; s++) {
            unsigned char ch = (unsigned char)*s;
            if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '$'))
                *o++ = '\\';
            *o++ = (char)ch;
        }
    }
    *o = '\0';
    return out;
}

/* "NAME=value" into env (env.h); anything without a name is no assignment. */
static void
set_assignment(char ***env, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return;
    char *name = xstrndup(kv, (size_t)(eq - kv));
    env_set(env, name, eq + 1);
    free(name);
}

/* The command's environment: reset (or the caller's with E), then sudo's own variables, then the
 * command line's VAR=value. */
static char **
command_env(const request_t *r, const struct passwd *pw, const char *command)
{
    char **env = xcalloc(1, sizeof *env);
    bool keep_all = has_flag(r, 'E') && !has_flag(r, 'i');
    for (size_t i = 0; r->q.env[i]; i++)
        if (keep_all || kept_name(r->q.env[i]))
            set_assignment(&env, r->q.env[i]);
    struct passwd *caller = getpwuid(r->caller.uid);
    char id[16];
    if (!keep_all || has_flag(r, 'i')) {
        env_set(&env, "HOME", pw->pw_dir);
        env_set(&env, "SHELL", pw->pw_shell && pw->pw_shell[0] ? pw->pw_shell : "/bin/sh");
        char mail[300];
        snprintf(mail, sizeof mail, "/var/mail/%s", pw->pw_name);
        env_set(&env, "MAIL", mail);
    }
    env_set(&env, "PATH", SUDO_SECURE_PATH);
    env_set(&env, "USER", pw->pw_name);
    env_set(&env, "LOGNAME", pw->pw_name);
    env_set(&env, "SUDO_COMMAND", command);
    env_set(&env, "SUDO_USER", caller ? caller->pw_name : "unknown");
    snprintf(id, sizeof id, "%u", (unsigned)r->caller.uid);
    env_set(&env, "SUDO_UID", id);
    snprintf(id, sizeof id, "%u", (unsigned)r->caller.gid);
    env_set(&env, "SUDO_GID", id);
    for (size_t i = 0; r->q.set[i]; i++)
        set_assignment(&env, r->q.set[i]);
    return env;
}

/* No signal blocked, every one at its default: the executor's (its loop's signalfd) are not
 * ours to keep. */
static void
signals_default(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
}

/* The child: the command, as the user, with the caller's stdio; never returns. */
static void __attribute__((noreturn))
run_command(const request_t *r, const struct passwd *pw, gid_t gid)
{
    setpgid(0, 0); /* its own group: the signals the client relays reach all of it */
    signals_default();
    for (int i = 0; i < 3; i++)
        if (dup2(r->fds[i], i) < 0)
            _exit(126);
    bool login = has_flag(r, 'i'), shell = has_flag(r, 's');
    /* The caller's directory, entered while still root (as an inherited cwd would be). */
    if (!login && !r->q.dir[0] && fchdir(r->fds[3]) < 0)
        dprintf(2, "sudo: cannot enter the current directory: %s\n", strerror(errno));
    bool groups_ok = has_flag(r, 'P') ? true : initgroups(pw->pw_name, gid) == 0;
    if (!groups_ok)
        groups_ok = setgroups(1, &gid) == 0;
    if (!groups_ok || setresgid(gid, gid, gid) < 0 ||
        setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0) {
        dprintf(2, "sudo: cannot become %s: %s\n", pw->pw_name, strerror(errno));
        _exit(1);
    }
    const char *dir = login ? pw->pw_dir : r->q.dir;
    if (dir[0] && chdir(dir) < 0) {
        dprintf(2, "sudo: unable to change directory to %s: %s\n", dir, strerror(errno));
        if (!login)
            _exit(1);
    }
    umask(022);
    char **argv = r->q.argv;
    char *joined = shell_join(r->q.argv);
    if (login || shell) {
        const char *sh = pw->pw_shell && pw->pw_shell[0] ? pw->pw_shell : "/bin/sh";
        const char *callers = env_get(r->q.env, "SHELL"); /* -s: the caller's shell */
        if (shell && !login && callers && callers[0])
            sh = callers;
        const char *base = strrchr(sh, '/') ? strrchr(sh, '/') + 1 : sh;
        argv = xcalloc(4, sizeof *argv);
        argv[0] = login ? xasprintf("-%s", base) : xstrdup(base);
        if (r->q.argv[0]) {
            argv[1] = (char *)"-c";
            argv[2] = joined;
        }
        environ = command_env(r, pw, r->q.argv[0] ? joined : sh);
        execv(sh, argv);
        dprintf(2, "sudo: %s: %s\n", sh, strerror(errno));
        _exit(1);
    }
    environ = command_env(r, pw, joined);
    execvp(argv[0], argv);
    if (errno == ENOENT)
        dprintf(2, "sudo: %s: command not found\n", argv[0]);
    else
        dprintf(2, "sudo: unable to execute %s: %s\n", argv[0], strerror(errno));
    _exit(1);
}

static void
reply(int c, int status)
{
    int32_t s = status;
    ssize_t w = write(c, &s, sizeof s);
    (void)w;
}

/* One client, from its request to the command's end (a process of its own). */
static void
serve(int c)
{
    request_t r = {0};
    for (int i = 0; i < SUDO_PASSED_FDS; i++)
        r.fds[i] = -1;
    socklen_t len = sizeof r.caller;
    char *buf =
        getsockopt(c, SOL_SOCKET, SO_PEERCRED, &r.caller, &len) == 0 ? read_request(c, &r) : NULL;
    if (!buf)
        return; /* not our client: nothing to tell it */
    int err_fd = r.fds[2];
    struct passwd pw;
    char pwbuf[4096];
    gid_t gid;
    if ((!r.q.argv[0] && !has_flag(&r, 'i') && !has_flag(&r, 's'))) {
        dprintf(err_fd, "usage: sudo COMMAND\n");
        reply(c, 1 << 8);
        return;
    }
    if (!find_user(r.q.user, &pw, pwbuf, sizeof pwbuf)) {
        dprintf(err_fd, "sudo: unknown user %s\n", r.q.user);
        reply(c, 1 << 8);
        return;
    }
    gid = pw.pw_gid;
    if (r.q.group[0] && !find_group(r.q.group, &gid)) {
        dprintf(err_fd, "sudo: unknown group %s\n", r.q.group);
        reply(c, 1 << 8);
        return;
    }
    signal(SIGCHLD, SIG_DFL); /* the broker ignores it; we wait for the command */
    pid_t pid = fork();
    if (pid == 0) {
        close(c);
        run_command(&r, &pw, gid);
    }
    if (pid < 0) {
        dprintf(err_fd, "sudo: fork: %s\n", strerror(errno));
        reply(c, 1 << 8);
        return;
    }
    for (int i = 0; i < SUDO_PASSED_FDS; i++)
        close(r.fds[i]);
    if (has_flag(&r, 'b')) {
        reply(c, 0); /* -b: started; the command goes on by itself */
        return;
    }
    int pfd = pidfd_open(pid, 0);
    struct pollfd p[2] = {{.fd = c, .events = POLLIN}, {.fd = pfd, .events = POLLIN}};
    while (pfd >= 0) {
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[1].revents) {
            int status = 0;
            waitpid(pid, &status, 0);
            reply(c, status);
            return;
        }
        if (p[0].revents) {
            unsigned char sigs[64];
            ssize_t n = read(c, sigs, sizeof sigs);
            if (n <= 0) { /* the client is gone: hang the command up, as a closed terminal */
                kill(-pid, SIGHUP);
                return;
            }
            for (ssize_t i = 0; i < n; i++)
                if (sigs[i] > 0 && sigs[i] < NSIG)
                    kill(-pid, sigs[i]);
        }
    }
    kill(-pid, SIGKILL); /* no pidfd: cannot wait for it safely */
    reply(c, SIGKILL);
}

/* The broker's life: accept, a process per client. */
static void __attribute__((noreturn)) broker_main(int lfd)
{
    prctl(PR_SET_NAME, "sudo-broker");
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the executor gone, the sandbox is over */
    if (dup2(lfd, 3) < 0)
        _exit(1);
    close_range(4, ~0U, 0); /* nothing of the executor's: its link, its listening socket */
    signals_default();
    signal(SIGCHLD, SIG_IGN); /* the per-client processes reap themselves */
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        int c = accept4(3, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE ||
                errno == ENOBUFS || errno == ENOMEM)
                continue;
            _exit(1);
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(3);
            serve(c);
            _exit(0);
        }
        close(c);
    }
}

int
sudo_broker_start(err_t *err)
{
    if (geteuid() != 0 || !sudo_block_mapped())
        return 0;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path + 1, SUDO_SOCKET_NAME, strlen(SUDO_SOCKET_NAME));
    socklen_t alen =
        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(SUDO_SOCKET_NAME));
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, alen) < 0 || listen(lfd, 64) < 0) {
        int e = err_set(err, errno, "sudo broker: %s", strerror(errno));
        if (lfd >= 0)
            close(lfd);
        return e;
    }
    pid_t pid = fork();
    if (pid == 0)
        broker_main(lfd);
    close(lfd);
    if (pid < 0)
        return err_set(err, errno, "sudo broker: fork: %s", strerror(errno));
    return 0;
}
