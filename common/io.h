/* io.h — small fd and directory helpers shared by every program. */
#ifndef SP_IO_H
#define SP_IO_H

#include <stddef.h>

/* Writes all n bytes to fd, retrying EINTR and waiting (poll) while a non-blocking fd is full.
 * Returns 0 or -errno. */
int io_write_all(int fd, const void *p, size_t n);

/* Removes directory path and the files in it (a flat directory of our own: no subdirectories,
 * nothing followed). Best effort: what cannot be removed stays. */
void io_remove_flat_dir(const char *path);

#endif
