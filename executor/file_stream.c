/* file_stream.c — upload, download, watch. See file_stream.h. */
#include "file_stream.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor.h"
#include "files.h"
#include "frame.h"
#include "json_util.h"
#include "xalloc.h"

#define WATCH_MAX_DIRS 4096
/* queued bytes on the connection before watch events are counted, not sent */
#define WATCH_BACKLOG_MAX (4u << 20)

static int
resolve(channel_t *ch, json_object *req, const char *key, int flags, char out[PATH_MAX])
{
    err_t err = {0};
    char path[PATH_MAX];
    int n = json_get_name(req, key, path, sizeof path, &err); /* key_b64: the exact bytes */
    if (n < 0) {
        if (n == -ERR_NOT_FOUND)
            snprintf(err.msg, sizeof err.msg, "missing string \"%s\"", key);
        chan_close_error(ch, ERR_BAD_REQ, err.msg);
        return -1;
    }
    if (path_resolve(&g_exec.roots, json_get_str(req, "cwd", g_exec.workspace), path, flags, out,
                     &err) < 0) {
        chan_close_error(ch, err.code, err.msg);
        return -1;
    }
    return 0;
}

/* ---- upload ---- */

typedef struct {
    atomic_file_t af;
    uint64_t size, max;
} upload_t;

static void
upload_fail(channel_t *ch, upload_t *u, int code, const char *msg)
{
    atomic_file_abort(&u->af);
    free(u);
    ch->owner = NULL;
    chan_close_error(ch, code, msg);
}

static void
on_upload_data(channel_t *ch, const uint8_t *p, size_t n)
{
    upload_t *u = ch->owner;
    err_t err = {0};
    if (!u)
        return;
    if (u->max && u->size + n > u->max) {
        char msg[96];
        snprintf(msg, sizeof msg, "upload exceeds max_bytes (%llu)", (unsigned long long)u->max);
        upload_fail(ch, u, ERR_TOO_BIG, msg);
        return;
    }
    if (atomic_file_write(&u->af, p, n, &err) < 0) {
        upload_fail(ch, u, err.code, err.msg);
        return;
    }
    u->size += n;
    chan_grant(ch, n);
}

static void
on_upload_eof(channel_t *ch)
{
    upload_t *u = ch->owner;
    err_t err = {0};
    if (!u)
        return;
    if (atomic_file_commit(&u->af, &err) < 0) {
        upload_fail(ch, u, err.code, err.msg);
        return;
    }
    json_object *r = json_object_new_object();
    json_set_name(r, "path", u->af.path);
    json_set_int(r, "size", (int64_t)u->size);
    free(u);
    ch->owner = NULL;
    chan_close(ch, r);
}

static void
on_upload_detach(channel_t *ch)
{
    upload_t *u = ch->owner;
    if (u) {
        atomic_file_abort(&u->af); /* an upload that did not finish leaves nothing behind */
        free(u);
    }
}

static const channel_ops_t upload_ops = {
    .data = on_upload_data, .eof = on_upload_eof, .detach = on_upload_detach};

void
file_op_upload(channel_t *ch, json_object *req)
{
    char path[PATH_MAX];
    if (resolve(ch, req, "path", PATH_FOLLOW, path) < 0)
        return;
    const char *mode_s = json_get_str(req, "mode", NULL);
    mode_t mode = mode_s ? (mode_t)strtol(mode_s, NULL, 8) : 0644;
    upload_t *u = xcalloc(1, sizeof *u);
    u->max = (uint64_t)json_get_int(req, "max_bytes", 0);
    err_t err = {0};
    if (json_get_bool(req, "parents", true)) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
            *p = '\0';
            mkdir(dir, 0755);
            *p = '/';
        }
    }
    if (atomic_file_open(&u->af, path, mode, &err) < 0) {
        free(u);
        chan_close_error(ch, err.code, err.msg);
        return;
    }
    ch->ops = &upload_ops;
    ch->owner = u;
}

/* ---- download ---- */

typedef struct {
    int fd;
    uint64_t sent, remaining;
    char path[PATH_MAX];
} download_t;

