/* image.c — image names to root filesystems. See image.h. */
#include "image.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool
image_name_valid(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > IMAGE_NAME_MAX || name[0] == '.' || name[0] == '/' || strstr(name, ".."))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
            !strchr("._:/@-", c))
            return false;
    }
    return true;
}

int
image_resolve(const char *store, const char *name, char *rootfs, size_t cap, err_t *err)
{
    if (!image_name_valid(name))
        return err_set(err, ERR_BAD_REQ,
                       "image must be 1-%d of [A-Za-z0-9._:/@-] (sandpipe image ls lists them)",
                       IMAGE_NAME_MAX);
    if (!strcmp(name, IMAGE_HOST)) {
        if (cap)
            rootfs[0] = '\0';
        return 0;
    }
    char link[PATH_MAX], real[PATH_MAX], mark[PATH_MAX + 32];
    int n = snprintf(link, sizeof link, "%s/names/%s", store, name);
    if (n < 0 || (size_t)n >= sizeof link)
        return err_set(err, ERR_BAD_REQ, "image name too long");
    for (char *p = link + strlen(store) + 7; *p; p++)
        if (*p == '/')
            *p = '+';
    if (!realpath(link, real))
        real[0] = '\0';
    snprintf(mark, sizeof mark, "%s/.sandpipe-image", real);
    if (!real[0] || access(mark, F_OK) < 0)
        return err_set(err, ERR_NOT_FOUND,
                       "no image \"%s\" (sandpipe image build makes one; sandpipe image ls lists "
                       "them; \"" IMAGE_HOST "\" is the host's /usr)",
                       name);
    if (strlen(real) >= cap)
        return err_set(err, ENAMETOOLONG, "image path too long");
    memcpy(rootfs, real, strlen(real) + 1);
    return 0;
}
