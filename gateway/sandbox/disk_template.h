/* disk_template.h — an empty sandbox filesystem of a given size, as mkfs.ext4 wrote it once,
 * laid into the next image of that size instead of running mkfs.ext4 again.
 *
 * mkfs.ext4 is a fork and exec of the gateway and writes the same ~240 KiB whatever the sandbox
 * (sandbox_disk.c's options: nothing in it depends on the sandbox; the layout with the
 * sandbox's owner is made after the mount). The bytes of a freshly made image (its data
 * segments, SEEK_DATA to SEEK_HOLE: the rest is a hole, which reads as zeros) are kept in
 * memory, bounded (DISK_TEMPLATE_MAX sizes, DISK_TEMPLATE_BYTES_MAX bytes each); the next image
 * of the size gets them with pwrite, holes and all, byte for byte what mkfs.ext4 would have
 * written but its UUID and hash seed, which every disk of a size then shares (each is its own
 * filesystem, read only by the kernel: no sandbox reads an image). Loop-thread only. */
#ifndef SP_DISK_TEMPLATE_H
#define SP_DISK_TEMPLATE_H

#include <stdint.h>

#define DISK_TEMPLATE_MAX       4          /* sizes kept; the oldest goes first */
#define DISK_TEMPLATE_BYTES_MAX (8u << 20) /* an image with more data is not kept */

/* Writes the kept filesystem of bytes into img (open for writing, empty, already truncated to
 * bytes). 1 when written, 0 when none of that size is kept (run mkfs.ext4, then
 * disk_template_keep), -errno when a write failed (the image is then unusable). */
int disk_template_apply(int img, int64_t bytes);

/* Keeps what the freshly formatted img (of bytes) holds for the next image of that size; best
 * effort (a read that fails or an image past the bound keeps nothing). */
void disk_template_keep(int img, int64_t bytes);

/* Forgets every template (tests; a gateway keeps them for its life). */
void disk_template_clear(void);

#endif
