/* provider_bwrap.c — sandboxes as bubblewrap namespaces inside a cgroup.
 *
 * The sandbox: user, pid, ipc, uts, mount, cgroup (where supported) and net namespaces (always:
 * a session with a network gets a link into its own namespace from netd, at claim time,
 * gateway/session_network.c; its resolv.conf names netd's resolver from the start); uid/gid 1000
 * and hostname "sandbox" inside; a fresh root with /usr read-only, /bin, /lib, /lib64, /sbin as the
 * host has them (symlinks or read-only binds), a curated /etc (no shadow, no private keys) plus
 * generated passwd/group/hosts/hostname (one read-only bind of a copy, sandbox_etc.h), fresh /proc
 * and /dev (read-only, with a size-bounded /dev/shm) under a read-only root; the sandbox's own disk
 * (sandbox_disk.h: its workspace, tmp, var-tmp at /workspace, /tmp, /var/tmp) or, without one,
 * <dir>/workspace and size-bounded tmpfs; the executor ro-bound at /opt/sandpipe/sandpipe-executor,
 * started with --root / (its file operations reach any path the sandbox user may: the sandbox, not
 * the executor, keeps the host out).
 *
 * Nothing the sandbox can read names a host path of ours: bwrap's options come from a memfd
 * (`bwrap --args 3`, so /proc/1/cmdline inside shows no state directory or sandbox id), the
 * generated /etc files are in the sandbox's /etc copy (resolv.conf a memfd bwrap copies in,
 * --ro-bind-data), and the executor accepts
 * on a listening socket the provider made in <dir>/ctl (fd 4, `--listen fd:4`), a directory the
 * sandbox neither sees nor can write. What remains visible is in docs/operations.md (security).
 *
 * Users: bwrap itself runs as the first uid of the sandbox's own block of host uids
 * (provider_prepare claims one per sandbox; provider_spawn switches to it after joining the
 * cgroup). With root inside (spec->root_inside, sb->uid_range > 1) it joins the user namespace
 * the gateway made for the block (sandbox_userns.h): that uid is root inside, first + 1000 the
 * user, the executor starts as root and leaves only sudo's broker root; an image's root is
 * <dir>/root (sandbox_root.h). Otherwise it maps its one uid to 1000, the only uid there. Host
 * files show up as nobody (65534) except the block's. The workspace is the user's, <dir> admits
 * only the block's gid (0710). Sandboxes are thus different users on the host too:
 * none can signal, ptrace or read another, even outside its namespaces. /etc is still curated
 * (no shadow, no keys, generated passwd). A gateway that is not root (or --sandbox-uids off)
 * runs bwrap as its own uid instead. Every process of the sandbox runs under the seccomp
 * filter of seccomp.h (--seccomp, fd FD_SECCOMP) and, with bwrap >= 0.8, --disable-userns (with
 * root inside: the namespace's own max_user_namespaces 0).
 * Started detached (provider_spawn): no --die-with-parent, the sandbox outlives the gateway. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net_policy.h"
#include "provider.h"
#include "sandbox_disk.h"
#include "sandbox_etc.h"
#include "sandbox_root.h"
#include "sandbox_userns.h"
#include "seccomp.h"
#include "xalloc.h"

#define SANDBOX_UID     "1000"
#define EXECUTOR_INSIDE "/opt/sandpipe/sandpipe-executor"
#define IMAGE_HOME      "/home/openhands"        /* images/setup.sh's user */
#define IMAGE_SUDO_SHIM "/opt/sandpipe/bin/sudo" /* images/sudo-shim, in the image */
#define HOME_DIR        "home"                   /* <dir>/home or <dir>/disk/home */

