/* io.c — fd and directory helpers. */
#include "io.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
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
