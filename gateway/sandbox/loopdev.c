/* loopdev.c — a file on a free loop device with autoclear. See loopdev.h. */
#include "loopdev.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Another process may take the device LOOP_CTL_GET_FREE named before we configure it. */
#define ATTACH_TRIES 16

/* Opens /dev/loopN; where /dev is a static copy (a container's tmpfs) a device the kernel just
 * made has no node yet: make it from the numbers sysfs gives. */
static int
open_dev(int nr, char *dev, size_t devn)
{
    snprintf(dev, devn, "/dev/loop%d", nr);
    int fd = open(dev, O_RDWR | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT)
        return fd < 0 ? -errno : fd;
    char sys[64], buf[32];
    snprintf(sys, sizeof sys, "/sys/devices/virtual/block/loop%d/dev", nr);
    int sfd = open(sys, O_RDONLY | O_CLOEXEC);
    ssize_t n = sfd < 0 ? -1 : read(sfd, buf, sizeof buf - 1);
    if (sfd >= 0)
        close(sfd);
    unsigned maj, min;
    if (n <= 0)
        return -ENOENT;
    buf[n] = '\0';
    if (sscanf(buf, "%u:%u", &maj, &min) != 2)
        return -ENOENT;
    if (mknod(dev, S_IFBLK | 0600, makedev(maj, min)) < 0 && errno != EEXIST)
        return -errno;
    fd = open(dev, O_RDWR | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* LOOP_CONFIGURE (Linux 5.8) sets the file and the flags in one step; older kernels need
 * LOOP_SET_FD then LOOP_SET_STATUS64, which cannot set direct I/O. Direct I/O keeps the
 * image's blocks out of the host page cache (the filesystem above has its own cache) and
 * writes ~5x faster here; a backing filesystem without O_DIRECT refuses it (EINVAL). */
static int
configure(int fd, int file_fd)
{
    struct loop_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.fd = (unsigned)file_fd;
    cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO;
    if (ioctl(fd, LOOP_CONFIGURE, &cfg) == 0)
        return 0;
    if (errno == EINVAL) {
        cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
        if (ioctl(fd, LOOP_CONFIGURE, &cfg) == 0)
            return 0;
    }
    if (errno != ENOTTY && errno != EINVAL)
        return -errno;
    if (ioctl(fd, LOOP_SET_FD, file_fd) < 0)
        return -errno;
    struct loop_info64 info;
    memset(&info, 0, sizeof info);
    info.lo_flags = LO_FLAGS_AUTOCLEAR;
    if (ioctl(fd, LOOP_SET_STATUS64, &info) < 0) {
        int e = -errno;
        ioctl(fd, LOOP_CLR_FD, 0);
        return e;
    }
    return 0;
}

int
loopdev_attach(int file_fd, char *dev, size_t devn, err_t *err)
{
    int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (ctl < 0)
        return err_set(err, errno, "/dev/loop-control: %s", strerror(errno));
    int e;
    for (int i = 0; i < ATTACH_TRIES; i++) {
        int nr = ioctl(ctl, LOOP_CTL_GET_FREE);
        if (nr < 0) {
            e = err_set(err, errno, "no free loop device: %s", strerror(errno));
            goto out;
        }
        int fd = open_dev(nr, dev, devn);
        if (fd < 0) {
            e = err_set(err, -fd, "%s: %s", dev, strerror(-fd));
            goto out;
        }
        if ((e = configure(fd, file_fd)) == 0) {
            close(ctl);
            return fd;
        }
        close(fd);
        if (e != -EBUSY) {
            e = err_set(err, -e, "%s: %s", dev, strerror(-e));
            goto out;
        }
    }
    e = err_set(err, EBUSY, "loop devices: each free one was taken by someone else first");
out:
    close(ctl);
    return e;
}
