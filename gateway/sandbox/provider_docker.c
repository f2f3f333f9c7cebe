/* provider_docker.c — sandboxes as Docker containers of a runtime image (images/), driven through
 * the Engine API on the gateway's loop (docker_api.h).
 *
 * A container: the image's Docker form (`sandpipe/runtime:<tag>`, "default" is
 * `sandpipe/runtime:default`), named `sandpipe-<sandbox id>`, labelled sandpipe.sandbox and
 * sandpipe.gateway; Docker's network "none" always (never a Docker bridge: a session with a
 * network gets a link into the container's namespace from netd, as a bwrap sandbox does,
 * gateway/session_network.c) and a resolv.conf naming netd's resolver; memory (no swap), CPU and
 * pids limits; every capability dropped, no-new-privileges, sandpipe's own seccomp profile
 * (seccomp.h: the bwrap sandboxes' rules, in Docker's JSON form, not Docker's default profile); a
 * read-only root with /workspace, /home/openhands (provider_home.c) and, on the sandbox's own disk
 * where it has one, /tmp and /var/tmp bound from <dir> (else size-bounded tmpfs); /etc/passwd and
 * /etc/group generated in <dir> and bound read-only. Its processes run as the sandbox's own host
 * uid from the range (provider_prepare), named `openhands` there: never root, on the host or
 * inside, and different for every sandbox, as with bwrap. sudo is images/sudo-shim (PATH finds
 * /opt/sandpipe/bin first: no-new-privileges leaves real sudo nothing to do).
 *
 * The executor socket: the provider makes the listening socket in <dir>/ctl (host-only, as for
 * bwrap) and a one-shot hand-off socket <dir>/ctl/handoff.sock, the only file of ctl bound into
 * the container (/run/sandpipe/handoff.sock). The executor (`--listen recv:`) connects to it and
 * receives the listening socket (SCM_RIGHTS) from the gateway, which checks the peer's uid and
 * then closes and removes the hand-off. The gateway connects to <dir>/ctl/executor.sock, in a
 * directory the container cannot write, exactly as for bwrap: nothing a container writes is
 * resolved as a host path.
 *
 * Container start (create + start) is asynchronous (create_async); inspect, pause and unpause
 * are synchronous local calls; removal is asynchronous, the directory purged once Docker has
 * removed the container. Usage comes from the container's cgroup (docker/<id>). The start-up
 * clean-up of an earlier run's containers: docker_orphans.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "docker_api.h"
#include "docker_orphans.h"
#include "gw.h"
#include "json_util.h"
#include "net_policy.h"
#include "provider.h"
#include "sandbox_destroy.h"
#include "sandbox_disk.h"
#include "seccomp.h"
#include "xalloc.h"

#define HANDOFF_NAME     "handoff.sock"
#define HANDOFF_INSIDE   "/run/sandpipe/handoff.sock"
#define EXECUTOR_INSIDE  "/opt/sandpipe/sandpipe-executor"
#define DOCKER_TIMEOUT   60000 /* ms: create and start (an image's first start is slower) */
#define DOCKER_QUICK_MS  5000  /* inspect, pause, unpause */
#define DOCKER_IMAGE_DEF "sandpipe/runtime:default"

/* A sandbox being started, or whose executor has not fetched its socket yet. */
typedef struct handoff {
    struct handoff *next;
    sandbox_t sb;
    int listen_fd, handoff_fd;
    uv_poll_t poll;
    bool polling;
    bool started; /* Docker answered the start (done was called) */
    bool handed;  /* the executor has its socket */
    provider_done_fn done;
    void *ud;
} handoff_t;

static handoff_t *handoffs;

static void
container_name(const sandbox_t *sb, char *out, size_t n)
{
    snprintf(out, n, "sandpipe-%s", sb->id);
}

static void
on_handoff_closed(uv_handle_t *ph)
{
    handoff_t *h = ph->data;
    close(h->handoff_fd); /* after libuv let go of it */
    free(h);
}

