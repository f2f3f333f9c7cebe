/* sandbox_host.c — a sandbox's host facts as JSON, kept in its ctl directory (sandbox_host.h). */
#include "sandbox_host.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "json_util.h"
#include "sandbox_disk.h"

#define HOST_FILE_MAX (64 * 1024) /* ours is well under 4 KiB */

json_object *
sandbox_to_json(const sandbox_t *sb)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "id", sb->id);
    json_set_str(o, "provider", sb->provider);
    json_set_str(o, "image", sb->image[0] ? sb->image : IMAGE_HOST);
    json_set_int(o, "pid", sb->pid);
    json_set_int(o, "start_time", (int64_t)sb->start_time);
    json_set_str(o, "dir", sb->dir);
    json_set_str(o, "socket_path", sb->socket_path);
    json_set_str(o, "workspace", sb->workspace);
    json_set_str(o, "cgroup", sb->cgroup);
    json_set_int(o, "cgroup_version", sb->cgroup_version);
    json_set_int(o, "disk_bytes", sb->disk_bytes);
    json_set_int(o, "memory_bytes", sb->memory_bytes);
    json_set_int(o, "cpu_millicores", sb->cpu_millicores);
    if (sb->warning[0])
        json_set_str(o, "warning", sb->warning);
    json_set_int(o, "uid", sb->uid);
    json_set_int(o, "gid", sb->gid);
    json_set_int(o, "uid_range", sb->uid_range ? sb->uid_range : 1);
    return o;
}

static int
copy_str(json_object *o, const char *key, char *dst, size_t n, bool required, err_t *err)
{
    json_object *v = json_get(o, key);
    if (!v && !required)
        return 0;
    if (!v || !json_object_is_type(v, json_type_string))
        return err_set(err, ERR_BAD_REQ, "sandbox: '%s' must be a string", key);
    if ((size_t)json_object_get_string_len(v) >= n)
        return err_set(err, ERR_BAD_REQ, "sandbox: '%s' is too long", key);
    memcpy(dst, json_object_get_string(v), (size_t)json_object_get_string_len(v) + 1);
    return 0;
}

int
sandbox_from_json(json_object *o, sandbox_t *sb, err_t *err)
{
    memset(sb, 0, sizeof *sb);
    if (!o || !json_object_is_type(o, json_type_object))
        return err_set(err, ERR_BAD_REQ, "sandbox: not a JSON object");
    if (copy_str(o, "id", sb->id, sizeof sb->id, true, err) < 0 ||
        copy_str(o, "provider", sb->provider, sizeof sb->provider, true, err) < 0 ||
        copy_str(o, "image", sb->image, sizeof sb->image, false, err) < 0 ||
        copy_str(o, "dir", sb->dir, sizeof sb->dir, false, err) < 0 ||
        copy_str(o, "workspace", sb->workspace, sizeof sb->workspace, false, err) < 0 ||
        copy_str(o, "cgroup", sb->cgroup, sizeof sb->cgroup, false, err) < 0 ||
        copy_str(o, "warning", sb->warning, sizeof sb->warning, false, err) < 0)
        return -ERR_BAD_REQ;
    const char *ints[] = {"pid",        "start_time",   "cgroup_version",
                          "disk_bytes", "memory_bytes", "cpu_millicores",
                          "uid",        "gid",          "uid_range"};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        json_object *v = json_get(o, ints[i]);
        if (v && !json_object_is_type(v, json_type_int))
            return err_set(err, ERR_BAD_REQ, "sandbox: '%s' must be an integer", ints[i]);
    }
    int64_t pid = json_get_int(o, "pid", 0), ver = json_get_int(o, "cgroup_version", 0);
    int64_t st = json_get_int(o, "start_time", 0), disk = json_get_int(o, "disk_bytes", 0);
    if (pid < 0 || pid > INT32_MAX || ver < 0 || ver > 2 || st < 0 || disk < 0)
        return err_set(err, ERR_BAD_REQ,
                       "sandbox: pid, start_time, cgroup_version or disk_bytes out of range");
    sb->disk_bytes = disk;
    /* what it runs under, for showing only (a record from before has none: 0) */
    int64_t mem = json_get_int(o, "memory_bytes", 0), cpu = json_get_int(o, "cpu_millicores", 0);
    sb->memory_bytes = mem > 0 ? mem : 0;
    sb->cpu_millicores = cpu > 0 ? cpu : 0;
    /* A record without them is from before per-sandbox uids: the gateway's (root's). */
    int64_t uid = json_get_int(o, "uid", 0), gid = json_get_int(o, "gid", 0);
    if (uid < 0 || uid >= UINT32_MAX || gid < 0 || gid >= UINT32_MAX)
        return err_set(err, ERR_BAD_REQ, "sandbox: uid or gid out of range");
    sb->uid = (uid_t)uid;
    sb->gid = (gid_t)gid;
    /* Before blocks, one uid: the sandbox's user. */
    int64_t range = json_get_int(o, "uid_range", 1);
    if (range != 1 && range != SANDBOX_UID_WIDTH)
        return err_set(err, ERR_BAD_REQ, "sandbox: uid_range must be 1 or %u", SANDBOX_UID_WIDTH);
    sb->uid_range = (uint32_t)range;
    sb->pid = (pid_t)pid;
    sb->start_time = (uint64_t)st;
    sb->cgroup_version = (int)ver;
    /* Never the stored path: derived from dir, it is always the host-only one (a record from
     * an older layout, whose socket sat in a directory the sandbox could write, then finds
     * nothing there and its session is reported disconnected). */
    sandbox_socket_path(sb);
    return 0;
}