/* Host files of /etc a sandbox needs; each ro-bound if it exists. */
static const char *const etc_files[] = {"/etc/alternatives",
                                        "/etc/ld.so.cache",
                                        "/etc/ld.so.conf",
                                        "/etc/ld.so.conf.d",
                                        "/etc/localtime",
                                        "/etc/timezone",
                                        "/etc/nsswitch.conf",
                                        "/etc/ssl/certs",
                                        "/etc/ssl/openssl.cnf",
                                        "/etc/ca-certificates",
                                        "/etc/bash.bashrc",
                                        "/etc/profile",
                                        "/etc/profile.d",
                                        "/etc/inputrc",
                                        "/etc/terminfo",
                                        "/etc/mime.types",
                                        "/etc/protocols",
                                        "/etc/services",
                                        "/etc/gai.conf",
                                        "/etc/host.conf",
                                        "/etc/debian_version",
                                        "/etc/os-release",
                                        "/etc/lsb-release",
                                        "/etc/python3",
                                        "/etc/magic",
                                        "/etc/vim",
                                        "/etc/fonts",
                                        "/etc/matplotlibrc", /* Debian's matplotlib reads it */
                                        "/etc/skel",
                                        NULL};

/* Generated files that replace the host's (resolv.conf: the mount point of its data bind). */
static const sandbox_etc_file_t etc_generated[] = {
    {"passwd", "root:x:0:0:root:/root:/bin/bash\n"
               "user:x:" SANDBOX_UID ":" SANDBOX_UID ":sandbox user:/workspace:/bin/bash\n"
               "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
    {"group", "root:x:0:\nuser:x:" SANDBOX_UID ":\nnogroup:x:65534:\n"},
    {"hosts", "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost ip6-loopback\n"},
    {"hostname", "sandbox\n"},
    {"resolv.conf", ""},
};

typedef struct {
    char **v;
    size_t n, cap;
} argv_t;

static void
arg(argv_t *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->v = xrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = xstrdup(s);
    a->v[a->n] = NULL;
}

static void
args(argv_t *a, const char *s1, const char *s2, const char *s3)
{
    arg(a, s1);
    arg(a, s2);
    if (s3)
        arg(a, s3);
}

static void
argv_free(argv_t *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
}

/* bwrap from PATH (the gateway's), else the Debian location. */
static void
find_bwrap(char *out, size_t n)
{
    const char *path = getenv("PATH");
    char *copy = xstrdup(path ? path : "/usr/bin:/bin"), *save = NULL;
    snprintf(out, n, "/usr/bin/bwrap");
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char p[PATH_MAX];
        if (d[0] == '/' && snprintf(p, sizeof p, "%s/bwrap", d) < (int)sizeof p &&
            access(p, X_OK) == 0) {
            snprintf(out, n, "%s", p);
            break;
        }
    }
    free(copy);
}

/* A sealed, read-only memfd (O_CLOEXEC) holding data, positioned at 0. */
static int
memfd_with(const char *name, const void *data, size_t len, err_t *err)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return err_set(err, errno, "memfd_create: %s", strerror(errno));
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd, (const char *)data + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = err_set(err, errno ? errno : EIO, "memfd write: %s", strerror(errno));
            close(fd);
            return e;
        }
        off += (size_t)n;
    }
    /* Read-only from here: whoever reads it sees exactly what was written. */
    if (lseek(fd, 0, SEEK_SET) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK) < 0) {
        int e = err_set(err, errno, "memfd seal: %s", strerror(errno));
        close(fd);
        return e;
    }
    return fd;
}

/* Every sandbox's resolv.conf: netd answers whatever address a sandbox's DNS goes to
 * (netd/nft_rules.h); without a network it fails at once (no route). */
static const char resolv_conf[] =
    "nameserver " NET_RESOLVER_INSIDE "\noptions timeout:2 attempts:2\n";

/* fds of the bwrap process (provider_spawn places pass[i] at 3 + i). */
enum { FD_ARGS = 3, FD_LISTEN, FD_SECCOMP, FD_RESOLV, FD_USERNS, FD_COUNT };

/* Root inside holds what Docker gives a container's root by default, in the sandbox's own
 * namespaces only: files (chown, modes, any owner), users (setuid for apt's _apt, su), signals,
 * low ports, raw sockets (ping), chroot, mknod, file capabilities. Not CAP_SYS_ADMIN, not
 * CAP_NET_ADMIN, not CAP_SYS_PTRACE (the executor's fds stay its own), and seccomp.h on top. */