static void
download_pump(channel_t *ch)
{
    download_t *d = ch->owner;
    static char tmp[FRAME_DATA_CHUNK];
    while (d && d->remaining && chan_credit(ch) > 0) {
        size_t want = sizeof tmp;
        if ((int64_t)want > chan_credit(ch))
            want = (size_t)chan_credit(ch);
        if (want > d->remaining)
            want = (size_t)d->remaining;
        ssize_t n = read(d->fd, tmp, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            d->remaining = 0; /* the file shrank while we read it: send what there was */
            break;
        }
        chan_send_data(ch, 0, tmp, (size_t)n);
        d->sent += (uint64_t)n;
        d->remaining -= (uint64_t)n;
    }
    if (d && !d->remaining) {
        json_object *r = json_object_new_object();
        json_set_name(r, "path", d->path);
        json_set_int(r, "bytes", (int64_t)d->sent);
        close(d->fd);
        free(d);
        ch->owner = NULL;
        chan_close(ch, r);
    }
}

static void
on_download_detach(channel_t *ch)
{
    download_t *d = ch->owner;
    if (d) {
        close(d->fd);
        free(d);
    }
}

static const channel_ops_t download_ops = {.resume = download_pump, .detach = on_download_detach};

void
file_op_download(channel_t *ch, json_object *req)
{
    char path[PATH_MAX];
    if (resolve(ch, req, "path", PATH_FOLLOW, path) < 0)
        return;
    /* O_NONBLOCK: a FIFO the sandbox put there opens at once (and is refused below) instead of
     * holding the executor until a writer comes; a regular file reads the same either way. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        char msg[PATH_MAX + 64];
        snprintf(msg, sizeof msg, "%s: %s", path, strerror(e));
        if (fd >= 0)
            close(fd);
        chan_close_error(ch, e, msg);
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        chan_close_error(ch, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "not a regular file");
        return;
    }
    int64_t off = json_get_int(req, "offset", 0), len = json_get_int(req, "length", -1);
    if (off < 0 || off > st.st_size) {
        close(fd);
        chan_close_error(ch, ERR_BAD_REQ, "offset outside the file");
        return;
    }
    lseek(fd, off, SEEK_SET);
    download_t *d = xcalloc(1, sizeof *d);
    d->fd = fd;
    d->remaining = (uint64_t)(st.st_size - off);
    if (len >= 0 && (uint64_t)len < d->remaining)
        d->remaining = (uint64_t)len;
    snprintf(d->path, sizeof d->path, "%s", path);
    ch->ops = &download_ops;
    ch->owner = d;
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "size");
    json_set_int(ev, "size", (int64_t)st.st_size);
    json_set_int(ev, "bytes", (int64_t)d->remaining);
    chan_send_json(ch, ev);
    json_object_put(ev);
    download_pump(ch);
}

/* ---- watch ---- */

typedef struct {
    int fd;
    watch_t w;
    channel_t *ch;
    bool recursive, details;
    int ndirs;
    int wd[WATCH_MAX_DIRS];
    char *dir[WATCH_MAX_DIRS];
    uint64_t dropped;
} dirwatch_t;

static void
watch_add_tree(dirwatch_t *dw, const char *path, int depth)
{
    if (dw->ndirs >= WATCH_MAX_DIRS)
        return;
    int wd = inotify_add_watch(dw->fd, path,
                               IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM |
                                   IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_ONLYDIR);
    if (wd < 0)
        return;
    dw->wd[dw->ndirs] = wd;
    dw->dir[dw->ndirs++] = xstrdup(path);
    if (!dw->recursive || depth > 32)
        return;
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char sub[PATH_MAX];
        if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
            watch_add_tree(dw, sub, depth + 1);
    }
    closedir(d);
}

static const char *
event_name(uint32_t m)
{
    if (m & IN_CREATE)
        return "created";
    if (m & IN_DELETE)
        return "deleted";
    if (m & IN_MOVED_FROM)
        return "moved_from";
    if (m & IN_MOVED_TO)
        return "moved_to";
    if (m & IN_CLOSE_WRITE)
        return "closed_write";
    if (m & IN_MODIFY)
        return "modified";
    if (m & IN_ATTRIB)
        return "attrib";
    if (m & IN_DELETE_SELF)
        return "deleted_self";
    if (m & IN_Q_OVERFLOW)
        return "overflow";
    return "other";
}

