/* main.c — sandpipe-executor: parse options, set up the sandbox-side state, listen, run the
 * loop. Runs as the sandbox user; as PID 1 it also reaps orphans. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bash_session.h"
#include "browser.h"
#include "conn.h"
#include "env.h"
#include "executor.h"
#include "file_actions.h"
#include "file_view.h"
#include "io.h"
#include "ipython.h"
#include "sudo_broker.h"
#include "vscode.h"
#include "xalloc.h"

executor_t g_exec;

typedef struct {
    const char *listen;
    const char *token;
    const char *user;
    int socket_mode;
    bool tcp;
    watch_t w;
} listener_t;

static listener_t lst;

static void
usage(FILE *f)
{
    fprintf(
        f,
        "usage: sandpipe-executor [options]\n"
        "  --listen unix:PATH|tcp:HOST:PORT|fd:N  where to listen (default "
        "unix:/run/sandpipe/executor.sock);\n"
        "                                    fd:N accepts on an inherited listening socket,\n"
        "                                    recv:PATH on one received over PATH\n"
        "  --token-file FILE                 token clients must send in HELLO (required for tcp)\n"
        "  --workspace DIR                   initial working directory (default /workspace or "
        "cwd)\n"
        "  --root DIR                        allowed root for file paths (repeatable; default: "
        "workspace, /tmp;\n"
        "                                    / in a sandbox: every path its user may access)\n"
        "  --user UID[:GID]|root             user to run as when started as root (default 1000)\n"
        "  --shell PATH                      bash binary (default /bin/bash)\n"
        "  --timeout SEC                     hard timeout of run actions without one (default "
        "120)\n"
        "  --no-change-timeout SEC           no-change timeout (default 10)\n"
        "  --socket-mode OCTAL               unix socket permissions (default 0660)\n"
        "  --version\n");
}

static __attribute__((noreturn, format(printf, 1, 2))) void
die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sandpipe-executor: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void
on_accept(watch_t *w, uint32_t events)
{
    (void)events;
    for (;;) {
        int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        conn_start(fd, lst.tcp, lst.token);
    }
}

/* fd:N: a unix socket the host side created and bound where the sandbox cannot reach it
 * (providers do this: nothing inside the sandbox names the path the gateway connects to). */
static int
listen_inherited(const char *spec)
{
    char *end;
    long n = strtol(spec + 3, &end, 10);
    int fd = (int)n, listening = 0, type = 0;
    socklen_t len = sizeof listening;
    if (spec[3] == '\0' || *end || n < 0 || n > 65535 ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 || !listening)
        die("%s is not a listening socket", spec);
    len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
        die("%s is not a stream socket", spec);
    struct sockaddr_storage ss;
    len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
        die("%s: getsockname failed", spec);
    lst.tcp = ss.ss_family != AF_UNIX; /* an inherited TCP socket needs the token as well */
    /* Ours alone: the shells and processes we start must not inherit it. */
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
        die("cannot set up %s", spec);
    return fd;
}

/* recv:PATH: the listening socket handed over on a unix socket (SCM_RIGHTS), for a sandbox that
 * cannot inherit fds (a Docker container: the provider binds PATH in, provider_docker.c). */
static int
listen_received(const char *spec)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (snprintf(sa.sun_path, sizeof sa.sun_path, "%s", spec + 5) >= (int)sizeof sa.sun_path)
        die("socket path too long: %s", spec);
    int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof sa) < 0)
        die("cannot connect to %s", spec);
    char byte, ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    ssize_t n;
    do
        n = recvmsg(c, &m, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
    if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
        cm->cmsg_len != CMSG_LEN(sizeof(int)))
        die("no listening socket received on %s", spec);
    int fd;
    memcpy(&fd, CMSG_DATA(cm), sizeof fd);
    close(c);
    char inherited[32];
    snprintf(inherited, sizeof inherited, "fd:%d", fd);
    return listen_inherited(inherited);
}

