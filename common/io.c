/* io.c — fd and directory helpers. */
#include "io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

int
io_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};
                poll(&pfd, 1, -1);
                continue;
            }
            return -errno;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

void
io_remove_flat_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    rmdir(path);
}

int
io_read_private_file(const char *path, unsigned refused_bits, const char *refused_why,
                     const char *hint, char *buf, size_t cap, size_t *n, err_t *err)
{
    int r = 0;
    *n = 0;
    /* O_NONBLOCK: a FIFO planted at path must not hang start-up; it is refused below. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return err_set(err, errno, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0)
        r = err_set(err, errno, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        r = err_set(err, EINVAL, "%s: not a regular file", path);
    else if (st.st_mode & refused_bits)
        r = err_set(err, EACCES, "%s: %s (mode %04o)%s", path, refused_why,
                    (unsigned)(st.st_mode & 07777), hint);
    while (r == 0 && *n < cap) {
        ssize_t got = read(fd, buf + *n, cap - *n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            r = err_set(err, errno, "%s: %s", path, strerror(errno));
        else if (got == 0)
            break;
        else
            *n += (size_t)got;
    }
    close(fd);
    return r;
}