/* Forgets h: closes its sockets, removes the hand-off file. */
static void
handoff_free(handoff_t *h)
{
    for (handoff_t **pp = &handoffs; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/" PROVIDER_CTL_DIR "/" HANDOFF_NAME, h->sb.dir);
    unlink(p);
    if (h->listen_fd >= 0)
        close(h->listen_fd);
    if (h->polling) {
        uv_poll_stop(&h->poll);
        h->poll.data = h;
        uv_close((uv_handle_t *)&h->poll, on_handoff_closed);
        return;
    }
    if (h->handoff_fd >= 0)
        close(h->handoff_fd);
    free(h);
}

static handoff_t *
handoff_find(const char *id)
{
    for (handoff_t *h = handoffs; h; h = h->next)
        if (!strcmp(h->sb.id, id))
            return h;
    return NULL;
}

/* The executor connected to the hand-off socket: give it the listening socket if it is the
 * sandbox's uid (anything else is dropped and waited past). */
static void
on_handoff(uv_poll_t *p, int status, int events)
{
    (void)events;
    handoff_t *h = p->data;
    if (status < 0)
        return;
    int c = accept4(h->handoff_fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
        return;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != h->sb.uid) {
        close(c);
        return;
    }
    char byte = 0, ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &h->listen_fd, sizeof(int));
    ssize_t n;
    do
        n = sendmsg(c, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    close(c);
    if (n != 1)
        return;
    h->handed = true; /* ours closes, the executor's stays */
    if (h->started)
        handoff_free(h);
    else
        uv_poll_stop(&h->poll); /* freed when Docker's answer to the start comes */
}

/* <dir>/<name>, root's, 0644, holding text. */
static int
write_file(const sandbox_t *sb, const char *name, const char *text, err_t *err)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/%s", sb->dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    size_t n = strlen(text);
    if (fd < 0 || write(fd, text, n) != (ssize_t)n || fchmod(fd, 0644) < 0) {
        int e = err_set(err, errno ? errno : EIO, "%s: %s", p, strerror(errno));
        if (fd >= 0)
            close(fd);
        return e;
    }
    close(fd);
    return 0;
}

static json_object *
str_array(const char *const *v)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; v[i]; i++)
        json_object_array_add(a, json_object_new_string(v[i]));
    return a;
}

static void
bind_add(json_object *binds, const char *host, const char *inside, const char *opts)
{
    char b[PATH_MAX * 2];
    snprintf(b, sizeof b, "%s:%s%s%s", host, inside, opts ? ":" : "", opts ? opts : "");
    json_object_array_add(binds, json_object_new_string(b));
}