static void
on_inotify(watch_t *w, uint32_t events)
{
    (void)events;
    dirwatch_t *dw = w->data;
    char b[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n = read(dw->fd, b, sizeof b);
    for (char *p = b; n > 0 && p < b + n;) {
        struct inotify_event *ie = (struct inotify_event *)p;
        p += sizeof *ie + ie->len;
        if (ie->mask & IN_IGNORED)
            continue;
        const char *dir = "";
        for (int i = 0; i < dw->ndirs; i++)
            if (dw->wd[i] == ie->wd)
                dir = dw->dir[i];
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s%s%s", dir, ie->len ? "/" : "", ie->len ? ie->name : "");
        if (dw->recursive && (ie->mask & (IN_CREATE | IN_MOVED_TO)) && (ie->mask & IN_ISDIR))
            watch_add_tree(dw, path, 0);
        if (conn_pending(dw->ch->conn) > WATCH_BACKLOG_MAX) {
            dw->dropped++; /* the client is not reading: count, and say so when it catches up */
            continue;
        }
        json_object *ev = json_object_new_object();
        if (dw->dropped) {
            json_set_str(ev, "event", "overflow");
            json_set_int(ev, "dropped", (int64_t)dw->dropped);
            chan_send_json(dw->ch, ev);
            json_object_put(ev);
            dw->dropped = 0;
            ev = json_object_new_object();
        }
        json_set_str(ev, "event", event_name(ie->mask));
        json_set_name(ev, "path", path);
        json_set_bool(ev, "is_dir", (ie->mask & IN_ISDIR) != 0);
        err_t serr = {0};
        json_object *st = dw->details ? files_stat_path(path, true, &serr) : NULL;
        if (st) /* what the path is now, when it still is */
            json_set(ev, "stat", st);
        chan_send_json(dw->ch, ev);
        json_object_put(ev);
    }
}

static void
dirwatch_free(void *arg)
{
    dirwatch_t *dw = arg;
    for (int i = 0; i < dw->ndirs; i++)
        free(dw->dir[i]);
    free(dw);
}

static void
on_watch_detach(channel_t *ch)
{
    dirwatch_t *dw = ch->owner;
    if (!dw)
        return;
    loop_watch_del(g_exec.loop, &dw->w);
    close(dw->fd);
    loop_defer_free(g_exec.loop, dw, dirwatch_free);
}

static const channel_ops_t watch_ops = {.detach = on_watch_detach};

void
file_op_watch(channel_t *ch, json_object *req)
{
    char path[PATH_MAX];
    if (resolve(ch, req, "path", PATH_FOLLOW, path) < 0)
        return;
    struct stat st;
    char msg[PATH_MAX + 80];
    if (stat(path, &st) < 0) {
        int e = errno;
        snprintf(msg, sizeof msg, "watch %s: %s", path, strerror(e));
        chan_close_error(ch, e, msg);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(msg, sizeof msg, "watch %s: not a directory (file.watch needs one)", path);
        chan_close_error(ch, ENOTDIR, msg);
        return;
    }
    dirwatch_t *dw = xcalloc(1, sizeof *dw);
    dw->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (dw->fd < 0) {
        free(dw);
        chan_close_error(ch, errno, "inotify_init1 failed");
        return;
    }
    dw->ch = ch;
    dw->recursive = json_get_bool(req, "recursive", false);
    dw->details = json_get_bool(req, "details", false);
    watch_add_tree(dw, path, 0);
    loop_watch_add(g_exec.loop, &dw->w, dw->fd, EPOLLIN, on_inotify, dw);
    ch->ops = &watch_ops;
    ch->owner = dw;
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "watching");
    json_set_name(ev, "path", path);
    json_set_int(ev, "directories", dw->ndirs);
    chan_send_json(ch, ev);
    json_object_put(ev);
}