static int
listen_on(const char *spec)
{
    int fd;
    if (strncmp(spec, "fd:", 3) == 0)
        return listen_inherited(spec);
    if (strncmp(spec, "recv:", 5) == 0)
        return listen_received(spec);
    if (strncmp(spec, "unix:", 5) == 0) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        /* Bind a temporary name and rename it once listening, so the path appears only
         * when connecting to it works. */
        if (snprintf(sa.sun_path, sizeof sa.sun_path, "%s.%d", spec + 5, getpid()) >=
            (int)sizeof sa.sun_path)
            die("socket path too long: %s", spec);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        unlink(sa.sun_path);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
            die("cannot bind %s", spec);
        chmod(sa.sun_path, (mode_t)lst.socket_mode);
        if (listen(fd, 128) < 0 || rename(sa.sun_path, spec + 5) < 0)
            die("cannot listen on %s", spec);
        return fd;
    } else if (strncmp(spec, "tcp:", 4) == 0) {
        char host[256];
        snprintf(host, sizeof host, "%s", spec + 4);
        char *port = strrchr(host, ':');
        if (!port)
            die("tcp listen address needs HOST:PORT: %s", spec);
        *port++ = '\0';
        struct addrinfo hints = {.ai_family = AF_UNSPEC,
                                 .ai_socktype = SOCK_STREAM,
                                 .ai_flags = AI_PASSIVE},
                        *ai;
        if (getaddrinfo(host, port, &hints, &ai) != 0)
            die("cannot resolve %s", spec);
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0)
            die("cannot bind %s", spec);
        freeaddrinfo(ai);
        lst.tcp = true;
    } else {
        die("--listen takes unix:PATH, tcp:HOST:PORT, fd:N or recv:PATH, not %s", spec);
    }
    if (listen(fd, 128) < 0)
        die("listen failed on %s", spec);
    return fd;
}

static void
on_signal(int signo, void *data)
{
    (void)data;
    if (signo != SIGCHLD) {
        loop_stop(g_exec.loop);
        return;
    }
    int status;
    pid_t pid;
    /* The executor owns every child it has (and, as PID 1, every orphan), so -1 is right. */
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        bash_on_child_exit(pid, status);
        proc_on_child_exit(pid, status);
        terminal_on_child_exit(pid, status);
        ipython_on_child_exit(pid, status);
        browser_on_child_exit(pid, status);
        vscode_on_child_exit(pid, status);
    }
}

static void
drop_privileges(const char *spec)
{
    if (geteuid() != 0 || (spec && strcmp(spec, "root") == 0))
        return;
    uid_t uid = 1000;
    gid_t gid = 1000;
    if (spec) {
        char *end;
        uid = (uid_t)strtoul(spec, &end, 10);
        gid = *end == ':' ? (gid_t)strtoul(end + 1, NULL, 10) : uid;
    }
    struct passwd *pw = getpwuid(uid);
    if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
        die("cannot switch to user %s", spec ? spec : "1000");
    const char *home = pw && access(pw->pw_dir, W_OK) == 0 ? pw->pw_dir : g_exec.workspace;
    env_set(&g_exec.base_env, "HOME", home);
    /* A switch of user, as su's: names inherited from root were the starter's; names the
     * sandbox's env chose (a session's "env") stay. */
    static const char *const names[] = {"USER", "LOGNAME"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = env_get(g_exec.base_env, names[i]);
        if (!v || strcmp(v, "root") == 0)
            env_set(&g_exec.base_env, names[i], pw ? pw->pw_name : "sandbox");
    }
}

/* USER and LOGNAME as a login sets them (os.environ['USER'], getpass, tools that name the user
 * expect them): the name the sandbox's own passwd gives our uid, as whoami says. A sandbox's env
 * (the session's "env") that sets them wins: it is already in ours. */
static void
set_login_names(void)
{
    struct passwd *pw = getpwuid(geteuid());
    if (!pw)
        return; /* no name to give, as whoami has none */
    if (!env_get(g_exec.base_env, "USER"))
        env_set(&g_exec.base_env, "USER", pw->pw_name);
    if (!env_get(g_exec.base_env, "LOGNAME"))
        env_set(&g_exec.base_env, "LOGNAME", pw->pw_name);
}

/* OpenHands' browser tool reads the file viewer's address from /tmp/oh-server-url (the
 * sandbox's own /tmp); the sandbox's browser answers it (plugins/browser/viewer.c). Only where
 * the executor's files reach: one confined elsewhere (the local provider's, on the host's /tmp)
 * writes nothing. */