/* The container's configuration (POST /containers/create). */
static json_object *
container_config(const sandbox_spec_t *spec, const sandbox_t *sb, char **envp)
{
    json_object *c = json_object_new_object(), *hc = json_object_new_object();
    const char *image =
        !spec->image || !strcmp(spec->image, "default") ? DOCKER_IMAGE_DEF : spec->image;
    json_set_str(c, "Image", image);
    static const char *const cmd[] = {EXECUTOR_INSIDE,
                                      "--listen",
                                      "recv:" HANDOFF_INSIDE,
                                      "--workspace",
                                      "/workspace",
                                      "--root",
                                      "/",
                                      NULL};
    json_set(c, "Cmd", str_array(cmd));
    json_set(c, "Entrypoint", json_object_new_array());
    char user[64];
    snprintf(user, sizeof user, "%u:%u", (unsigned)sb->uid, (unsigned)sb->gid);
    json_set_str(c, "User", user);
    json_set_str(c, "WorkingDir", "/workspace");
    json_set_str(c, "Hostname", "sandbox");
    json_object *env = json_object_new_array();
    for (size_t i = 0; envp[i]; i++) {
        if (!strncmp(envp[i], "PATH=", 5)) { /* images/sudo-shim first */
            char *p = xasprintf("PATH=/opt/sandpipe/bin:%s", envp[i] + 5);
            json_object_array_add(env, json_object_new_string(p));
            free(p);
        } else {
            json_object_array_add(env, json_object_new_string(envp[i]));
        }
    }
    json_set(c, "Env", env);
    json_object *labels = json_object_new_object();
    json_set_str(labels, "sandpipe.sandbox", sb->id);
    json_set_str(labels, "sandpipe.gateway", g_gw.cfg.id);
    json_set_str(labels, "sandpipe.dir", sb->dir);
    json_set_str(labels, "sandpipe.run", docker_life_id());
    json_set(c, "Labels", labels);
    json_set_str(hc, "NetworkMode", "none");
    if (spec->memory_bytes > 0) {
        json_set_int(hc, "Memory", spec->memory_bytes);
        json_set_int(hc, "MemorySwap", spec->memory_bytes); /* no swap */
    }
    if (spec->cpu_millicores > 0)
        json_set_int(hc, "NanoCpus", spec->cpu_millicores * 1000000);
    if (spec->pids_max > 0)
        json_set_int(hc, "PidsLimit", spec->pids_max);
    static const char *const drop[] = {"ALL", NULL};
    json_set(hc, "CapDrop", str_array(drop));
    json_object *sec = json_object_new_array();
    json_object_array_add(sec, json_object_new_string("no-new-privileges"));
    char *seccomp = xasprintf("seccomp=%s", seccomp_docker_profile()); /* bwrap's rules */
    json_object_array_add(sec, json_object_new_string(seccomp));
    free(seccomp);
    json_set(hc, "SecurityOpt", sec);
    json_set_bool(hc, "ReadonlyRootfs", true);
    /* Its output is the host's disk (Docker's log file): bounded, the oldest dropped. */
    json_object *log = json_object_new_object(), *logcfg = json_object_new_object();
    json_set_str(log, "Type", "json-file");
    json_set_str(logcfg, "max-size", "1m");
    json_set_str(logcfg, "max-file", "2");
    json_set(log, "Config", logcfg);
    json_set(hc, "LogConfig", log);
    int64_t quarter = spec->memory_bytes / 4;
    int64_t tmpfs = spec->memory_bytes <= 0 ? 1LL << 30 : quarter < (1 << 20) ? 1 << 20 : quarter;
    json_set_int(hc, "ShmSize", tmpfs);
    json_object *binds = json_object_new_array(), *tmp = json_object_new_object();
    char p[PATH_MAX + 64], opts[64];
    bind_add(binds, sb->workspace, "/workspace", NULL);
    if (provider_home_path(sb, p, sizeof p))
        bind_add(binds, p, IMAGE_HOME, NULL);
    snprintf(p, sizeof p, "%s/" PROVIDER_CTL_DIR "/" HANDOFF_NAME, sb->dir);
    bind_add(binds, p, HANDOFF_INSIDE, NULL);
    snprintf(p, sizeof p, "%s/passwd", sb->dir);
    bind_add(binds, p, "/etc/passwd", "ro");
    snprintf(p, sizeof p, "%s/resolv.conf", sb->dir);
    bind_add(binds, p, "/etc/resolv.conf", "ro");
    snprintf(p, sizeof p, "%s/group", sb->dir);
    bind_add(binds, p, "/etc/group", "ro");
    snprintf(opts, sizeof opts, "rw,nosuid,nodev,size=%lld,mode=1777", (long long)tmpfs);
    if (sb->disk_bytes > 0) {
        snprintf(p, sizeof p, "%s/" SANDBOX_DISK_MOUNT "/tmp", sb->dir);
        bind_add(binds, p, "/tmp", NULL);
        snprintf(p, sizeof p, "%s/" SANDBOX_DISK_MOUNT "/var-tmp", sb->dir);
        bind_add(binds, p, "/var/tmp", NULL);
    } else {
        json_set_str(tmp, "/tmp", opts);
        json_set_str(tmp, "/var/tmp", opts);
    }
    json_set_str(tmp, "/run", "rw,nosuid,nodev,size=1m,mode=755");
    json_set(hc, "Binds", binds);
    json_set(hc, "Tmpfs", tmp);
    json_set(c, "HostConfig", hc);
    return c;
}

static void
start_failed(handoff_t *h, const char *why)
{
    provider_done_fn done = h->done;
    void *ud = h->ud;
    sandbox_t sb = h->sb;
    handoff_free(h);
    sandbox_destroy(&provider_docker, &sb, NULL, NULL, false);
    done(ud, NULL, why);
}

static void
on_started(void *ud, long status, json_object *body, const char *error)
{
    (void)body;
    handoff_t *h = ud;
    if (status != 204 && status != 304) {
        start_failed(h, error ? error : "docker: the container did not start");
        return;
    }
    h->started = true;
    h->done(h->ud, &h->sb, NULL); /* the hand-off stays until the executor fetches its socket */
    if (h->handed)
        handoff_free(h);
}

