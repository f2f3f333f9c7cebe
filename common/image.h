/* image.h — a runtime image's name to its root filesystem (images/sandpipe-image builds them).
 *
 * The store (gateway --images, default /var/lib/sandpipe/images) holds names/<name> ("/" in a
 * name is "+"), symlinks to rootfs/<tag>/, each a read-only root filesystem marked by a
 * .sandpipe-image file, and owners/<name>: the token sub of the user who named it through the
 * Runtime API (no file: the operator's; api/openhands/runtime_image_owner.c). The name "host"
 * is no image: the profile whose sandboxes borrow the host's /usr (bwrap's fast path, for
 * machines where debootstrap is impossible). */
#ifndef SP_IMAGE_H
#define SP_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define IMAGE_HOST      "host" /* the host-/usr profile: no image */
#define IMAGE_NAME_MAX  200
#define IMAGE_STORE_DEF "/var/lib/sandpipe/images"
#define IMAGE_REPO      "sandpipe/runtime" /* the builder's tags: IMAGE_REPO ":<tag>" */

/* True for a syntactically valid name: 1..IMAGE_NAME_MAX of [A-Za-z0-9._:/@-], not starting
 * with '.' or '/', no "..". */
bool image_name_valid(const char *name);

/* Resolves name in store to its rootfs directory (realpath) into rootfs; "host" gives "".
 * Returns 0, -ERR_BAD_REQ (malformed name) or -ERR_NOT_FOUND (no such image), err set. */
int image_resolve(const char *store, const char *name, char *rootfs, size_t cap, err_t *err);

#endif
