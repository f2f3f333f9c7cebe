/* sudo_client.c — sudo for bwrap sandboxes (bound over /usr/bin/sudo): asks the executor's
 * broker (executor/sudo_broker.h) to run the command as root or the user named, passing our
 * stdin, stdout, stderr and directory, relays the signals we get to it and exits with its status.
 * The wire: sudo_wire.h. Standalone (libc only): it runs with the image's libraries.
 *
 * Where the sandbox maps one uid (a gateway that is not root, --root-inside off) there is no one
 * else to become and no privilege to gain: the command runs as the sandbox user itself, which
 * owns everything the sandbox may write. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sudo_wire.h"

extern char **environ;

typedef struct {
    const char *user, *group, *dir;
    char flags[8];
    char **argv; /* the command */
    char **set;  /* VAR=value before it */
    size_t nset;
} options_t;

static int g_sock = -1;

static void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sudo: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void
add_flag(options_t *o, char f)
{
    if (!strchr(o->flags, f) && strlen(o->flags) < sizeof o->flags - 1)
        o->flags[strlen(o->flags)] = f;
}

/* Options that take an argument, short and long. */
static const char *const with_arg_long[] = {
    "user", "group", "chdir",      "prompt", "close-from", "command-timeout",
    "role", "type",  "other-user", "host",   NULL};

static void
usage_exit(int code)
{
    fprintf(code ? stderr : stdout,
            "usage: sudo [-EHPSbins] [-u user] [-g group] [-D directory] [VAR=value] command\n"
            "sandpipe's sudo: the sandbox's broker runs the command; every sandbox user may.\n");
    exit(code);
}

/* A long option; returns how many argv entries it used. */
static int
long_option(options_t *o, char **argv, int i)
{
    const char *name = argv[i] + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const char *val = eq ? eq + 1 : NULL;
    int used = 1;
    for (size_t k = 0; with_arg_long[k]; k++)
        if (strlen(with_arg_long[k]) == len && !strncmp(name, with_arg_long[k], len) && !val) {
            if (!argv[i + 1])
                fail("option '--%s' requires an argument", with_arg_long[k]);
            val = argv[i + 1];
            used = 2;
        }
#define IS(s) (strlen(s) == len && !strncmp(name, s, len))
    if (IS("user"))
        o->user = val;
    else if (IS("group"))
        o->group = val;
    else if (IS("chdir"))
        o->dir = val;
    else if (IS("preserve-env"))
        add_flag(o, 'E');
    else if (IS("login"))
        add_flag(o, 'i');
    else if (IS("shell"))
        add_flag(o, 's');
    else if (IS("background"))
        add_flag(o, 'b');
    else if (IS("preserve-groups"))
        add_flag(o, 'P');
    else if (IS("version")) {
        printf("Sudo version 1.9 (sandpipe: the sandbox's broker)\n");
        exit(0);
    } else if (IS("help"))
        usage_exit(0);
    else if (IS("list")) {
        printf("User may run the following commands on sandbox:\n    (ALL : ALL) NOPASSWD: ALL\n");
        exit(0);
    } else if (IS("validate") || IS("reset-timestamp") || IS("remove-timestamp")) {
        if (!argv[i + 1])
            exit(0);
    } else if (!(IS("non-interactive") || IS("stdin") || IS("set-home") || IS("askpass") ||
                 IS("bell") || IS("prompt") || IS("close-from") || IS("command-timeout") ||
                 IS("role") || IS("type") || IS("other-user") || IS("host")))
        fail("unrecognized option '%s'", argv[i]);
#undef IS
    return used;
}

/* A cluster of short options ("-Eu", "-u root", "-uroot"); returns argv entries used. */
static int
short_options(options_t *o, char **argv, int i)
{
    const char *s = argv[i] + 1;
    for (; *s; s++) {
        char c = *s;
        if (strchr("ugDpCTrtUh", c)) {
            const char *val = s[1] ? s + 1 : argv[i + 1];
            if (c == 'h' && !val)
                usage_exit(0); /* -h alone: help; with an argument: a host */
            if (!val)
                usage_exit(1);
            if (c == 'u')
                o->user = val;
            else if (c == 'g')
                o->group = val;
            else if (c == 'D')
                o->dir = val;
            return s[1] ? 1 : 2;
        }
        switch (c) {
        case 'E': add_flag(o, 'E'); break;
        case 'i': add_flag(o, 'i'); break;
        case 's': add_flag(o, 's'); break;
        case 'b': add_flag(o, 'b'); break;
        case 'P': add_flag(o, 'P'); break;
        case 'H':
        case 'n':
        case 'S':
        case 'A':
        case 'B': break;
        case 'V': printf("Sudo version 1.9 (sandpipe: the sandbox's broker)\n"); exit(0);
        case 'l':
            printf(
                "User may run the following commands on sandbox:\n    (ALL : ALL) NOPASSWD: ALL\n");
            exit(0);
        case 'v':
        case 'k':
        case 'K':
            if (!argv[i + 1])
                exit(0);
            break;
        default: fprintf(stderr, "sudo: invalid option -- '%c'\n", c); usage_exit(1);
        }
    }
    return 1;
}

