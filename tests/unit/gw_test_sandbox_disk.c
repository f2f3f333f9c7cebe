/* gw_test_sandbox_disk.c — sandbox_disk.c (and loopdev.c under it) against the real kernel:
 * real sparse images, mkfs.ext4, loop devices and mounts in a mkdtemp directory. Needs root and
 * loop devices (a missing precondition fails, see NEED); every test leaves no mount, no loop
 * device and no image behind, which the teardown checks and enforces. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "need.h"

#include "gateway/sandbox/sandbox_disk.h"

#define MiB (1024LL * 1024)

static char g_dir[256];           /* a fresh directory per test, standing for a sandbox's <dir> */
static char g_probe[ERR_MSG_MAX]; /* why disks cannot be made here; "" when they can */

static void
path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", g_dir, name);
}

/* Number of loop devices whose backing file is path (sysfs; "(deleted)" counts too). */
static int
loops_backed_by(const char *path)
{
    DIR *d = opendir("/sys/block");
    struct dirent *de;
    int n = 0;
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, "loop", 4) != 0)
            continue;
        char p[PATH_MAX], buf[PATH_MAX];
        snprintf(p, sizeof p, "/sys/block/%s/loop/backing_file", de->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        if (fgets(buf, sizeof buf, f) && strncmp(buf, path, strlen(path)) == 0)
            n++;
        fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

/* Whether path is a mount point in /proc/self/mountinfo (field 5). */
static bool
in_mountinfo(const char *path)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[4096];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        char mp[PATH_MAX];
        if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && strcmp(mp, path) == 0)
            found = true;
    }
    if (f)
        fclose(f);
    return found;
}

static void
assert_nothing_left(void)
{
    char img[PATH_MAX], mnt[PATH_MAX];
    path_of(img, sizeof img, SANDBOX_DISK_IMAGE);
    path_of(mnt, sizeof mnt, SANDBOX_DISK_MOUNT);
    assert_false(in_mountinfo(mnt));
    assert_int_equal(sandbox_disk_mounted(g_dir), 0);
    assert_int_equal(access(img, F_OK), -1);
    /* The kernel lets go of an autoclear loop device when its last user does, which a detached
     * unmount leaves to the kernel's own pace: wait for it, boundedly. */
    for (int i = 0; i < 200 && loops_backed_by(img) > 0; i++)
        usleep(25 * 1000);
    assert_int_equal(loops_backed_by(img), 0);
}

static int
setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sp-disk-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char real[PATH_MAX];
    assert_non_null(realpath(tmpl, real)); /* as mountinfo spells it */
    size_t n = strlen(real);
    assert_true(n < sizeof g_dir);
    memcpy(g_dir, real, n + 1);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    sandbox_disk_remove(g_dir, true, NULL); /* after a failed assertion too */
    char p[PATH_MAX];
    path_of(p, sizeof p, SANDBOX_DISK_MOUNT);
    rmdir(p);
    path_of(p, sizeof p, "dummy");
    unlink(p);
    rmdir(g_dir);
    return 0;
}

static void
need_disks(void)
{
    NEED(!g_probe[0], g_probe);
}

/* The filesystem is there, of the asked size, laid out for the sandbox's user; remove takes
 * the mount, the loop device and the image away. */
static void
test_disk_is_mounted_laid_out_and_removed(void **state)
{
    (void)state;
    need_disks();
    err_t err = {0};
    assert_int_equal(sandbox_disk_create(g_dir, 64 * MiB, 1234, 2345, &err), 0);
    char img[PATH_MAX], mnt[PATH_MAX], p[PATH_MAX + 16];
    path_of(img, sizeof img, SANDBOX_DISK_IMAGE);
    path_of(mnt, sizeof mnt, SANDBOX_DISK_MOUNT);
    assert_int_equal(sandbox_disk_mounted(g_dir), 1);
    assert_true(in_mountinfo(mnt));
    assert_int_equal(loops_backed_by(img), 1);
    struct stat st;
    assert_int_equal(stat(img, &st), 0);
    assert_int_equal(st.st_size, 64 * MiB);
    assert_true(st.st_blocks * 512 < 2 * MiB); /* sparse: metadata only */
    assert_int_equal(st.st_mode & 07777, 0600);
    static const struct {
        const char *name;
        mode_t mode;
    } want[] = {{"workspace", 0755}, {"tmp", 01777}, {"var-tmp", 01777}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", mnt, want[i].name);
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(st.st_mode & 07777, want[i].mode);
        assert_int_equal(st.st_uid, 1234);
        assert_int_equal(st.st_gid, 2345);
    }
    int64_t used = -1, size = -1;
    assert_int_equal(sandbox_disk_usage(g_dir, &used, &size), 0);
    assert_true(size > 48 * MiB && size <= 64 * MiB); /* less the journal and metadata */
    assert_true(used >= 0 && used < 4 * MiB);

    assert_int_equal(sandbox_disk_remove(g_dir, true, &err), 0);
    assert_nothing_left();
    assert_int_equal(sandbox_disk_remove(g_dir, true, &err), 0); /* idempotent */
    assert_int_equal(sandbox_disk_usage(g_dir, &used, &size), -ENOENT);
}

/* Writing past the limit is ENOSPC to the writer; the image never grows past the limit and
 * gives deleted blocks back to the host (discard). */
