/* runtime_image_owner.c — who may point a name of the image store at an image through the
 * Runtime API's /build (runtime_build.c).
 *
 * A name is shared: every session that names it runs what it points at, and "default" is the
 * image of every session that names none. So:
 * - a viewer names nothing (runtime_build.c refuses it first);
 * - a user may name what does not exist yet (neither in the store nor as a local Docker image)
 *   and what that same user named before; never "default", its Docker form or the builder's
 *   own tags (IMAGE_REPO ":default", IMAGE_REPO ":sp_v…"), nor a name an admin or the operator
 *   made, nor another user's. OpenHands' V0 builder tags only names that do not exist yet, so
 *   two users of one OpenHands version share its images without ever moving each other's;
 * - an admin may name anything, and the name is then the operator's.
 * Who named what is in the store: owners/<name> ("/" as "+", as names/) holds the token sub of
 * the user; no record: the operator's (images/sandpipe-image writes the record with the name
 * for --owner and removes it otherwise). A record of a name that does not exist is a claim for
 * a build in flight: it holds while a build runs and lapses when none does (a failed build
 * reserves nothing). Checks and claims run under an flock of owners/: two requests never both
 * take one free name, nor start two builds. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "auth.h"
#include "image.h"
#include "runtime_api.h"

#define RESERVED_PREFIX IMAGE_REPO ":sp_v" /* the builder's versioned, lock and source tags */

/* <store>/owners/<name, "/" as "+"> */
static void
record_path(const char *name, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/owners/", g_api.image_store);
    snprintf(out + n, cap - (size_t)n, "%s", name);
    for (char *p = out + n; *p; p++)
        if (*p == '/')
            *p = '+';
}

/* The sub recorded for name into out ("" when none). 0, or -errno when unreadable. */
static int
owner_of(const char *name, char *out, size_t cap)
{
    char p[PATH_MAX];
    record_path(name, p, sizeof p);
    out[0] = '\0';
    int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    ssize_t n = read(fd, out, cap - 1);
    int e = errno;
    close(fd);
    if (n < 0)
        return -e;
    out[n] = '\0';
    return 0;
}

/* Records owner for name (NULL: removes the record). 0 or -errno. */
static int
record_set(const char *name, const char *owner)
{
    char p[PATH_MAX], tmp[PATH_MAX];
    record_path(name, p, sizeof p);
    if (!owner)
        return unlink(p) == 0 || errno == ENOENT ? 0 : -errno;
    /* no name starts with '.': the temporary file is nobody's record */
    snprintf(tmp, sizeof tmp, "%s/owners/.tmp.%d", g_api.image_store, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    size_t len = strlen(owner);
    int e = write(fd, owner, len) == (ssize_t)len ? 0 : errno ? errno : EIO;
    if (close(fd) < 0 && !e)
        e = errno;
    if (!e && rename(tmp, p) < 0)
        e = errno;
    if (e)
        unlink(tmp);
    return -e;
}

/* Whether name names an image: in the store, or a local Docker image (a base other builds may
 * use, or another program's). */
static bool
name_exists(const char *name)
{
    char rootfs[PATH_MAX], kind[32], why[256];
    err_t err = {0};
    if (image_resolve(g_api.image_store, name, rootfs, sizeof rootfs, &err) == 0)
        return true;
    const char *args[] = {"base-kind", name, NULL};
    return oh_image_tool(args, kind, sizeof kind, why, sizeof why) == 0;
}

int
oh_names_lock(err_t *err)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/owners", g_api.image_store);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return err_set(err, ERR_UNAVAILABLE, "cannot make %s: %s", dir, strerror(errno));
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, ERR_UNAVAILABLE, "cannot open %s: %s", dir, strerror(errno));
    while (flock(fd, LOCK_EX) < 0)
        if (errno != EINTR) {
            int e = errno;
            close(fd);
            return err_set(err, ERR_UNAVAILABLE, "cannot lock %s: %s", dir, strerror(e));
        }
    return fd;
}

void
oh_names_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* and with it the lock */
}

int
oh_names_check(const api_req_t *r, const char *const *names, int n, bool building, err_t *err)
{
    if (api_is_admin(r))
        return 0;
    for (int i = 0; i < n; i++) {
        const char *name = names[i];
        char owner[sizeof r->claims.sub + 1];
        if (!strcmp(name, OH_PROFILE) || !strcmp(name, IMAGE_REPO ":" OH_PROFILE) ||
            !strncmp(name, RESERVED_PREFIX, strlen(RESERVED_PREFIX)))
            return err_set(err, ERR_FORBIDDEN,
                           "the image name \"%s\" is the operator's: only an admin token may "
                           "point it at another image",
                           name);
        int e = owner_of(name, owner, sizeof owner);
        if (e < 0)
            return err_set(err, ERR_INTERNAL, "cannot read who named \"%s\": %s", name,
                           strerror(-e));
        if (owner[0] && !strcmp(owner, r->claims.sub))
            continue;
        bool exists = name_exists(name);
        if (owner[0] && (exists || building))
            return err_set(err, ERR_FORBIDDEN,
                           "the image name \"%s\" belongs to another user: choose another name",
                           name);
        if (exists)
            return err_set(err, ERR_FORBIDDEN,
                           "the image name \"%s\" exists and is not yours (an admin or the "
                           "operator made it): only an admin token may point it at another image",
                           name);
    }
    return 0;
}

int
oh_names_claim(const api_req_t *r, const char *const *names, int n, err_t *err)
{
    const char *owner = api_is_admin(r) ? NULL : r->claims.sub;
    for (int i = 0; i < n; i++) {
        int e = record_set(names[i], owner);
        if (e < 0)
            return err_set(err, ERR_UNAVAILABLE, "cannot record who names \"%s\": %s", names[i],
                           strerror(-e));
    }
    return 0;
}