static const char *const root_caps[] = {
    "CAP_CHOWN",      "CAP_DAC_OVERRIDE", "CAP_FOWNER",      "CAP_FSETID",           "CAP_KILL",
    "CAP_SETGID",     "CAP_SETUID",       "CAP_SETPCAP",     "CAP_NET_BIND_SERVICE", "CAP_NET_RAW",
    "CAP_SYS_CHROOT", "CAP_MKNOD",        "CAP_AUDIT_WRITE", "CAP_SETFCAP",          NULL};

/* <the executor's directory>/name: what is installed next to it (its plugins, sandpipe's sudo). */
static void
beside_executor(const char *executor, const char *name, char *out, size_t n)
{
    const char *slash = strrchr(executor, '/');
    snprintf(out, n, "%.*s/%s", slash ? (int)(slash - executor) : 1, slash ? executor : ".", name);
}

/* sandpipe's sudo (executor/sudo/), next to the executor: "" if it is not there. */
static void
sudo_client_path(const char *executor, char *out, size_t n)
{
    beside_executor(executor, "sandpipe-sudo", out, n);
    if (access(out, X_OK) < 0)
        out[0] = '\0';
}

/* bwrap >= 0.8 can cap user namespaces inside the sandbox at the kernel level too
 * (--disable-userns); asked once per bwrap path. Starts run on several threads
 * (gateway/sandbox_start.h): the answer is kept under a lock, the question asked outside it
 * (two starts may both ask; they get the same answer). */
static bool
can_disable_userns(const char *bwrap)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char checked[PATH_MAX];
    static bool can;
    pthread_mutex_lock(&lock);
    bool known = strcmp(checked, bwrap) == 0, answer = can;
    pthread_mutex_unlock(&lock);
    if (known)
        return answer;
    answer = false;
    char cmd[PATH_MAX + 32], line[128] = "";
    if (strchr(bwrap, '\''))
        return answer;
    snprintf(cmd, sizeof cmd, "'%s' --version 2>/dev/null", bwrap);
    FILE *f = popen(cmd, "re");
    unsigned major = 0, minor = 0;
    if (f && fgets(line, sizeof line, f) && sscanf(line, "bubblewrap %u.%u", &major, &minor) == 2)
        answer = major > 0 || minor >= 8;
    if (f)
        pclose(f);
    pthread_mutex_lock(&lock);
    snprintf(checked, sizeof checked, "%s", bwrap);
    can = answer;
    pthread_mutex_unlock(&lock);
    return answer;
}

/* A quarter of the memory limit (1 GiB without one, 1 MiB at least) for each bounded tmpfs. */
static int64_t
tmpfs_bytes(const sandbox_spec_t *spec)
{
    int64_t quarter = spec->memory_bytes / 4;
    return spec->memory_bytes <= 0 ? 1LL << 30 : quarter < (1 << 20) ? 1 << 20 : quarter;
}

static void
tmpfs(argv_t *a, const char *size, const char *where)
{
    args(a, "--perms", "1777", NULL);
    args(a, "--size", size, NULL);
    args(a, "--tmpfs", where, NULL);
}

/* The host-/usr profile ("host"): /usr and the top directories as the host has them, a curated
 * /etc plus the generated files (sandbox_etc.h: one directory of copies, one bind). */