static void
parse(options_t *o, int argc, char **argv)
{
    int i = 1;
    while (i < argc && argv[i][0] == '-' && argv[i][1]) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        i += argv[i][1] == '-' ? long_option(o, argv, i) : short_options(o, argv, i);
    }
    o->set = argv + i;
    for (; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (!eq || eq == argv[i] ||
            strspn(argv[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
                (size_t)(eq - argv[i]))
            break;
        o->nset++;
    }
    o->argv = argv + i;
    if (!o->argv[0] && !strchr(o->flags, 'i') && !strchr(o->flags, 's'))
        usage_exit(1);
}

/* Only one uid mapped: nothing to become (see the header). */
static bool
one_uid(void)
{
    FILE *f = fopen("/proc/self/uid_map", "re");
    unsigned long inside, outside, count = 0;
    int n = f ? fscanf(f, "%lu %lu %lu", &inside, &outside, &count) : 0;
    if (f)
        fclose(f);
    return n == 3 && count == 1;
}

static void __attribute__((noreturn)) run_as_self(const options_t *o)
{
    for (size_t i = 0; i < o->nset; i++)
        putenv(o->set[i]);
    if (o->dir && chdir(o->dir) < 0)
        fail("unable to change directory to %s", o->dir);
    const char *sh = getenv("SHELL") ? getenv("SHELL") : "/bin/bash";
    if (strchr(o->flags, 'i') || strchr(o->flags, 's')) {
        if (!o->argv[0])
            execl(sh, sh, (char *)NULL);
        /* the command's words as one line, as sudo gives a shell */
        size_t len = 1;
        for (size_t i = 0; o->argv[i]; i++)
            len += strlen(o->argv[i]) + 1;
        char *line = calloc(1, len);
        for (size_t i = 0; line && o->argv[i]; i++) {
            if (i)
                strcat(line, " ");
            strcat(line, o->argv[i]);
        }
        execl(sh, sh, "-c", line ? line : "", (char *)NULL);
        fail("%s: %s", sh, strerror(errno));
    }
    execvp(o->argv[0], o->argv);
    if (errno == ENOENT)
        fail("%s: command not found", o->argv[0]);
    fail("unable to execute %s: %s", o->argv[0], strerror(errno));
}

/* ---- the request ---- */

typedef struct {
    char *data;
    size_t len, cap;
} buf_t;

static void
put(buf_t *b, const char *s)
{
    size_t n = strlen(s) + 1;
    if (b->len + n > SUDO_REQUEST_MAX)
        fail("%s", "argument list too long");
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->data = realloc(b->data, b->cap);
        if (!b->data)
            fail("%s", "out of memory");
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

static void
put_list(buf_t *b, char *const *v, size_t n)
{
    char count[24];
    snprintf(count, sizeof count, "%zu", n);
    put(b, count);
    for (size_t i = 0; i < n; i++)
        put(b, v[i]);
}

static void
relay(int sig)
{
    unsigned char b = (unsigned char)sig;
    ssize_t w = write(g_sock, &b, 1);
    (void)w;
}

static int
connect_broker(void)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path + 1, SUDO_SOCKET_NAME, strlen(SUDO_SOCKET_NAME));
    socklen_t alen =
        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(SUDO_SOCKET_NAME));
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct ucred peer;
    socklen_t plen = sizeof peer;
    if (s < 0 || connect(s, (struct sockaddr *)&a, alen) < 0)
        fail("the sandbox's sudo service does not answer (%s)", strerror(errno));
    /* root's only: whoever else took the name is not the broker */
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &peer, &plen) < 0 || peer.uid != 0)
        fail("%s", "the sandbox's sudo service is not root's: refused");
    return s;
}

int
main(int argc, char **argv)
{
    options_t o = {0};
    parse(&o, argc, argv);
    if (one_uid())
        run_as_self(&o);
    buf_t b = {0};
    put(&b, SUDO_WIRE_MAGIC);
    put(&b, o.user ? o.user : "");
    put(&b, o.group ? o.group : "");
    put(&b, o.flags);
    put(&b, o.dir ? o.dir : "");
    size_t argn = 0, envn = 0;
    while (o.argv[argn])
        argn++;
    while (environ && environ[envn])
        envn++;
    put_list(&b, o.argv, argn);
    put_list(&b, environ, envn);
    put_list(&b, o.set, o.nset);
    int fds[SUDO_PASSED_FDS];
    for (int i = 0; i < 3; i++)
        fds[i] = fcntl(i, F_GETFD) < 0 ? open("/dev/null", O_RDWR | O_CLOEXEC) : i;
    fds[3] = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fds[3] < 0)
        fds[3] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    g_sock = connect_broker();
    uint32_t len = (uint32_t)b.len;
    char cbuf[CMSG_SPACE(sizeof fds)];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {&len, sizeof len};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(h), fds, sizeof fds);
    if (sendmsg(g_sock, &m, MSG_NOSIGNAL) != (ssize_t)sizeof len)
        fail("cannot reach the sandbox's sudo service (%s)", strerror(errno));
    for (size_t off = 0; off < b.len;) {
        ssize_t w = send(g_sock, b.data + off, b.len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            fail("cannot reach the sandbox's sudo service (%s)", strerror(errno));
        off += (size_t)w;
    }
    free(b.data);
    static const int relayed[] = {SIGINT,  SIGQUIT,  SIGTERM, SIGHUP, SIGUSR1,
                                  SIGUSR2, SIGWINCH, SIGCONT, SIGALRM};
    struct sigaction sa = {.sa_handler = relay};
    for (size_t i = 0; i < sizeof relayed / sizeof relayed[0]; i++)
        sigaction(relayed[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int32_t status;
    size_t got = 0;
    while (got < sizeof status) {
        ssize_t r = read(g_sock, (char *)&status + got, sizeof status - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            fail("%s", "the sandbox's sudo service ended before the command did");
        got += (size_t)r;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
        return 128 + sig;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