static void
test_disk_full_is_enospc_and_host_stays_bounded(void **state)
{
    (void)state;
    need_disks();
    err_t err = {0};
    assert_int_equal(sandbox_disk_create(g_dir, 32 * MiB, 0, 0, &err), 0);
    char img[PATH_MAX], big[PATH_MAX + 32];
    path_of(img, sizeof img, SANDBOX_DISK_IMAGE);
    snprintf(big, sizeof big, "%s/" SANDBOX_DISK_MOUNT "/tmp/big", g_dir);
    int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    static char chunk[1 << 20];
    memset(chunk, 'x', sizeof chunk);
    long long written = 0;
    int werr = 0;
    for (int i = 0; i < 64 && !werr; i++) { /* up to twice the limit */
        ssize_t w = write(fd, chunk, sizeof chunk);
        if (w < 0)
            werr = errno;
        else
            written += w;
    }
    if (!werr && fsync(fd) < 0)
        werr = errno;
    close(fd);
    assert_int_equal(werr, ENOSPC);
    assert_true(written > 16 * MiB && written < 32 * MiB);
    sync();
    struct stat st;
    assert_int_equal(stat(img, &st), 0);
    assert_int_equal(st.st_size, 32 * MiB);
    assert_true(st.st_blocks * 512 <= 32 * MiB);
    assert_true(st.st_blocks * 512 > 16 * MiB);
    /* Deleted: the filesystem discards the blocks after its journal commit, in the background,
     * and the image's holes come back (waited for, bounded). */
    assert_int_equal(unlink(big), 0);
    for (int i = 0; i < 100; i++) {
        sync();
        assert_int_equal(stat(img, &st), 0);
        if (st.st_blocks * 512 < 6 * MiB)
            break;
        struct timespec ts = {0, 200 * 1000000L};
        nanosleep(&ts, NULL);
    }
    assert_true(st.st_blocks * 512 < 6 * MiB);
    assert_int_equal(sandbox_disk_remove(g_dir, true, &err), 0);
    assert_nothing_left();
}

/* A failure after the device was attached (here: the mount point is a file) takes everything
 * back; refusals before it touch nothing. */
static void
test_failed_create_leaves_nothing(void **state)
{
    (void)state;
    need_disks();
    err_t err = {0};
    char mnt[PATH_MAX], img[PATH_MAX];
    path_of(mnt, sizeof mnt, SANDBOX_DISK_MOUNT);
    path_of(img, sizeof img, SANDBOX_DISK_IMAGE);
    int fd = open(mnt, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    int e = sandbox_disk_create(g_dir, 32 * MiB, 0, 0, &err);
    assert_true(e < 0);
    assert_int_not_equal(e, -ENOTSUP); /* a fault, not "unavailable" */
    assert_non_null(strstr(err.msg, "mount"));
    assert_int_equal(unlink(mnt), 0);
    assert_nothing_left();

    memset(&err, 0, sizeof err);
    assert_int_equal(sandbox_disk_create(g_dir, SANDBOX_DISK_MIN - 1, 0, 0, &err), -ERR_BAD_REQ);
    assert_nothing_left();

    /* An image that is there already (another sandbox's) is refused and left as it was. */
    fd = open(img, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "mine", 4), 4);
    close(fd);
    assert_int_equal(sandbox_disk_create(g_dir, 32 * MiB, 0, 0, &err), -EEXIST);
    struct stat st;
    assert_int_equal(stat(img, &st), 0);
    assert_int_equal(st.st_size, 4);
    assert_int_equal(sandbox_disk_mounted(g_dir), 0);
    assert_int_equal(unlink(img), 0);
    assert_nothing_left();
}

/* Where mounting is not ours to do (a user namespace, like an unprivileged container), create
 * says -ENOTSUP with the reason, so the provider degrades, and leaves nothing behind. */
static void
test_unprivileged_is_unsupported_not_a_fault(void **state)
{
    (void)state;
    need_disks();
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pipefd[0]);
        int e = unshare(CLONE_NEWUSER);
        int fd;
        /* root inside maps to root outside, so files can be made; capabilities over the
         * host's devices and mounts stay outside */
        if (e == 0 && (fd = open("/proc/self/setgroups", O_WRONLY)) >= 0) {
            e |= write(fd, "deny", 4) != 4;
            close(fd);
        }
        static const char *const maps[] = {"/proc/self/uid_map", "/proc/self/gid_map"};
        for (int i = 0; e == 0 && i < 2; i++) {
            fd = open(maps[i], O_WRONLY);
            e |= fd < 0 || write(fd, "0 0 1", 5) != 5;
            if (fd >= 0)
                close(fd);
        }
        err_t err = {0};
        int r = e == 0 ? sandbox_disk_create(g_dir, 32 * MiB, 0, 0, &err) : -EPERM;
        dprintf(pipefd[1], "%s", err.msg);
        _exit(e != 0 ? 2 : r == -ENOTSUP ? 0 : 1);
    }
    close(pipefd[1]);
    char msg[ERR_MSG_MAX + 1] = "";
    ssize_t n = read(pipefd[0], msg, sizeof msg - 1);
    msg[n > 0 ? n : 0] = '\0';
    close(pipefd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 2)
        NEED(false, "cannot make a user namespace here");
    if (WEXITSTATUS(status) != 0)
        fail_msg("expected -ENOTSUP in a user namespace, got: %s", msg);
    print_message("%s\n", msg);
    assert_non_null(strstr(msg, "loop devices unavailable"));
    assert_nothing_left();
}

/* Whether this host can make disks at all, asked once (the tests NEED it). */
static void
probe(void)
{
    if (geteuid() != 0) {
        snprintf(g_probe, sizeof g_probe, "not root");
        return;
    }
    setup(NULL);
    err_t err = {0};
    int e = sandbox_disk_create(g_dir, 32 * MiB, 0, 0, &err);
    if (e < 0)
        snprintf(g_probe, sizeof g_probe, "no sandbox disk here: %.200s", err.msg);
    teardown(NULL);
}

int
main(void)
{
    probe();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_disk_is_mounted_laid_out_and_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_full_is_enospc_and_host_stays_bounded, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_create_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unprivileged_is_unsupported_not_a_fault, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