static int
host_root(const sandbox_spec_t *spec, const sandbox_t *sb, argv_t *a, err_t *err)
{
    char fd[16], sudo[PATH_MAX], etc[PATH_MAX], state[PATH_MAX];
    /* The directories bwrap makes are its user's: root inside, where a block is mapped, so
     * they must be open to the sandbox user (bwrap's own are 0700 from the gateway's start). */
    static const char *const dirs[] = {"/opt", "/opt/sandpipe", SANDBOX_TOOLS_BIN, "/var", NULL};
    for (size_t i = 0; dirs[i]; i++) {
        args(a, "--perms", "0755", NULL);
        args(a, "--dir", dirs[i], NULL);
    }
    args(a, "--ro-bind", "/usr", "/usr");
    static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
        struct stat st;
        char target[PATH_MAX];
        ssize_t n;
        if (lstat(top[i], &st) < 0)
            continue;
        if (S_ISLNK(st.st_mode) && (n = readlink(top[i], target, sizeof target - 1)) > 0) {
            target[n] = '\0';
            args(a, "--symlink", target, top[i]);
        } else if (S_ISDIR(st.st_mode)) {
            args(a, "--ro-bind", top[i], top[i]);
        }
    }
    /* the state directory: <dir>'s parent */
    const char *slash = strrchr(sb->dir, '/');
    snprintf(state, sizeof state, "%.*s", slash && slash > sb->dir ? (int)(slash - sb->dir) : 1,
             slash && slash > sb->dir ? sb->dir : "/");
    int e = sandbox_etc_dir(state, etc_files, etc_generated,
                            sizeof etc_generated / sizeof etc_generated[0], etc, sizeof etc, err);
    if (e < 0)
        return e;
    args(a, "--ro-bind", etc, "/etc");
    snprintf(fd, sizeof fd, "%d", FD_RESOLV);
    args(a, "--perms", "0644", NULL);
    args(a, "--ro-bind-data", fd, "/etc/resolv.conf");
    /* sandpipe's sudo over the host's (setuid: no use under no_new_privs), or where PATH
     * finds it last (provider_env.c) when the host has none: /usr is read-only */
    sudo_client_path(spec->executor_path, sudo, sizeof sudo);
    if (sudo[0])
        args(a, "--ro-bind", sudo,
             access("/usr/bin/sudo", F_OK) == 0 ? "/usr/bin/sudo" : SANDBOX_TOOLS_BIN "/sudo");
    return 0;
}

/* An image's root filesystem with its own /etc (passwd names uid 1000 openhands) but netd's
 * resolver in resolv.conf (where the image has that file to mount over: a read-only root takes
 * no new mount point). With root inside it is <dir>/root (sandbox_root.h: the image as root's,
 * writable on the sandbox's disk), else the image itself, read-only. sudo is sandpipe's
 * (images/sudo-shim in an image without it). */
static void
image_root(const sandbox_spec_t *spec, const sandbox_t *sb, argv_t *a)
{
    char p[PATH_MAX + 64], fd[16];
    struct stat st;
    if (sb->uid_range > 1) {
        snprintf(p, sizeof p, "%s/" SANDBOX_ROOT_MOUNT, sb->dir);
        args(a, sb->disk_bytes > 0 ? "--bind" : "--ro-bind", p, "/");
    } else {
        args(a, "--ro-bind", spec->rootfs, "/");
    }
    snprintf(p, sizeof p, "%s/etc/resolv.conf", spec->rootfs);
    if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) {
        snprintf(fd, sizeof fd, "%d", FD_RESOLV);
        args(a, "--perms", "0644", NULL); /* bwrap's own 0600 is root's inside where root is */
        args(a, "--ro-bind-data", fd, "/etc/resolv.conf");
    }
    sudo_client_path(spec->executor_path, p, sizeof p);
    if (!p[0])
        snprintf(p, sizeof p, "%s" IMAGE_SUDO_SHIM, spec->rootfs);
    if (access(p, X_OK) == 0)
        args(a, "--ro-bind", p, "/usr/bin/sudo");
}

