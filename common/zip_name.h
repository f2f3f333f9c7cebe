/* zip_name.h — turns a name stored in a .zip into a path that is safe to extract to: decoded
 * (UTF-8 when the entry's flag says so, else CP437, as Python's zipfile does), and refused when
 * it could leave the extraction directory. Pure function over bytes. */
#ifndef SP_ZIP_NAME_H
#define SP_ZIP_NAME_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* Decodes and checks raw[0..n). utf8: the entry's UTF-8 flag (bit 11). On success returns 0,
 * *path (caller frees) holds the relative path without empty or "." components and without a
 * trailing '/', and *is_dir says whether the name ended in '/'. A directory may come out as ""
 * ("./"); a file never does. Returns -EINVAL with err set for an empty name, a NUL, invalid
 * UTF-8, an absolute name or a ".." component. */
int zip_name_decode(const unsigned char *raw, size_t n, bool utf8, char **path, bool *is_dir,
                    err_t *err);

#endif
