/* io.h — small fd helpers shared by every program. */
#ifndef SP_IO_H
#define SP_IO_H

#include <stddef.h>

/* Writes all n bytes to fd, retrying EINTR and waiting (poll) while a non-blocking fd is full.
 * Returns 0 or -errno. */
int io_write_all(int fd, const void *p, size_t n);

#endif
