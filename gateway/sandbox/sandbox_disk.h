/* sandbox_disk.h — a sandbox's own filesystem, so that its disk use has a limit.
 *
 * Layout under the sandbox directory <dir>: a sparse image disk.img of the limit's size,
 * formatted ext4 (mkfs.ext4), attached to a loop device (loopdev.h, autoclear) and mounted
 * nosuid,nodev at <dir>/disk, holding workspace/, tmp/ and var-tmp/ owned by the sandbox's
 * user; the provider binds them at /workspace, /tmp and /var/tmp. Writing past the limit gives
 * ENOSPC inside the sandbox and costs the host nothing more: the image holds only the blocks
 * in use (sparse, and mounted with discard, so deleted files hand their blocks back a few
 * seconds later; nothing zeroed at creation). /tmp no longer lives in memory, so filling it is a
 * full disk, not an OOM kill. The image is on the host side of <dir>, never inside the sandbox.
 *
 * The mount is made in the gateway's mount namespace before the sandbox starts (bwrap binds
 * from it) and outlives the gateway, as the sandbox does: a restarted gateway finds it there.
 * Needs root: where loop devices, mounting or mkfs.ext4 are unavailable (an unprivileged
 * container, a user namespace) create says so with -ENOTSUP and the caller degrades.
 * Synchronous (mkfs.ext4 is one fork/exec, ~10 ms for any size, run once per size: the images
 * after get its bytes from memory, disk_template.h; see docs/benchmarks.md). */
#ifndef SP_SANDBOX_DISK_H
#define SP_SANDBOX_DISK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

#define SANDBOX_DISK_MIN   (16LL << 20) /* smallest disk; ext4 needs a few MiB of metadata */
#define SANDBOX_DISK_MOUNT "disk"       /* <dir>/disk: the mount point */
#define SANDBOX_DISK_IMAGE "disk.img"   /* <dir>/disk.img: the image */

/* Makes <dir>/disk.img of bytes (>= SANDBOX_DISK_MIN), formats, attaches and mounts it at
 * <dir>/disk with workspace/ (0755), tmp/ and var-tmp/ (1777) owned by uid:gid. Returns 0;
 * -ENOTSUP with err saying why when loop devices or ext4 cannot be used on this host (the
 * caller degrades); another < 0 on a fault (host disk full, no loop device left, ...). On
 * failure nothing is left behind: no mount, no loop device, no image. */
int sandbox_disk_create(const char *dir, int64_t bytes, uid_t uid, gid_t gid, err_t *err);

/* Unmounts <dir>/disk (lazily when something on the host still holds it; the loop device then
 * detaches when the last user goes) and, if remove_image, deletes the image. Idempotent:
 * nothing mounted and no image is success. Returns 0 or < 0 with err set. */
int sandbox_disk_remove(const char *dir, bool remove_image, err_t *err);

/* 1 when <dir>/disk is a mount point, 0 when not (or absent). */
int sandbox_disk_mounted(const char *dir);

/* Bytes in use and size of the mounted disk's filesystem (statvfs). 0 or < 0. */
int sandbox_disk_usage(const char *dir, int64_t *used, int64_t *size);

#endif
