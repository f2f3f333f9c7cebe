/* provider_bwrap.c — sandboxes as bubblewrap namespaces inside a cgroup.
 *
 * The sandbox: user, pid, ipc, uts, mount, cgroup (where supported) and, unless spec->network,
 * net namespaces; uid/gid 1000 and hostname "sandbox" inside; a fresh root with /usr read-only,
 * /bin, /lib, /lib64, /sbin as the host has them (symlinks or read-only binds), a curated /etc
 * (no shadow, no private keys) plus generated passwd/group/hosts/hostname, fresh /proc, /dev
 * and /tmp; <dir>/workspace at /workspace and <dir>/run at /run/sandpipe, where the executor
 * (ro-bound at /opt/sandpipe/sandpipe-executor) listens on executor.sock, mode 0666 so the
 * gateway on the host connects to <dir>/run/executor.sock.
 *
 * bwrap maps the sandbox's uid 1000 to the uid that runs bwrap (the gateway's, root in
 * production), which is why /etc is curated: a host file readable only by its owner would be
 * readable inside. The workspace is owned by that uid, i.e. by uid 1000 as the sandbox sees it.
 * Started detached (provider_spawn): no --die-with-parent, the sandbox outlives the gateway. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "provider.h"
#include "xalloc.h"

#define SANDBOX_UID     "1000"
#define EXECUTOR_INSIDE "/opt/sandpipe/sandpipe-executor"

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
                                        "/etc/skel",
                                        NULL};

/* Generated files that replace the host's. */
static const struct {
    const char *name, *text;
} etc_generated[] = {
    {"passwd", "root:x:0:0:root:/root:/bin/bash\n"
               "user:x:" SANDBOX_UID ":" SANDBOX_UID ":sandbox user:/workspace:/bin/bash\n"
               "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
    {"group", "root:x:0:\nuser:x:" SANDBOX_UID ":\nnogroup:x:65534:\n"},
    {"hosts", "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost ip6-loopback\n"},
    {"hostname", "sandbox\n"},
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

static int
write_etc(const sandbox_t *sb, err_t *err)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/etc", sb->dir);
    if (mkdir(p, 0755) < 0 && errno != EEXIST)
        return err_set(err, errno, "mkdir %s: %s", p, strerror(errno));
    for (size_t i = 0; i < sizeof etc_generated / sizeof etc_generated[0]; i++) {
        snprintf(p, sizeof p, "%s/etc/%s", sb->dir, etc_generated[i].name);
        FILE *f = fopen(p, "we");
        if (!f || fputs(etc_generated[i].text, f) < 0 || fclose(f) != 0)
            return err_set(err, errno, "write %s: %s", p, strerror(errno));
    }
    return 0;
}

static void
build_argv(const sandbox_spec_t *spec, const sandbox_t *sb, const char *bwrap, argv_t *a)
{
    char p[PATH_MAX + 32];
    arg(a, bwrap);
    arg(a, "--unshare-user");
    arg(a, "--unshare-pid");
    arg(a, "--unshare-ipc");
    arg(a, "--unshare-uts");
    arg(a, "--unshare-cgroup-try");
    if (!spec->network)
        arg(a, "--unshare-net");
    arg(a, "--new-session");
    args(a, "--cap-drop", "ALL", NULL);
    args(a, "--uid", SANDBOX_UID, NULL);
    args(a, "--gid", SANDBOX_UID, NULL);
    args(a, "--hostname", "sandbox", NULL);
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
    for (size_t i = 0; etc_files[i]; i++)
        args(a, "--ro-bind-try", etc_files[i], etc_files[i]);
    if (spec->network)
        args(a, "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf");
    for (size_t i = 0; i < sizeof etc_generated / sizeof etc_generated[0]; i++) {
        char dst[64];
        snprintf(p, sizeof p, "%s/etc/%s", sb->dir, etc_generated[i].name);
        snprintf(dst, sizeof dst, "/etc/%s", etc_generated[i].name);
        args(a, "--ro-bind", p, dst);
    }
    args(a, "--proc", "/proc", NULL);
    args(a, "--dev", "/dev", NULL);
    args(a, "--tmpfs", "/tmp", NULL);
    args(a, "--tmpfs", "/var/tmp", NULL);
    args(a, "--bind", sb->workspace, "/workspace");
    snprintf(p, sizeof p, "%s/run", sb->dir);
    args(a, "--bind", p, "/run/sandpipe");
    args(a, "--ro-bind", spec->executor_path, EXECUTOR_INSIDE);
    args(a, "--chdir", "/workspace", NULL);
    arg(a, EXECUTOR_INSIDE);
    args(a, "--listen", "unix:/run/sandpipe/executor.sock", NULL);
    args(a, "--workspace", "/workspace", NULL);
    args(a, "--socket-mode", "0666", NULL);
}

static int
bwrap_create(const sandbox_spec_t *spec, sandbox_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->provider, sizeof out->provider, "bwrap");
    /* The sandbox's uid 1000 is the uid running bwrap: that is who owns the workspace. */
    char **envp = provider_env_new(spec, "/workspace", err);
    if (!envp)
        return -ERR_BAD_REQ;
    int e = provider_prepare(spec, out, geteuid(), getegid(), err);
    if (e < 0) {
        provider_env_free(envp);
        return e;
    }
    if ((e = write_etc(out, err)) < 0) {
        provider_env_free(envp);
        provider_generic_destroy(out, true, NULL);
        return e;
    }
    char bwrap[PATH_MAX], exe[PATH_MAX];
    find_bwrap(bwrap, sizeof bwrap);
    sandbox_spec_t abs = *spec; /* bwrap runs in <dir>: a relative executor path would miss */
    if (realpath(spec->executor_path, exe))
        abs.executor_path = exe;
    argv_t a = {0};
    build_argv(&abs, out, bwrap, &a);
    e = provider_spawn(spec, out, a.v, envp, out->dir, err);
    argv_free(&a);
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
};
