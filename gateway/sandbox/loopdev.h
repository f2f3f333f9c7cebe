/* loopdev.h — attaching a file to a free loop block device, so it can be mounted.
 *
 * The device is configured with LO_FLAGS_AUTOCLEAR: the kernel detaches it by itself when its
 * last user goes (our fd, then the filesystem mounted from it), so no path — a failed mount, a
 * crash between attach and mount, a lazy unmount — can leak a device. Free devices come from
 * /dev/loop-control (LOOP_CTL_GET_FREE, which creates one when none is free). Needs
 * CAP_SYS_ADMIN over the host's devices: in a user namespace or an unprivileged container it
 * fails with EACCES/EPERM (or ENOENT where /dev/loop-control is absent). */
#ifndef SP_LOOPDEV_H
#define SP_LOOPDEV_H

#include <stddef.h>

#include "err.h"

/* Attaches the open file file_fd (read-write) to a free loop device and writes its path
 * ("/dev/loopN") to dev. Returns the device's fd (O_RDWR, O_CLOEXEC: close it once the device
 * is mounted; closing it before that detaches the device), or < 0 with err set. */
int loopdev_attach(int file_fd, char *dev, size_t devn, err_t *err);

#endif