static void
on_created(void *ud, long status, json_object *body, const char *error)
{
    handoff_t *h = ud;
    const char *id = json_get_str(body, "Id", "");
    if (status != 201 || !id[0]) {
        start_failed(h, error ? error : "docker: the container was not created");
        return;
    }
    /* Docker's cgroupfs layout: docker/<id> under each controller (v1) or the root (v2). */
    snprintf(h->sb.cgroup, sizeof h->sb.cgroup, "docker/%s", id);
    h->sb.cgroup_version = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 ? 2 : 1;
    char path[160];
    snprintf(path, sizeof path, "/containers/%s/start", id);
    if (docker_api_request(g_gw.loop, "POST", path, NULL, DOCKER_TIMEOUT, on_started, h) < 0)
        start_failed(h, "docker: cannot send the start request");
}

static int
docker_create_async(const sandbox_spec_t *spec, provider_done_fn done, void *ud, err_t *err)
{
    handoff_t *h = xcalloc(1, sizeof *h);
    h->listen_fd = h->handoff_fd = -1;
    h->done = done;
    h->ud = ud;
    sandbox_t *sb = &h->sb;
    snprintf(sb->provider, sizeof sb->provider, "docker");
    snprintf(sb->image, sizeof sb->image, "%s", spec->image ? spec->image : "default");
    if (spec->image && !strcmp(spec->image, IMAGE_HOST)) {
        free(h);
        return err_set(err, ERR_BAD_REQ, "the docker provider runs images: not \"" IMAGE_HOST "\"");
    }
    char **envp = provider_env_new(spec, IMAGE_HOME, err);
    if (!envp) {
        free(h);
        return -ERR_BAD_REQ;
    }
    sandbox_spec_t one_uid = *spec; /* the container runs as one uid: no block to map */
    one_uid.root_inside = false;
    int e = provider_prepare(&one_uid, sb, true, err);
    if (e < 0) {
        provider_env_free(envp);
        free(h);
        return e;
    }
    sb->memory_bytes = spec->memory_bytes > 0 ? spec->memory_bytes : 0; /* Docker enforces them */
    sb->cpu_millicores = spec->cpu_millicores > 0 ? spec->cpu_millicores : 0;
    char passwd[512], group[256];
    snprintf(passwd, sizeof passwd,
             "root:x:0:0:root:/root:/bin/bash\nopenhands:x:%u:%u:openhands:" IMAGE_HOME
             ":/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
             (unsigned)sb->uid, (unsigned)sb->gid);
    snprintf(group, sizeof group, "root:x:0:\nopenhands:x:%u:\nnogroup:x:65534:\n",
             (unsigned)sb->gid);
    if ((e = provider_prepare_home(spec, sb, err)) < 0 ||
        (e = write_file(sb, "passwd", passwd, err)) < 0 ||
        (e = write_file(sb, "group", group, err)) < 0 ||
        (e = write_file(sb, "resolv.conf",
                        "nameserver " NET_RESOLVER_INSIDE "\noptions timeout:2 attempts:2\n",
                        err)) < 0 ||
        (e = h->listen_fd = provider_listen(sb, err)) < 0 ||
        (e = h->handoff_fd =
             provider_listen_at(sb, HANDOFF_NAME, sb->uid, sb->gid, SOCK_NONBLOCK, 4, err)) < 0) {
        provider_env_free(envp);
        provider_generic_destroy(sb, true, NULL);
        h->listen_fd = h->handoff_fd = -1; /* closed on failure by their makers */
        free(h);
        return e;
    }
    uv_poll_init(g_gw.loop, &h->poll, h->handoff_fd);
    h->poll.data = h;
    h->polling = true;
    uv_poll_start(&h->poll, UV_READABLE, on_handoff);
    h->next = handoffs;
    handoffs = h;
    json_object *cfg = container_config(spec, sb, envp);
    provider_env_free(envp);
    char path[160], name[80];
    container_name(sb, name, sizeof name);
    snprintf(path, sizeof path, "/containers/create?name=%s", name);
    e = docker_api_request(g_gw.loop, "POST", path, cfg, DOCKER_TIMEOUT, on_created, h);
    json_object_put(cfg);
    if (e < 0) {
        handoff_free(h);
        provider_generic_destroy(sb, true, NULL);
        return err_set(err, EIO, "docker: cannot send the create request");
    }
    return 0;
}

static int
docker_create(const sandbox_spec_t *spec, sandbox_t *out, err_t *err)
{
    (void)spec;
    (void)out;
    return err_set(err, ENOTSUP, "the docker provider starts sandboxes asynchronously only");
}

typedef struct {
    sandbox_t sb;
    provider_removed_fn done;
    void *ud;
} removal_t;

