/* sandbox_root.c — an image's root, idmapped and (on the sandbox's disk) writable. See
 * sandbox_root.h. */
#include "sandbox_root.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox_disk.h"
#include "sandbox_userns.h"

/* A detached, read-only copy of the mount at path whose ids the namespace userns_fd maps. */
static int
idmapped_clone(const char *path, int userns_fd, err_t *err)
{
    int t = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (t < 0)
        return err_set(err, errno, "open_tree %s: %s", path, strerror(errno));
    struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                       MOUNT_ATTR_NODEV,
                           .userns_fd = (uint64_t)userns_fd};
    if (mount_setattr(t, "", AT_EMPTY_PATH, &a, sizeof a) < 0) {
        int e = err_set(err, errno, "idmapped mount of %s: %s", path, strerror(errno));
        close(t);
        return e;
    }
    return t;
}

/* <disk>/name, made (mode, owned by uid:gid) if missing. */
static int
layer_dir(const char *disk, const char *name, mode_t mode, uid_t uid, gid_t gid, char *out,
          size_t n, err_t *err)
{
    if (snprintf(out, n, "%s/%s", disk, name) >= (int)n)
        return err_set(err, ENAMETOOLONG, "%s/%s: path too long", disk, name);
    if (mkdir(out, mode) < 0 && errno != EEXIST)
        return err_set(err, errno, "mkdir %s: %s", out, strerror(errno));
    struct stat st;
    if (lstat(out, &st) < 0 || !S_ISDIR(st.st_mode) || lchown(out, uid, gid) < 0)
        return err_set(err, errno ? errno : ENOTDIR, "%s: not a directory of ours", out);
    return 0;
}

int
sandbox_root_mount(const sandbox_t *sb, const char *rootfs, int userns_fd, err_t *err)
{
    char mnt[PATH_MAX], disk[PATH_MAX], upper[PATH_MAX], work[PATH_MAX], opts[3 * PATH_MAX];
    if (snprintf(mnt, sizeof mnt, "%s/" SANDBOX_ROOT_MOUNT, sb->dir) >= (int)sizeof mnt ||
        snprintf(disk, sizeof disk, "%s/" SANDBOX_DISK_MOUNT, sb->dir) >= (int)sizeof disk)
        return err_set(err, ENAMETOOLONG, "%s: path too long", sb->dir);
    if (mkdir(mnt, 0755) < 0 && errno != EEXIST)
        return err_set(err, errno, "mkdir %s: %s", mnt, strerror(errno));
    int lower = idmapped_clone(rootfs, userns_fd, err);
    if (lower < 0)
        return lower;
    int e = 0;
    if (sb->disk_bytes <= 0) { /* no disk to write on: the image read-only, as root's */
        if (move_mount(lower, "", AT_FDCWD, mnt, MOVE_MOUNT_F_EMPTY_PATH) < 0)
            e = err_set(err, errno, "mount %s: %s", mnt, strerror(errno));
        close(lower);
        return e;
    }
    /* The layer's top is the sandbox's "/": root inside's, 0755, as the image's. */
    if ((e = layer_dir(disk, SANDBOX_ROOT_UPPER, 0755, sb->uid, sb->gid, upper, sizeof upper,
                       err)) < 0 ||
        (e = layer_dir(disk, SANDBOX_ROOT_WORK, 0700, 0, 0, work, sizeof work, err)) < 0) {
        close(lower);
        return e;
    }
    /* The detached idmapped copy is the lower layer by its fd (overlayfs keeps its own
     * reference): it is never attached anywhere a process could reach it. */
    snprintf(opts, sizeof opts, "lowerdir=/proc/self/fd/%d,upperdir=%s,workdir=%s", lower, upper,
             work);
    if (mount("overlay", mnt, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
        e = err_set(err, errno, "overlay on %s: %s", mnt, strerror(errno));
    close(lower);
    return e;
}

void
sandbox_root_unmount(const char *dir)
{
    char mnt[PATH_MAX];
    if (snprintf(mnt, sizeof mnt, "%s/" SANDBOX_ROOT_MOUNT, dir) >= (int)sizeof mnt)
        return;
    while (umount2(mnt, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
        ; /* stacked mounts too, should there be any */
}

bool
sandbox_root_can_idmap(const char *path, err_t *err)
{
    int ns = sandbox_userns_open(PROVIDER_UID_BASE, PROVIDER_UID_BASE, 1, err);
    if (ns < 0)
        return false;
    int t = idmapped_clone(path, ns, err);
    close(ns);
    if (t < 0)
        return false;
    close(t);
    return true;
}