/* bwrap's options, all of them read from FD_ARGS (see the file header). 0 or < 0 with err. */
static int
build_options(const sandbox_spec_t *spec, const sandbox_t *sb, const char *bwrap, argv_t *a,
              err_t *err)
{
    char fd[16];
    if (sb->uid_range > 1) { /* sandbox_userns.h: its block mapped, nested namespaces barred */
        snprintf(fd, sizeof fd, "%d", FD_USERNS);
        args(a, "--userns", fd, NULL);
    } else {
        arg(a, "--unshare-user");
        if (can_disable_userns(bwrap))
            arg(a, "--disable-userns");
    }
    arg(a, "--unshare-pid");
    arg(a, "--unshare-ipc");
    arg(a, "--unshare-uts");
    arg(a, "--unshare-cgroup-try");
    arg(a, "--unshare-net");
    arg(a, "--new-session");
    args(a, "--cap-drop", "ALL", NULL);
    snprintf(fd, sizeof fd, "%d", FD_SECCOMP);
    args(a, "--seccomp", fd, NULL); /* seccomp.h: installed just before the executor runs */
    if (sb->uid_range > 1) { /* the executor starts as root, keeps sudo's broker, becomes 1000 */
        for (size_t i = 0; root_caps[i]; i++)
            args(a, "--cap-add", root_caps[i], NULL);
        args(a, "--uid", "0", NULL);
        args(a, "--gid", "0", NULL);
    } else {
        args(a, "--uid", SANDBOX_UID, NULL);
        args(a, "--gid", SANDBOX_UID, NULL);
    }
    args(a, "--hostname", "sandbox", NULL);
    int e = 0;
    if (spec->rootfs && spec->rootfs[0])
        image_root(spec, sb, a);
    else if ((e = host_root(spec, sb, a, err)) < 0)
        return e;
    args(a, "--proc", "/proc", NULL);
    args(a, "--dev", "/dev", NULL);
    /* A tmpfs is memory charged to the sandbox: bounded, so filling one gives ENOSPC, never an
     * OOM kill of everything (docs/operations.md). /tmp and /var/tmp are on the sandbox's own
     * disk where it has one. */
    char size[32], p[PATH_MAX + 32];
    snprintf(size, sizeof size, "%lld", (long long)tmpfs_bytes(spec));
    tmpfs(a, size, "/dev/shm");
    if (sb->disk_bytes > 0) {
        snprintf(p, sizeof p, "%s/" SANDBOX_DISK_MOUNT "/tmp", sb->dir);
        args(a, "--bind", p, "/tmp");
        snprintf(p, sizeof p, "%s/" SANDBOX_DISK_MOUNT "/var-tmp", sb->dir);
        args(a, "--bind", p, "/var/tmp");
    } else {
        tmpfs(a, size, "/tmp");
        tmpfs(a, size, "/var/tmp");
    }
    args(a, "--bind", sb->workspace, "/workspace");
    if (spec->rootfs && spec->rootfs[0]) {
        provider_home_path(sb, p, sizeof p);
        args(a, "--bind", p, IMAGE_HOME);
    }
    args(a, "--ro-bind", spec->executor_path, EXECUTOR_INSIDE);
    /* The executor's plugins (IPython helper, agentskills) sit next to it (plugins/module.mk). */
    beside_executor(spec->executor_path, "plugins", p, sizeof p);
    args(a, "--ro-bind-try", p, "/opt/sandpipe/plugins");
    /* The root and /dev are tmpfs too, unbounded: read-only once everything is mounted on them
     * (what is bound above keeps its own mode). An image's root is a read-only bind already. */
    args(a, "--remount-ro", "/dev", NULL);
    if (!spec->rootfs || !spec->rootfs[0])
        args(a, "--remount-ro", "/", NULL);
    args(a, "--chdir", "/workspace", NULL);
    return 0;
}

/* Makes the fds bwrap reads (FD_ARGS .. FD_COUNT - 1, in that order, into fds[], which the
 * caller set to -1 and closes); with root inside, the user namespace among them and the root
 * mounted at <dir>/root (destroy unmounts it). */
static int
make_fds(const sandbox_spec_t *spec, const sandbox_t *sb, const char *bwrap, int fds[FD_COUNT - 3],
         err_t *err)
{
    argv_t a = {0};
    int built = build_options(spec, sb, bwrap, &a, err);
    if (built < 0) {
        argv_free(&a);
        return built;
    }
    size_t len = 0;
    for (size_t i = 0; i < a.n; i++)
        len += strlen(a.v[i]) + 1;
    char *blob = xmalloc(len), *p = blob;
    for (size_t i = 0; i < a.n; i++) {
        size_t n = strlen(a.v[i]) + 1;
        memcpy(p, a.v[i], n);
        p += n;
    }
    argv_free(&a);
    int e = fds[FD_ARGS - 3] = memfd_with("bwrap-args", blob, len, err);
    free(blob);
    if (e >= 0)
        e = fds[FD_LISTEN - 3] = provider_listen(sb, err);
    if (e >= 0)
        e = fds[FD_SECCOMP - 3] = seccomp_filter_fd(err);
    if (e >= 0)
        e = fds[FD_RESOLV - 3] = memfd_with("resolv.conf", resolv_conf, strlen(resolv_conf), err);
    if (e >= 0 && sb->uid_range > 1)
        e = fds[FD_USERNS - 3] = sandbox_userns_open(sb->uid, sb->gid, sb->uid_range, err);
    if (e >= 0 && sb->uid_range > 1 && spec->rootfs && spec->rootfs[0])
        e = sandbox_root_mount(sb, spec->rootfs, fds[FD_USERNS - 3], err);
    return e < 0 ? e : 0;
}