static void
on_removed(void *ud, long status, json_object *body, const char *error)
{
    (void)body;
    removal_t *r = ud;
    if (status == 204 || status == 404)
        r->done(r->ud, 0, NULL);
    else
        r->done(r->ud, EIO, error && *error ? error : "docker did not remove the container");
    free(r);
}

/* The container removed (force: killed first); the directory is destroy's. */
static int
docker_remove(const sandbox_t *sb, provider_removed_fn done, void *ud, err_t *err)
{
    handoff_t *h = handoff_find(sb->id);
    if (h && h->started) /* one still starting is freed by its own answer */
        handoff_free(h);
    removal_t *r = xcalloc(1, sizeof *r);
    r->sb = *sb;
    r->done = done;
    r->ud = ud;
    char path[160], name[80];
    container_name(sb, name, sizeof name);
    snprintf(path, sizeof path, "/containers/%s?force=1&v=1", name);
    if (docker_api_request(g_gw.loop, "DELETE", path, NULL, DOCKER_TIMEOUT, on_removed, r) < 0) {
        free(r);
        return err_set(err, EIO, "docker: cannot send the remove request");
    }
    return 0;
}

/* What stays on the host once Docker removed the container (its cgroup and processes with it):
 * the directory. Blocking, thread-safe. */
static int
docker_destroy(const sandbox_t *sb, bool purge, err_t *err)
{
    sandbox_t plain = *sb;
    plain.cgroup_version = 0;
    plain.cgroup[0] = '\0';
    plain.pid = 0;
    return provider_generic_destroy(&plain, purge, err);
}

static int
docker_alive(const sandbox_t *sb)
{
    char path[160], name[80], error[256];
    container_name(sb, name, sizeof name);
    snprintf(path, sizeof path, "/containers/%s/json", name);
    json_object *o = NULL;
    long st = docker_api_sync("GET", path, NULL, DOCKER_QUICK_MS, &o, error, sizeof error);
    json_object *state = st == 200 ? json_get(o, "State") : NULL;
    int alive = state && json_get_bool(state, "Running", false);
    json_object_put(o);
    return alive;
}

static int
pause_op(const sandbox_t *sb, const char *op, err_t *err)
{
    char path[160], name[80], error[256];
    container_name(sb, name, sizeof name);
    snprintf(path, sizeof path, "/containers/%s/%s", name, op);
    long st = docker_api_sync("POST", path, NULL, DOCKER_QUICK_MS, NULL, error, sizeof error);
    if (st != 204)
        return err_set(err, EIO, "docker %s: %s", op, error[0] ? error : "failed");
    return 0;
}

static int
docker_pause(const sandbox_t *sb, err_t *err)
{
    return pause_op(sb, "pause", err);
}

static int
docker_resume(const sandbox_t *sb, err_t *err)
{
    return pause_op(sb, "unpause", err);
}

static json_object *
docker_usage(const sandbox_t *sb)
{
    json_object *o = provider_generic_usage(sb);
    json_set_bool(o, "alive", docker_alive(sb) == 1);
    return o;
}

/* The container's network namespace, from its first process (Docker's State.Pid). */
static int
docker_netns_open(const sandbox_t *sb, err_t *err)
{
    char path[160], name[80], error[256];
    container_name(sb, name, sizeof name);
    snprintf(path, sizeof path, "/containers/%s/json", name);
    json_object *o = NULL;
    long st = docker_api_sync("GET", path, NULL, DOCKER_QUICK_MS, &o, error, sizeof error);
    int64_t pid = st == 200 ? json_get_int(json_get(o, "State"), "Pid", 0) : 0;
    json_object_put(o);
    if (pid <= 0)
        return err_set(err, ESRCH, "sandbox %s: its container is not running%s%s", sb->id,
                       error[0] ? ": " : "", error);
    snprintf(path, sizeof path, "/proc/%lld/ns/net", (long long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, errno, "sandbox %s: %s: %s (the gateway must see the host's processes)",
                       sb->id, path, strerror(errno));
    return fd;
}

const provider_t provider_docker = {
    .name = "docker",
    .create = docker_create,
    .create_async = docker_create_async,
    .destroy = docker_destroy,
    .remove = docker_remove,
    .alive = docker_alive,
    .pause = docker_pause,
    .resume = docker_resume,
    .usage = docker_usage,
    .cleanup = docker_orphans_clean,
    .netns_open = docker_netns_open,
};
