/* provider_home.c — an image sandbox's home directory on the host (bwrap and docker bind it at
 * IMAGE_HOME). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "provider.h"
#include "sandbox_disk.h"

#define HOME_DIR      "home" /* <dir>/home or <dir>/disk/home */
#define SKEL_FILE_MAX (1 << 20)

/* The host directory bound at an image sandbox's home: on its own disk where it has one. */
bool
provider_home_path(const sandbox_t *sb, char *out, size_t n)
{
    int r = sb->disk_bytes > 0 ? snprintf(out, n, "%s/" SANDBOX_DISK_MOUNT "/" HOME_DIR, sb->dir)
                               : snprintf(out, n, "%s/" HOME_DIR, sb->dir);
    return r >= 0 && (size_t)r < n;
}

/* Copies the regular file src (the image's, root's) to dst, a new file owned by uid:gid. */
static void
copy_skel_file(const char *src, const char *dst, uid_t uid, gid_t gid)
{
    int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (in < 0)
        return;
    int out = -1;
    if (fstat(in, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= SKEL_FILE_MAX)
        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    char buf[8192];
    ssize_t r;
    while (out >= 0 && (r = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)r) != r)
            break;
    if (out >= 0) {
        bool owned = fchown(out, uid, gid) == 0;
        close(out);
        if (!owned)
            unlink(dst); /* never a file of root's in the sandbox's home */
    }
    close(in);
}

/* A fresh home (0750, the sandbox's uid) holding the image's /etc/skel files (.bashrc,
 * .profile), made before the sandbox runs: nothing in it can race us. */
int
provider_prepare_home(const sandbox_spec_t *spec, const sandbox_t *sb, err_t *err)
{
    char home[PATH_MAX], skel[PATH_MAX], src[PATH_MAX * 2], dst[PATH_MAX * 2];
    if (!provider_home_path(sb, home, sizeof home))
        return err_set(err, ENAMETOOLONG, "state_dir path too long");
    if (mkdir(home, 0750) < 0 || chown(home, provider_user_uid(sb), provider_user_gid(sb)) < 0)
        return err_set(err, errno, "home %s: %s", home, strerror(errno));
    snprintf(skel, sizeof skel, "%s/etc/skel", spec->rootfs);
    DIR *d = opendir(skel);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_type != DT_REG)
            continue;
        snprintf(src, sizeof src, "%s/%s", skel, e->d_name);
        snprintf(dst, sizeof dst, "%s/%s", home, e->d_name);
        copy_skel_file(src, dst, provider_user_uid(sb), provider_user_gid(sb));
    }
    if (d)
        closedir(d);
    return 0;
}
