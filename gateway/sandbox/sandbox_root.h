/* sandbox_root.h — an image's root filesystem as a sandbox with root inside sees it.
 *
 * The image's files are root's on disk (uid 0 of the host), which a sandbox's user namespace
 * does not map: inside they would be nobody's, and root inside could change none of them. An
 * idmapped mount of the image (the sandbox's namespace as its map) shows them as the sandbox's
 * root, without copying or changing a byte on disk; it is read-only. Where the sandbox has its
 * own disk (sandbox_disk.h), an overlay puts a writable layer on it, on that disk
 * (root-upper/, root-work/): `apt-get install`, pip and edits of /etc land there, bounded by the
 * disk's size, and go with the sandbox. The image's directory is never written, by any sandbox.
 *
 * The result is mounted at <dir>/root in the gateway's mount namespace (as the disk is, so a
 * restarted gateway finds it), for bwrap to bind as the sandbox's /. */
#ifndef SP_SANDBOX_ROOT_H
#define SP_SANDBOX_ROOT_H

#include <stdbool.h>

#include "err.h"
#include "provider.h"

#define SANDBOX_ROOT_MOUNT "root"       /* <dir>/root */
#define SANDBOX_ROOT_UPPER "root-upper" /* on the sandbox's disk */
#define SANDBOX_ROOT_WORK  "root-work"

/* Mounts rootfs at <dir>/root, idmapped by the user namespace userns_fd, writable on the
 * sandbox's disk when it has one (sb->disk_bytes > 0; the layer's top owned by sb->uid, root
 * inside). Returns 0 or < 0 with err set (nothing left mounted). */
int sandbox_root_mount(const sandbox_t *sb, const char *rootfs, int userns_fd, err_t *err);

/* Unmounts <dir>/root (lazily: the sandbox's processes are gone or going). Idempotent. */
void sandbox_root_unmount(const char *dir);

/* Whether this host can idmap a mount of path (the kernel, and path's filesystem): asked once
 * at the gateway's start for its image store. False with err saying why. Needs root. */
bool sandbox_root_can_idmap(const char *path, err_t *err);

#endif