/* ---- the file in <dir>/ctl ---- */

int
sandbox_host_save(const sandbox_t *sb, const char *session, err_t *err)
{
    char ctl[PATH_MAX + 16];
    snprintf(ctl, sizeof ctl, "%s/" PROVIDER_CTL_DIR, sb->dir);
    int dfd = open(ctl, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return err_set(err, errno, "open %s: %s", ctl, strerror(errno));
    json_object *o = sandbox_to_json(sb);
    json_set_str(o, "session", session ? session : "");
    size_t len;
    const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
    int fd = openat(dfd, SANDBOX_HOST_FILE ".new",
                    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    int e = 0;
    if (fd < 0 || io_write_all(fd, text, len) < 0 || close(fd) < 0 ||
        renameat(dfd, SANDBOX_HOST_FILE ".new", dfd, SANDBOX_HOST_FILE) < 0) {
        e = err_set(err, errno, "%s/" SANDBOX_HOST_FILE ": %s", ctl, strerror(errno));
        if (fd >= 0)
            unlinkat(dfd, SANDBOX_HOST_FILE ".new", 0);
    }
    json_object_put(o);
    close(dfd);
    return e;
}

/* <state_dir>/<id>/ctl/sandbox.json, each step without following a link; the directory and
 * the file must be the gateway's user's, the directory no one else's to enter. */
static int
read_host_file(const char *state_dir, const char *id, char *buf, size_t cap, size_t *n, err_t *err)
{
    int sfd = open(state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int dfd = sfd >= 0 ? openat(sfd, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    int cfd = dfd >= 0
                  ? openat(dfd, PROVIDER_CTL_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                  : -1;
    int fd = cfd >= 0
                 ? openat(cfd, SANDBOX_HOST_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                 : -1;
    int saved = errno, e = 0;
    struct stat dst, fst;
    if (fd < 0)
        e = err_set(err, saved == ENOENT || saved == ENOTDIR || saved == ELOOP ? ENOENT : saved,
                    "sandbox %s is not in this host's state directory (%s)", id, strerror(saved));
    else if (fstat(cfd, &dst) < 0 || fstat(fd, &fst) < 0 || dst.st_uid != geteuid() ||
             (dst.st_mode & 077) || fst.st_uid != geteuid() || !S_ISREG(fst.st_mode))
        e = err_set(err, EACCES, "sandbox %s: its host record is not the gateway's own", id);
    ssize_t r = 0;
    *n = 0;
    while (e == 0 && *n < cap &&
           ((r = read(fd, buf + *n, cap - *n)) > 0 || (r < 0 && errno == EINTR)))
        if (r > 0)
            *n += (size_t)r;
    if (e == 0 && (r < 0 || *n == cap))
        e = err_set(err, EIO, "sandbox %s: its host record cannot be read", id);
    for (int f = 0, fds[] = {fd, cfd, dfd, sfd}; f < 4; f++)
        if (fds[f] >= 0)
            close(fds[f]);
    return e;
}

int
sandbox_from_record(json_object *ref, const char *state_dir, const char *session, sandbox_t *sb,
                    err_t *err)
{
    memset(sb, 0, sizeof *sb);
    const char *id = json_get_str(ref, "id", NULL);
    if (!id || !provider_safe_id(id, 48))
        return err_set(err, ERR_BAD_REQ, "sandbox: the record names no valid sandbox id");
    char *buf = malloc(HOST_FILE_MAX);
    size_t n = 0;
    int e = buf ? read_host_file(state_dir, id, buf, HOST_FILE_MAX, &n, err)
                : err_set(err, ENOMEM, "out of memory");
    json_object *o = e == 0 ? json_parse(buf, n, err) : NULL;
    free(buf);
    if (e < 0)
        return e;
    if (!o)
        return -ERR_BAD_REQ;
    const char *held = json_get_str(o, "session", ""); /* o's: read before it is put */
    bool unbound = !held[0];
    char real[PATH_MAX];
    if (sandbox_from_json(o, sb, err) < 0)
        e = -ERR_BAD_REQ;
    else if (strcmp(sb->id, id) != 0)
        e = err_set(err, ERR_BAD_REQ, "sandbox %s: its host record is another's", id);
    else if (!unbound && (!session || strcmp(held, session) != 0))
        e = err_set(err, EACCES, "sandbox %s is another session's", id);
    else if (!realpath(state_dir, real))
        e = err_set(err, errno, "state_dir %s: %s", state_dir, strerror(errno));
    json_object_put(o);
    if (e < 0)
        return e;
    /* Where it is: derived, as provider_prepare made it, never a path out of a record. */
    if (snprintf(sb->dir, sizeof sb->dir, "%s/%s", real, id) >= (int)sizeof sb->dir ||
        snprintf(sb->workspace, sizeof sb->workspace,
                 sb->disk_bytes > 0 ? "%s/" SANDBOX_DISK_MOUNT "/workspace" : "%s/workspace",
                 sb->dir) >= (int)sizeof sb->workspace ||
        sandbox_socket_path(sb) < 0)
        return err_set(err, ENAMETOOLONG, "state_dir path too long");
    if (session && unbound)
        return sandbox_host_save(sb, session, err);
    return 0;
}
