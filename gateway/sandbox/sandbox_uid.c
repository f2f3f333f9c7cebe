/* sandbox_uid.c — per-sandbox host uids claimed as files in <state_dir>/uids. See sandbox_uid.h. */
#include "sandbox_uid.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STALE_CLAIM_SECS 60

/* <state_dir>/uids, made if missing; every name below it is opened relative to this fd. */
static int
open_claims(const char *state_dir, bool create, int *sfd, err_t *err)
{
    *sfd = open(state_dir, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*sfd < 0)
        return err_set(err, errno, "state_dir %s: %s", state_dir, strerror(errno));
    if (create && mkdirat(*sfd, SANDBOX_UID_DIR, 0700) < 0 && errno != EEXIST) {
        int e = err_set(err, errno, "mkdir %s/" SANDBOX_UID_DIR ": %s", state_dir, strerror(errno));
        close(*sfd);
        return e;
    }
    int dfd = openat(*sfd, SANDBOX_UID_DIR, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        int e = err_set(err, errno, "%s/" SANDBOX_UID_DIR ": %s", state_dir, strerror(errno));
        close(*sfd);
        return e;
    }
    return dfd;
}

/* The sandbox id a claim names ("" if unreadable). */
static void
claim_owner(int dfd, const char *name, char *id, size_t n)
{
    id[0] = '\0';
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t r = read(fd, id, n - 1);
    close(fd);
    id[r > 0 ? r : 0] = '\0';
}

/* A claim left by a gateway that died before its sandbox existed. */
static bool
claim_stale(int sfd, int dfd, const char *name)
{
    char id[64];
    struct stat st;
    claim_owner(dfd, name, id, sizeof id);
    if (!id[0] || strchr(id, '/') || id[0] == '.')
        return false; /* not ours to judge */
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        time(NULL) - st.st_mtime < STALE_CLAIM_SECS)
        return false;
    return faccessat(sfd, id, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

int
sandbox_uid_claim(const char *state_dir, const char *id, uid_t base, uint32_t count, uint32_t width,
                  uid_t *uid, err_t *err)
{
    if (width == 0 || count < width || base == 0 || (uint64_t)base + count > 0x7fffffffu)
        return err_set(err, ERR_BAD_REQ, "sandbox uid range %u+%u (%u each) is not usable",
                       (unsigned)base, (unsigned)count, (unsigned)width);
    uint32_t blocks = count / width;
    int sfd, dfd = open_claims(state_dir, true, &sfd, err);
    if (dfd < 0)
        return dfd;
    uint32_t h = 2166136261u; /* FNV-1a of the id: where the search starts */
    for (const char *p = id; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    int e =
        err_set(err, ERR_BUSY, "no free sandbox uids in %u..%u (%u sandboxes of %u)",
                (unsigned)base, (unsigned)(base + count - 1), (unsigned)blocks, (unsigned)width);
    for (uint32_t i = 0; i < blocks; i++) {
        uid_t u = base + ((h + i) % blocks) * width;
        char name[16];
        snprintf(name, sizeof name, "%u", (unsigned)u);
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST && claim_stale(sfd, dfd, name) && unlinkat(dfd, name, 0) == 0)
            fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0) {
            e = err_set(err, errno, "claim uid %s: %s", name, strerror(errno));
            break;
        }
        ssize_t w = write(fd, id, strlen(id));
        close(fd);
        if (w != (ssize_t)strlen(id)) {
            unlinkat(dfd, name, 0);
            e = err_set(err, EIO, "claim uid %s: short write", name);
            break;
        }
        *uid = u;
        e = 0;
        break;
    }
    close(dfd);
    close(sfd);
    return e;
}

void
sandbox_uid_release(const char *state_dir, const char *id, uid_t uid)
{
    int sfd, dfd = open_claims(state_dir, false, &sfd, NULL);
    if (dfd < 0)
        return;
    char name[16], owner[64];
    snprintf(name, sizeof name, "%u", (unsigned)uid);
    claim_owner(dfd, name, owner, sizeof owner);
    if (strcmp(owner, id) == 0)
        unlinkat(dfd, name, 0);
    close(dfd);
    close(sfd);
}