/* bwrap runs as the sandbox's uid: it must reach the executor it binds. */
static int
check_reachable(const char *exe, err_t *err)
{
    char p[PATH_MAX];
    struct stat st;
    snprintf(p, sizeof p, "%s", exe);
    if (stat(p, &st) < 0 || (st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH))
        return err_set(err, EACCES,
                       "executor %s must be readable and executable by every user (sandboxes "
                       "run as their own uid)",
                       exe);
    for (char *s = strrchr(p, '/'); s && s > p; s = strrchr(p, '/')) {
        *s = '\0';
        if (stat(p, &st) < 0 || !(st.st_mode & S_IXOTH))
            return err_set(err, EACCES,
                           "directory %s must be searchable by every user (o+x) so sandboxes "
                           "reach the executor",
                           p);
    }
    return 0;
}

static int
bwrap_create(const sandbox_spec_t *spec, sandbox_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->provider, sizeof out->provider, "bwrap");
    bool image = spec->rootfs && spec->rootfs[0];
    snprintf(out->image, sizeof out->image, "%s", spec->image ? spec->image : IMAGE_HOST);
    char **envp = provider_env_new(spec, image ? IMAGE_HOME : "/workspace", err);
    if (!envp)
        return -ERR_BAD_REQ;
    int e = provider_prepare(spec, out, true, err);
    if (e < 0) {
        provider_env_free(envp);
        return e;
    }
    char bwrap[PATH_MAX], exe[PATH_MAX];
    find_bwrap(bwrap, sizeof bwrap);
    sandbox_spec_t abs = *spec; /* bwrap runs in <dir>: a relative executor path would miss */
    if (realpath(spec->executor_path, exe))
        abs.executor_path = exe;
    int fds[FD_COUNT - 3];
    char args_fd[16], listen[16];
    snprintf(args_fd, sizeof args_fd, "%d", FD_ARGS);
    snprintf(listen, sizeof listen, "fd:%d", FD_LISTEN);
    /* --root /: file paths reach whatever the sandbox user may access, as upstream OpenHands'
     * (the sandbox is the boundary; docs/protocol.md, "Paths"). */
    char *argv[] = {bwrap,      "--args", args_fd,       EXECUTOR_INSIDE,
                    "--listen", listen,   "--workspace", "/workspace",
                    "--root",   "/",      NULL};
    for (int i = 0; i < FD_COUNT - 3; i++)
        fds[i] = -1;
    e = out->uid != geteuid() ? check_reachable(abs.executor_path, err) : 0;
    if (e == 0 && image)
        e = provider_prepare_home(spec, out, err);
    if (e == 0)
        e = make_fds(&abs, out, bwrap, fds, err);
    if (e == 0)
        e = provider_spawn(spec, out, argv, envp, out->dir, fds,
                           out->uid_range > 1 ? FD_COUNT - 3 : FD_USERNS - 3, err);
    for (int i = 0; i < FD_COUNT - 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    provider_env_free(envp);
    if (e < 0)
        provider_generic_destroy(out, true, NULL); /* nothing half-made stays behind */
    return e;
}

const provider_t provider_bwrap = {
    .name = "bwrap",
    .create = bwrap_create,
    .destroy = provider_generic_destroy,
    .alive = provider_generic_alive,
    .pause = provider_generic_pause,
    .resume = provider_generic_resume,
    .usage = provider_generic_usage,
};
