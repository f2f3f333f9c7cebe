/* sandbox_disk.c — a sandbox's filesystem on a loop-mounted sparse ext4 image. See the header.
 * Failures undo in reverse order through one exit path; the loop device needs no undoing of
 * its own (autoclear: closing our fd without a mount on it detaches it). */
#include "sandbox_disk.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "disk_template.h"
#include "loopdev.h"

/* Quick to make, cheap to keep: 4 KiB blocks; no reserved blocks (the sandbox gets the whole
 * limit); no resize inode (never resized); a 4 MiB journal, so that deleting files is quick
 * while the discard mount option still hands their blocks back to the host — without a journal
 * ext4 discards synchronously in unlink (rm of 2,000 files: 590 ms instead of 70 ms here), with
 * one it discards after the commit, in the background. Nothing is zeroed: mkfs discards the
 * sparse image (which then reads as zeros) and the mount says noinit_itable, so no kernel
 * thread writes the inode tables later either. An empty disk holds ~240 KiB whatever its size. */
/* clang-format off */
static const char *const mkfs_args[] = {
    "mkfs.ext4", "-q", "-F", "-b", "4096", "-m", "0", "-O", "^resize_inode", "-J", "size=4",
    "-E", "lazy_itable_init=1,lazy_journal_init=1", NULL};
/* clang-format on */
/* nobarrier: the journal asks the loop device for no cache flushes, each of which would be an
 * fsync of the image on the host (a sandbox's fsync-heavy pip or git, and every unmount). The
 * filesystem needs no crash consistency: it is never mounted again after a host crash. */
#define MOUNT_FLAGS (MS_NOSUID | MS_NODEV)
#define MOUNT_DATA  "discard,noinit_itable,nobarrier"

static const struct {
    const char *name;
    mode_t mode;
} layout[] = {{"workspace", 0755}, {"tmp", 01777}, {"var-tmp", 01777}};

/* An attach or mount error that means this host cannot give a sandbox a disk at all (no
 * device nodes or loop driver, no privilege over them, no ext4) becomes -ENOTSUP, with the
 * reason kept in err; anything else is a fault and stays as it is. */
static int
classify(int e, err_t *err)
{
    int code = -e;
    if (code != EACCES && code != EPERM && code != ENOENT && code != ENODEV && code != ENXIO &&
        code != ENOTTY) /* ENOTTY: /dev/loop-control is something else (masked) */
        return e;
    if (err) {
        char why[ERR_MSG_MAX];
        snprintf(why, sizeof why, "%s", err->msg);
        err_set(err, ENOTSUP, "loop devices unavailable: %s", why);
    }
    return -ENOTSUP;
}

static int
path_in(char *out, size_t n, const char *dir, const char *name)
{
    return snprintf(out, n, "%s/%s", dir, name) < (int)n ? 0 : -ENAMETOOLONG;
}

/* mkfs.ext4 from the gateway's PATH or the sbin directories (not in every PATH). */
static int
find_mkfs(char *out, size_t n)
{
    const char *env = getenv("PATH");
    char dirs[1024];
    snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/sbin", env ? env : "/usr/bin:/bin");
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save))
        if (d[0] == '/' && snprintf(out, n, "%s/mkfs.ext4", d) < (int)n && access(out, X_OK) == 0)
            return 0;
    return -ENOENT;
}

