/* io.h — small fd and directory helpers shared by every program. */
#ifndef SP_IO_H
#define SP_IO_H

#include <stddef.h>

#include "err.h"

/* Writes all n bytes to fd, retrying EINTR and waiting (poll) while a non-blocking fd is full.
 * Returns 0 or -errno. */
int io_write_all(int fd, const void *p, size_t n);

/* Removes directory path and the files in it (a flat directory of our own: no subdirectories,
 * nothing followed). Best effort: what cannot be removed stays. */
void io_remove_flat_dir(const char *path);

/* A small private file (a secret, a password) read whole into buf: opened without following a
 * FIFO's wait (O_NONBLOCK), a regular file, none of the mode bits refused (refused_bits; the
 * refusal says "<path>: <refused_why> (mode 0NNN)<hint>"). Reads at most cap bytes: *n == cap
 * means the file may be longer. 0, or < 0 with err set (buf may hold part of the file: the
 * caller cleanses it). */
int io_read_private_file(const char *path, unsigned refused_bits, const char *refused_why,
                         const char *hint, char *buf, size_t cap, size_t *n, err_t *err);

#endif