static void
write_viewer_url(void)
{
    char abs[PATH_MAX];
    err_t err = {0};
    if (path_resolve(&g_exec.roots, "/", FILE_VIEW_URL_FILE, PATH_NOFOLLOW, abs, &err) < 0)
        return;
    int fd = open(FILE_VIEW_URL_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 || io_write_all(fd, FILE_VIEW_URL, strlen(FILE_VIEW_URL)) < 0)
        fprintf(stderr, "sandpipe-executor: %s: %s\n", FILE_VIEW_URL_FILE, strerror(errno));
    if (fd >= 0)
        close(fd);
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {{"listen", required_argument, 0, 'l'},
                                         {"token-file", required_argument, 0, 'T'},
                                         {"workspace", required_argument, 0, 'w'},
                                         {"root", required_argument, 0, 'r'},
                                         {"user", required_argument, 0, 'u'},
                                         {"shell", required_argument, 0, 's'},
                                         {"timeout", required_argument, 0, 't'},
                                         {"no-change-timeout", required_argument, 0, 'n'},
                                         {"socket-mode", required_argument, 0, 'm'},
                                         {"version", no_argument, 0, 'V'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *roots[PATH_ROOTS_MAX];
    int nroots = 0;
    const char *workspace = NULL, *token_file = NULL;
    lst.listen = "unix:/run/sandpipe/executor.sock";
    lst.socket_mode = 0660;
    snprintf(g_exec.shell, sizeof g_exec.shell, "/bin/bash");
    g_exec.default_timeout = 120.0;
    g_exec.no_change_timeout = 10;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'l': lst.listen = optarg; break;
        case 'T': token_file = optarg; break;
        case 'w': workspace = optarg; break;
        case 'r':
            if (nroots < PATH_ROOTS_MAX)
                roots[nroots++] = optarg;
            break;
        case 'u': lst.user = optarg; break;
        case 's': snprintf(g_exec.shell, sizeof g_exec.shell, "%s", optarg); break;
        case 't': g_exec.default_timeout = atof(optarg); break;
        case 'n': g_exec.no_change_timeout = atoi(optarg); break;
        case 'm': lst.socket_mode = (int)strtol(optarg, NULL, 8); break;
        case 'V': printf("sandpipe-executor %s\n", SANDPIPE_VERSION); return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    extern char **environ;
    bash_set_no_change_timeout(getenv(BASH_NO_CHANGE_ENV)); /* the session's env, if it says */
    g_exec.base_env = env_copy(environ);
    if (!env_get(g_exec.base_env, "PATH"))
        env_set(&g_exec.base_env, "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    if (!env_get(g_exec.base_env, "LANG"))
        env_set(&g_exec.base_env, "LANG", "C.UTF-8");
    if (!workspace)
        workspace = access("/workspace", F_OK) == 0 ? "/workspace" : ".";
    if (!realpath(workspace, g_exec.workspace))
        die("workspace %s does not exist", workspace);
    err_t err = {0};
    if (nroots == 0) {
        roots[nroots++] = g_exec.workspace;
        roots[nroots++] = "/tmp";
    }
    for (int i = 0; i < nroots; i++)
        if (path_roots_add(&g_exec.roots, roots[i], &err) < 0)
            die("%s", err.msg);
    if (token_file) {
        FILE *f = fopen(token_file, "r");
        char tok[512] = "";
        if (!f || !fgets(tok, sizeof tok, f))
            die("cannot read token file %s", token_file);
        fclose(f);
        tok[strcspn(tok, "\r\n")] = '\0';
        lst.token = xstrdup(tok);
    }
    g_exec.is_init = getpid() == 1;
    g_exec.started = loop_now();
    g_exec.loop = loop_new(on_signal, NULL);
    loop_before_wait(g_exec.loop, conn_flush_queued, NULL);
    int lfd = listen_on(lst.listen);
    if (lst.tcp && (!lst.token || !*lst.token))
        die("%s", "tcp listening needs --token-file");
    /* Root inside a sandbox's own block of ids: sudo's broker keeps root, we become the user. */
    if (!(lst.user && strcmp(lst.user, "root") == 0) && sudo_broker_start(&err) < 0)
        die("%s", err.msg);
    drop_privileges(lst.user);
    /* Not dumpable: the sandbox's processes run as our uid, and without this any of them could
     * ptrace us or take our fds (pidfd_getfd: the gateway's link, the listening socket) and
     * read /proc/<our pid>/{fd,environ,mem}. Its children are dumpable again once they exec. */
    if (prctl(PR_SET_DUMPABLE, 0) < 0)
        die("prctl(PR_SET_DUMPABLE): %s", strerror(errno));
    if (!env_get(g_exec.base_env, "HOME"))
        env_set(&g_exec.base_env, "HOME", g_exec.workspace);
    set_login_names();
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(g_exec.rundir, sizeof g_exec.rundir, "%s/sandpipe-exec.XXXXXX", tmp);
    if (!mkdtemp(g_exec.rundir))
        die("cannot create a private directory under %s", tmp);
    g_exec.editor = editor_new();
    write_viewer_url();
    loop_watch_add(g_exec.loop, &lst.w, lfd, EPOLLIN, on_accept, NULL);
    /* Start the default shell now so the first command does not wait for bash to boot. */
    if (!bash_get(BASH_DEFAULT_SESSION, true, NULL, NULL, &err))
        fprintf(stderr, "sandpipe-executor: default session: %s\n", err.msg);
    fprintf(stderr, "sandpipe-executor %s listening on %s (workspace %s)\n", SANDPIPE_VERSION,
            lst.listen, g_exec.workspace);
    loop_run(g_exec.loop);
    conn_close_all();
    loop_run_deferred(g_exec.loop);
    ipython_shutdown();
    browser_shutdown();
    vscode_shutdown();
    if (strncmp(lst.listen, "unix:", 5) == 0)
        unlink(lst.listen + 5);
    io_remove_flat_dir(g_exec.rundir); /* our private command files */
    return 0;
}