/* Runs mkfs.ext4 on image; its complaint (stderr) goes into err. */
static int
mkfs(const char *image, err_t *err)
{
    char exe[PATH_MAX];
    if (find_mkfs(exe, sizeof exe) < 0)
        return err_set(err, ENOTSUP, "mkfs.ext4 not found (install e2fsprogs)");
    const char *argv[sizeof mkfs_args / sizeof mkfs_args[0] + 1];
    size_t k = 0;
    for (; mkfs_args[k]; k++)
        argv[k] = mkfs_args[k];
    argv[k++] = image;
    argv[k] = NULL;
    char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", NULL};
    int out[2];
    if (pipe2(out, O_CLOEXEC) < 0)
        return err_set(err, errno, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(out[0]);
        close(out[1]);
        return err_set(err, e, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        int null_fd = open("/dev/null", O_RDWR);
        if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out[1], 1) < 0 || dup2(out[1], 2) < 0)
            _exit(127);
        execve(exe, (char *const *)argv, envp);
        _exit(127);
    }
    close(out[1]);
    char msg[160] = "", chunk[256];
    size_t len = 0;
    ssize_t r;
    /* Until EOF (mkfs exited); what does not fit in msg is dropped. */
    while ((r = read(out[0], chunk, sizeof chunk)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        size_t take = (size_t)r < sizeof msg - 1 - len ? (size_t)r : sizeof msg - 1 - len;
        memcpy(msg + len, chunk, take);
        len += take;
    }
    msg[len] = '\0';
    close(out[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    for (char *nl; (nl = strchr(msg, '\n'));)
        *nl = ' ';
    return err_set(err, EIO, "mkfs.ext4 %s failed (status %d): %s", image, status, msg);
}

/* workspace/, tmp/, var-tmp/ at the root of the fresh filesystem. No sandbox runs yet, so
 * nothing can race us here; still, only ever relative to the mount's own fd. */
static int
make_layout(const char *mnt, uid_t uid, gid_t gid, err_t *err)
{
    int root = open(mnt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root < 0)
        return err_set(err, errno, "%s: %s", mnt, strerror(errno));
    int e = 0;
    if (fchmod(root, 0711) < 0)
        e = err_set(err, errno, "chmod %s: %s", mnt, strerror(errno));
    for (size_t i = 0; e == 0 && i < sizeof layout / sizeof layout[0]; i++) {
        const char *n = layout[i].name;
        if (mkdirat(root, n, 0700) < 0 || fchmodat(root, n, layout[i].mode, 0) < 0 ||
            fchownat(root, n, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
            e = err_set(err, errno, "%s/%s: %s", mnt, n, strerror(errno));
    }
    close(root);
    return e;
}

int
sandbox_disk_create(const char *dir, int64_t bytes, uid_t uid, gid_t gid, err_t *err)
{
    char image[PATH_MAX], mnt[PATH_MAX], dev[64] = "";
    if (path_in(image, sizeof image, dir, SANDBOX_DISK_IMAGE) < 0 ||
        path_in(mnt, sizeof mnt, dir, SANDBOX_DISK_MOUNT) < 0)
        return err_set(err, ENAMETOOLONG, "disk: %s: path too long", dir);
    if (bytes < SANDBOX_DISK_MIN)
        return err_set(err, ERR_BAD_REQ, "disk: %lld bytes is below the minimum of %lld",
                       (long long)bytes, SANDBOX_DISK_MIN);
    int img = open(image, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (img < 0)
        return err_set(err, errno, "disk image %s: %s", image, strerror(errno));
    int loop = -1, e;
    bool made_mnt = false, mounted = false;
    if (ftruncate(img, (off_t)bytes) < 0) { /* sparse: no block is allocated */
        e = err_set(err, errno, "disk image %s: %s", image, strerror(errno));
        goto fail;
    }
    /* disk_template.h: mkfs.ext4 once per size, its bytes laid into the images after */
    if ((e = disk_template_apply(img, bytes)) < 0) {
        e = err_set(err, -e, "disk image %s: %s", image, strerror(-e));
        goto fail;
    }
    if (e == 0) {
        if ((e = mkfs(image, err)) < 0)
            goto fail;
        disk_template_keep(img, bytes);
    }
    if (mkdir(mnt, 0711) < 0 && errno != EEXIST) {
        e = err_set(err, errno, "mkdir %s: %s", mnt, strerror(errno));
        goto fail;
    }
    made_mnt = true;
    if ((loop = loopdev_attach(img, dev, sizeof dev, err)) < 0) {
        e = classify(loop, err);
        goto fail;
    }
    if (mount(dev, mnt, "ext4", MOUNT_FLAGS, MOUNT_DATA) < 0) {
        e = classify(err_set(err, errno, "mount %s on %s: %s", dev, mnt, strerror(errno)), err);
        goto fail;
    }
    mounted = true;
    if ((e = make_layout(mnt, uid, gid, err)) < 0)
        goto fail;
    close(loop); /* the mount holds the device now; unmounting it detaches the device */
    close(img);
    return 0;
fail:
    if (mounted && umount2(mnt, UMOUNT_NOFOLLOW) < 0)
        umount2(mnt, MNT_DETACH | UMOUNT_NOFOLLOW);
    if (loop >= 0)
        close(loop); /* autoclear: detached with our last reference */
    close(img);
    unlink(image);
    if (made_mnt)
        rmdir(mnt);
    return e;
}

int
sandbox_disk_remove(const char *dir, bool remove_image, err_t *err)
{
    char image[PATH_MAX], mnt[PATH_MAX];
    if (path_in(image, sizeof image, dir, SANDBOX_DISK_IMAGE) < 0 ||
        path_in(mnt, sizeof mnt, dir, SANDBOX_DISK_MOUNT) < 0)
        return err_set(err, ENAMETOOLONG, "disk: %s: path too long", dir);
    /* Until <dir>/disk is no mount point any more (EINVAL), bounded: one mount in practice.
     * A plain unmount first, so that the device is released before we return; lazily only
     * when something on the host still has a file open there. */
    for (int i = 0; i < 4 && sandbox_disk_mounted(dir); i++) {
        /* asked only of a mount point: a gateway without CAP_SYS_ADMIN (compose's, whose
         * sandboxes have no disk) gets EPERM for any path, and its destroys stopped here */
        if (umount2(mnt, UMOUNT_NOFOLLOW) == 0)
            continue;
        if (errno == EBUSY && umount2(mnt, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
            continue;
        if (errno == EINVAL || errno == ENOENT)
            break;
        return err_set(err, errno, "unmount %s: %s", mnt, strerror(errno));
    }
    if (remove_image && unlink(image) < 0 && errno != ENOENT)
        return err_set(err, errno, "remove %s: %s", image, strerror(errno));
    return 0;
}

int
sandbox_disk_mounted(const char *dir)
{
    char mnt[PATH_MAX];
    struct stat d, m;
    if (path_in(mnt, sizeof mnt, dir, SANDBOX_DISK_MOUNT) < 0 || stat(dir, &d) < 0 ||
        lstat(mnt, &m) < 0 || !S_ISDIR(m.st_mode))
        return 0;
    return d.st_dev != m.st_dev;
}

int
sandbox_disk_usage(const char *dir, int64_t *used, int64_t *size)
{
    char mnt[PATH_MAX];
    struct statvfs v;
    if (path_in(mnt, sizeof mnt, dir, SANDBOX_DISK_MOUNT) < 0)
        return -ENAMETOOLONG;
    if (!sandbox_disk_mounted(dir))
        return -ENOENT;
    if (statvfs(mnt, &v) < 0)
        return -errno;
    *size = (int64_t)v.f_blocks * (int64_t)v.f_frsize;
    *used = (int64_t)(v.f_blocks - v.f_bfree) * (int64_t)v.f_frsize;
    return 0;
}
