/* sandbox_etc.c — a sandbox's /etc as one directory of copies. See sandbox_etc.h. */
#include "sandbox_etc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "xalloc.h"

#define RECHECK_NS 1000000000LL /* the host's files looked at again at most once a second */
#define DEPTH_MAX  16
#define COPY_BUF   65536
#define GRACE_S    60  /* a copy handed out, or a .tmp- being built, this recently is kept */
#define PRUNE_MAX  256 /* old copies looked at in one pass; the rest wait for the next one */

static int64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* SHA-256 (hex) of what the copy would be made from. */
static void
signature(const char *const host_paths[], const sandbox_etc_file_t *gen, size_t n, char hex[65])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    for (size_t i = 0; host_paths[i]; i++) {
        struct stat st;
        int64_t f[8] = {0};
        if (stat(host_paths[i], &st) == 0) {
            int64_t v[8] = {(int64_t)st.st_dev,  (int64_t)st.st_ino, (int64_t)st.st_size,
                            (int64_t)st.st_mode, st.st_mtim.tv_sec,  st.st_mtim.tv_nsec,
                            st.st_ctim.tv_sec,   st.st_ctim.tv_nsec};
            memcpy(f, v, sizeof f);
        }
        EVP_DigestUpdate(md, host_paths[i], strlen(host_paths[i]) + 1);
        EVP_DigestUpdate(md, f, sizeof f);
    }
    for (size_t i = 0; i < n; i++) {
        EVP_DigestUpdate(md, gen[i].name, strlen(gen[i].name) + 1);
        EVP_DigestUpdate(md, gen[i].text, strlen(gen[i].text) + 1);
    }
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_DigestFinal_ex(md, d, &len);
    EVP_MD_CTX_free(md);
    for (unsigned i = 0; i < 32 && i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

typedef struct {
    size_t entries;
    err_t *err;
} copy_t;

static int
copy_fd(int from, int to)
{
    char buf[COPY_BUF];
    for (;;) {
        ssize_t n = read(from, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : 0;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(to, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return -errno;
            off += w;
        }
    }
}

static int copy_entry(copy_t *c, int src_dir, const char *name, int dst_dir, const char *as,
                      bool follow, int depth);

static int
copy_dir(copy_t *c, int src, int dst_dir, const char *as, mode_t mode, int depth)
{
    if (mkdirat(dst_dir, as, 0700) < 0 && errno != EEXIST)
        return err_set(c->err, errno, "mkdir %s: %s", as, strerror(errno));
    int dst = openat(dst_dir, as, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int dup = dst >= 0 ? fcntl(src, F_DUPFD_CLOEXEC, 0) : -1;
    DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
    if (!d) {
        int e = err_set(c->err, errno, "copy %s: %s", as, strerror(errno));
        if (dup >= 0)
            close(dup);
        if (dst >= 0)
            close(dst);
        return e;
    }
    int e = 0;
    struct dirent *de;
    while (e == 0 && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            e = copy_entry(c, src, de->d_name, dst, de->d_name, false, depth + 1);
    closedir(d);
    if (e == 0 && fchmod(dst, (mode & 0755) | 0700) < 0)
        e = err_set(c->err, errno, "chmod %s: %s", as, strerror(errno));
    close(dst);
    return e;
}

/* name in src_dir copied as `as` in dst_dir: a directory with its entries, a file's bytes and
 * mode (less set-id bits), a symlink as it is (followed when follow: a named entry); another
 * kind, or a name that is gone, is left out. */
static int
copy_entry(copy_t *c, int src_dir, const char *name, int dst_dir, const char *as, bool follow,
           int depth)
{
    if (depth > DEPTH_MAX || ++c->entries > SANDBOX_ETC_ENTRIES_MAX)
        return err_set(c->err, E2BIG, "/etc copy: more than %d entries or %d levels",
                       SANDBOX_ETC_ENTRIES_MAX, DEPTH_MAX);
    struct stat st;
    if (fstatat(src_dir, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0)
        return 0;
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(src_dir, name, target, sizeof target - 1);
        if (n < 0)
            return 0;
        target[n] = '\0';
        return symlinkat(target, dst_dir, as) < 0
                   ? err_set(c->err, errno, "symlink %s: %s", as, strerror(errno))
                   : 0;
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return 0;
    int src = openat(src_dir, name,
                     (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC |
                         (follow ? 0 : O_NOFOLLOW));
    if (src < 0)
        return 0; /* unreadable to root, or gone: not in the sandbox's /etc either */
    int e;
    if (S_ISDIR(st.st_mode)) {
        e = copy_dir(c, src, dst_dir, as, st.st_mode, depth);
    } else {
        int dst = openat(dst_dir, as, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        e = dst < 0 ? -errno : copy_fd(src, dst);
        if (e == 0 && fchmod(dst, st.st_mode & 0777) < 0)
            e = -errno;
        if (dst >= 0)
            close(dst);
        if (e < 0)
            e = err_set(c->err, -e, "copy %s: %s", as, strerror(-e));
    }
    close(src);
    return e;
}

/* /etc/a/b/c: the directories a/ and a/b/ made 0755 under root; the fd of the last one, and
 * the entry's name in *leaf. */
static int
parents(int root, const char *path, const char **leaf, err_t *err)
{
    const char *rel = path + strlen("/etc/");
    int dir = fcntl(root, F_DUPFD_CLOEXEC, 0);
    for (const char *slash; dir >= 0 && (slash = strchr(rel, '/'));) {
        char part[NAME_MAX + 1];
        snprintf(part, sizeof part, "%.*s", (int)(slash - rel), rel);
        if (mkdirat(dir, part, 0755) < 0 && errno != EEXIST) {
            int e = err_set(err, errno, "mkdir %s: %s", part, strerror(errno));
            close(dir);
            return e;
        }
        int next = openat(dir, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(dir);
        dir = next;
        rel = slash + 1;
    }
    *leaf = rel;
    return dir >= 0 ? dir : err_set(err, errno, "%s: %s", path, strerror(errno));
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int
build(const char *tmp, const char *const host_paths[], const sandbox_etc_file_t *gen, size_t n,
      err_t *err)
{
    int root = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root < 0)
        return err_set(err, errno, "%s: %s", tmp, strerror(errno));
    copy_t c = {.err = err};
    int e = 0;
    for (size_t i = 0; e == 0 && host_paths[i]; i++) {
        const char *leaf = NULL;
        if (strncmp(host_paths[i], "/etc/", 5) != 0 || strstr(host_paths[i], "/../")) {
            e = err_set(err, EINVAL, "%s: not a path under /etc", host_paths[i]);
            break;
        }
        int dir = parents(root, host_paths[i], &leaf, err);
        if (dir < 0) {
            e = dir;
            break;
        }
        e = copy_entry(&c, AT_FDCWD, host_paths[i], dir, leaf, true, 0);
        close(dir);
    }
    for (size_t i = 0; e == 0 && i < n; i++) {
        int fd =
            openat(root, gen[i].name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        size_t len = strlen(gen[i].text);
        if (fd < 0 || write(fd, gen[i].text, len) != (ssize_t)len)
            e = err_set(err, errno ? errno : EIO, "%s: %s", gen[i].name, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    if (e == 0 && fchmod(root, 0755) < 0)
        e = err_set(err, errno, "chmod %s: %s", tmp, strerror(errno));
    close(root);
    return e;
}

/* <state_dir>/.etc, a tmpfs of its own where the gateway may mount one (see the header). */
static int
store_open(const char *state_dir, char *store, size_t cap, err_t *err)
{
    if (snprintf(store, cap, "%s/" SANDBOX_ETC_STORE, state_dir) >= (int)cap)
        return err_set(err, ENAMETOOLONG, "%s: path too long", state_dir);
    if (mkdir(store, 0755) < 0 && errno != EEXIST)
        return err_set(err, errno, "mkdir %s: %s", store, strerror(errno));
    struct stat top, st;
    if (stat(state_dir, &top) < 0 || lstat(store, &st) < 0 || !S_ISDIR(st.st_mode))
        return err_set(err, errno ? errno : ENOTDIR, "%s: not a directory", store);
    if (st.st_dev == top.st_dev && /* not mounted yet (a fresh state directory, a reboot) */
        mount("sandpipe-etc", store, "tmpfs", MS_NOSUID | MS_NODEV, SANDBOX_ETC_TMPFS) < 0 &&
        errno != EPERM)
        return err_set(err, errno, "mount tmpfs on %s: %s", store, strerror(errno));
    return 0;
}

/* The old copies to remove: entries of the store other than `current`, untouched for GRACE_S. */
typedef struct {
    char name[NAME_MAX + 1];
    bool in_use;
} old_copy_t;

static size_t
old_copies(const char *store, const char *current, old_copy_t *old, size_t cap)
{
    DIR *d = opendir(store);
    if (!d)
        return 0;
    size_t n = 0;
    time_t now = time(NULL);
    struct dirent *de;
    while (n < cap && (de = readdir(d))) {
        struct stat st;
        if (strncmp(de->d_name, SANDBOX_ETC_PREFIX, strlen(SANDBOX_ETC_PREFIX)) != 0 ||
            strcmp(de->d_name, current) == 0 ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
            now - st.st_mtim.tv_sec < GRACE_S)
            continue;
        snprintf(old[n].name, sizeof old[n].name, "%s", de->d_name);
        old[n++].in_use = false;
    }
    closedir(d);
    return n;
}

/* A mountinfo line's root (4th field) names an old copy as a path component ("/etc-<sig>" on
 * the store's tmpfs, ".../.etc/etc-<sig>" where the store is a plain directory): in use. */
static void
mark_in_use(const char *line, old_copy_t *old, size_t n)
{
    char root[PATH_MAX];
    if (sscanf(line, "%*s %*s %*s %4095s", root) != 1)
        return;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(old[i].name);
        for (const char *p = strstr(root, old[i].name); p; p = strstr(p + 1, old[i].name))
            if (p > root && p[-1] == '/' && (p[len] == '/' || p[len] == '\0'))
                old[i].in_use = true;
    }
}

/* Every mount namespace's mountinfo read once (by its /proc/PID/ns/mnt inode). false when
 * /proc cannot be read or a live process's mountinfo cannot: then nothing is known unused. */
static bool
scan_mounts(old_copy_t *old, size_t n)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return false;
    ino_t *seen = NULL;
    size_t n_seen = 0, cap_seen = 0, line_cap = 0;
    char *line = NULL;
    bool ok = true;
    struct dirent *de;
    while (ok && (de = readdir(proc))) {
        char path[64];
        struct stat ns;
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%.20s/ns/mnt", de->d_name);
        bool known = stat(path, &ns) == 0; /* may be refused where mountinfo is not */
        size_t i = 0;
        while (known && i < n_seen && seen[i] != ns.st_ino)
            i++;
        if (known && i < n_seen)
            continue;
        snprintf(path, sizeof path, "/proc/%.20s/mountinfo", de->d_name);
        FILE *f = fopen(path, "re");
        if (!f) {
            /* gone since readdir, or exiting (a zombie has no mount namespace: EINVAL) */
            ok = errno == ENOENT || errno == ESRCH || errno == EINVAL;
            continue;
        }
        while (getline(&line, &line_cap, f) > 0)
            mark_in_use(line, old, n);
        fclose(f);
        if (!known)
            continue;
        if (n_seen == cap_seen) {
            cap_seen = cap_seen ? 2 * cap_seen : 64;
            seen = xrealloc(seen, cap_seen * sizeof *seen);
        }
        seen[n_seen++] = ns.st_ino;
    }
    free(line);
    free(seen);
    closedir(proc);
    return ok;
}

/* Remove the copies no sandbox binds: run when a version is made and at the first call, as
 * several gateways share the store. Best effort: an error leaves a copy for the next pass. */
static void
prune(const char *store, const char *current)
{
    static old_copy_t old[PRUNE_MAX];
    size_t n = old_copies(store, current, old, PRUNE_MAX);
    if (n == 0 || !scan_mounts(old, n))
        return;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX + NAME_MAX + 2];
        if (old[i].in_use)
            continue;
        snprintf(path, sizeof path, "%.4095s/%.255s", store, old[i].name);
        nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    }
}

static int
etc_dir(const char *state_dir, const char *const host_paths[], const sandbox_etc_file_t *generated,
        size_t n, char *out, size_t cap, err_t *err)
{
    static char last[PATH_MAX + 64], last_state[PATH_MAX];
    static int64_t checked;
    if (last[0] && now_ns() - checked < RECHECK_NS && strcmp(last_state, state_dir) == 0 &&
        (size_t)snprintf(out, cap, "%s", last) < cap)
        return 0;
    char hex[65] = "", store[PATH_MAX], path[PATH_MAX + 64], tmp[PATH_MAX + 80];
    int e = store_open(state_dir, store, sizeof store, err);
    if (e < 0)
        return e;
    signature(host_paths, generated, n, hex);
    if (snprintf(path, sizeof path, "%s/" SANDBOX_ETC_PREFIX "%.32s", store, hex) >=
            (int)sizeof path ||
        snprintf(out, cap, "%s", path) >= (int)cap)
        return err_set(err, ENAMETOOLONG, "%s: path too long", state_dir);
    struct stat st;
    bool made = false;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW); /* handed out: kept GRACE_S */
    } else {
        snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path);
        if (!mkdtemp(tmp))
            return err_set(err, errno, "mkdtemp %s: %s", tmp, strerror(errno));
        e = build(tmp, host_paths, generated, n, err);
        if (e == 0 && rename(tmp, path) < 0 && errno != EEXIST && errno != ENOTEMPTY)
            e = err_set(err, errno, "rename %s: %s", tmp, strerror(errno));
        if (access(tmp, F_OK) == 0) /* not renamed: failed, or another gateway made it first */
            nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        if (e < 0)
            return e;
        made = true;
    }
    if (made || !last[0])
        prune(store, path + strlen(store) + 1);
    snprintf(last, sizeof last, "%s", path);
    snprintf(last_state, sizeof last_state, "%s", state_dir);
    checked = now_ns();
    return 0;
}

int
sandbox_etc_dir(const char *state_dir, const char *const host_paths[],
                const sandbox_etc_file_t *generated, size_t n, char *out, size_t cap, err_t *err)
{
    /* starts run on several threads (gateway/sandbox_start.h): one makes or checks the copy,
     * the others wait for its answer */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    int e = etc_dir(state_dir, host_paths, generated, n, out, cap, err);
    pthread_mutex_unlock(&lock);
    return e;
}
