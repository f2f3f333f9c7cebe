/* provider.c — what every provider shares: lookup by name, sandbox_t <-> JSON, the on-disk
 * layout (and the sandbox's uid, sandbox_uid.c), the executor's listening socket, the detached
 * spawn (double fork, own session, cgroup joined and uid switched before exec), and the generic
 * destroy/pause/resume built on cgroup.c and provider_proc.c. The environment: provider_env.c.
 *
 * Sandboxes are never our children for long: the intermediate child exits at once, so the
 * sandbox is reparented to init (or the nearest subreaper) and outlives the gateway. We only
 * ever waitpid() the intermediate child, by its pid. */
#include "provider.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "safe_id.h"
#include "cgroup.h"
#include "json_util.h"
#include "sandbox_disk.h"
#include "sandbox_root.h"
#include "sandbox_uid.h"
#include "xalloc.h"

const provider_t *
provider_find(const char *name)
{
    static const provider_t *const all[] = {&provider_bwrap, &provider_local, &provider_docker};
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

/* ---- layout ---- */

bool
provider_safe_id(const char *id, size_t max)
{
    return safe_id_valid(id, max, "-_");
}

static int
mkdir_owned(const char *path, mode_t mode, uid_t uid, gid_t gid, err_t *err)
{
    if (mkdir(path, mode) < 0 && errno != EEXIST)
        return err_set(err, errno, "mkdir %s: %s", path, strerror(errno));
    if (chmod(path, mode) < 0 || chown(path, uid, gid) < 0)
        return err_set(err, errno, "chown %s: %s", path, strerror(errno));
    return 0;
}

/* Appends to sb->warning ("; " between several). */
static void
add_warning(sandbox_t *sb, const char *what)
{
    size_t l = strlen(sb->warning);
    snprintf(sb->warning + l, sizeof sb->warning - l, "%s%s", l ? "; " : "", what);
}

/* The workspace on the sandbox's own disk, or where there can be none (degraded, with a
 * warning) or none is asked for, a directory on the host's disk as before. */
static int
prepare_workspace(const sandbox_spec_t *spec, sandbox_t *sb, uid_t uid, gid_t gid, err_t *err)
{
    if (spec->disk_bytes > 0) {
        err_t why = {0};
        int e = sandbox_disk_create(sb->dir, spec->disk_bytes, uid, gid, &why);
        if (e == 0) {
            if (snprintf(sb->workspace, sizeof sb->workspace, "%s/" SANDBOX_DISK_MOUNT "/workspace",
                         sb->dir) >= (int)sizeof sb->workspace) {
                sandbox_disk_remove(sb->dir, true, NULL);
                return err_set(err, ENAMETOOLONG, "state_dir path too long");
            }
            sb->disk_bytes = spec->disk_bytes;
            return 0;
        }
        if (e != -ENOTSUP)
            return err_set(err, why.code, "%s", why.msg);
        char w[sizeof sb->warning];
        snprintf(w, sizeof w, "no disk limit (%.150s)", why.msg);
        add_warning(sb, w);
    }
    return mkdir_owned(sb->workspace, 0755, uid, gid, err);
}

/* The uid the sandbox runs as: its own from the range, or the gateway's. */
static int
choose_uid(const sandbox_spec_t *spec, sandbox_t *sb, bool own_uid, const char *state_dir,
           err_t *err)
{
    sb->uid = geteuid();
    sb->gid = getegid();
    sb->uid_range = 1;
    if (!own_uid || spec->shared_uid)
        return 0;
    if (geteuid() != 0) {
        char w[64];
        snprintf(w, sizeof w, "gateway not root: the sandbox runs as its uid %u",
                 (unsigned)geteuid());
        add_warning(sb, w);
        return 0;
    }
    /* bwrap runs as that uid and starts in <dir>: the state directory and its parents must
     * be searchable by every user, and ours is not listable (0711): sandboxes' ids and
     * directories are no business of other users. */
    struct stat st;
    if (stat(state_dir, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0777) != 0711)
        chmod(state_dir, 0711);
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", state_dir);
    for (char *s = p + strlen(p); s; s = strrchr(p, '/')) {
        *s = '\0';
        if (stat(p[0] ? p : "/", &st) < 0 || !(st.st_mode & S_IXOTH))
            return err_set(err, EACCES,
                           "%s must be searchable by every user (o+x): sandboxes run as their "
                           "own uid",
                           p[0] ? p : "/");
    }
    uid_t u;
    int e = sandbox_uid_claim(
        state_dir, sb->id, spec->uid_count ? spec->uid_base : PROVIDER_UID_BASE,
        spec->uid_count ? spec->uid_count : PROVIDER_UID_COUNT, SANDBOX_UID_WIDTH, &u, err);
    if (e < 0)
        return e;
    sb->uid = u;
    sb->gid = (gid_t)u;
    if (spec->root_inside)
        sb->uid_range = SANDBOX_UID_WIDTH;
    return 0;
}

uid_t
provider_user_uid(const sandbox_t *sb)
{
    return sb->uid_range > SANDBOX_USER_INSIDE ? sb->uid + SANDBOX_USER_INSIDE : sb->uid;
}

gid_t
provider_user_gid(const sandbox_t *sb)
{
    return sb->uid_range > SANDBOX_USER_INSIDE ? sb->gid + SANDBOX_USER_INSIDE : sb->gid;
}

int
provider_prepare(const sandbox_spec_t *spec, sandbox_t *sb, bool own_uid, err_t *err)
{
    if (!provider_safe_id(spec->id, 48))
        return err_set(err, ERR_BAD_REQ, "sandbox id must be 1-48 of [A-Za-z0-9_-]");
    if (!spec->state_dir || !spec->state_dir[0])
        return err_set(err, ERR_BAD_REQ, "no state_dir");
    if (!spec->executor_path || access(spec->executor_path, X_OK) < 0)
        return err_set(err, ENOENT, "executor %s: not executable",
                       spec->executor_path ? spec->executor_path : "(none)");
    if (mkdir(spec->state_dir, 0711) < 0 && errno != EEXIST)
        return err_set(err, errno, "mkdir %s: %s", spec->state_dir, strerror(errno));
    snprintf(sb->id, sizeof sb->id, "%s", spec->id);
    char real[PATH_MAX];
    if (!realpath(spec->state_dir, real))
        return err_set(err, errno, "state_dir %s: %s", spec->state_dir, strerror(errno));
    if (snprintf(sb->dir, sizeof sb->dir, "%s/%s", real, spec->id) >= (int)sizeof sb->dir ||
        snprintf(sb->workspace, sizeof sb->workspace, "%s/workspace", sb->dir) >=
            (int)sizeof sb->workspace ||
        sandbox_socket_path(sb) < 0)
        return err_set(err, ENAMETOOLONG, "state_dir path too long");
    char ctl[PATH_MAX + 16];
    snprintf(ctl, sizeof ctl, "%s/" PROVIDER_CTL_DIR, sb->dir);
    /* A directory that exists belongs to a sandbox of that id, alive or not yet purged. */
    if (mkdir(sb->dir, 0711) < 0)
        return err_set(err, errno == EEXIST ? ERR_BUSY : errno, "sandbox dir %s: %s", sb->dir,
                       errno == EEXIST ? "exists (id in use or not purged)" : strerror(errno));
    int e;
    if ((e = mkdir_owned(sb->dir, 0711, geteuid(), getegid(), err)) < 0 ||
        (e = mkdir_owned(ctl, 0700, geteuid(), getegid(), err)) < 0 ||
        (e = choose_uid(spec, sb, own_uid, real, err)) < 0 ||
        /* Its own uid alone (and root) may enter <dir>: no other sandbox's uid reaches its
         * workspace, disk, tmp or log, whatever their modes. */
        (sb->uid != geteuid() && (e = mkdir_owned(sb->dir, 0710, geteuid(), sb->gid, err)) < 0) ||
        (e = prepare_workspace(spec, sb, provider_user_uid(sb), provider_user_gid(sb), err)) < 0) {
        provider_generic_destroy(sb, true, NULL); /* ours, just made: nothing runs in it */
        return e;
    }
    return 0;
}

int
sandbox_socket_path(sandbox_t *sb)
{
    int n = snprintf(sb->socket_path, sizeof sb->socket_path, "%s/" PROVIDER_CTL_DIR "/%s", sb->dir,
                     PROVIDER_SOCKET_NAME);
    if (!sb->dir[0] || n >= (int)sizeof sb->socket_path) {
        sb->socket_path[0] = '\0';
        return -ENAMETOOLONG;
    }
    return 0;
}

int
provider_listen_at(const sandbox_t *sb, const char *name, uid_t uid, gid_t gid, int sock_flags,
                   int backlog, err_t *err)
{
    char ctl[PATH_MAX + 16], addr[64];
    snprintf(ctl, sizeof ctl, "%s/" PROVIDER_CTL_DIR, sb->dir);
    int dfd = open(ctl, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return err_set(err, errno, "open %s: %s", ctl, strerror(errno));
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(addr, sizeof addr, "/proc/self/fd/%d/%s", dfd, name);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", addr);
    unlinkat(dfd, name, 0); /* a stale socket from an earlier life */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | sock_flags, 0), e = 0;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        fchmodat(dfd, name, 0600, 0) < 0 ||
        (uid != (uid_t)-1 && fchownat(dfd, name, uid, gid, 0) < 0) || listen(fd, backlog) < 0)
        e = err_set(err, errno, "%s in %s: %s", name, ctl, strerror(errno));
    close(dfd);
    if (e < 0 && fd >= 0)
        close(fd);
    return e < 0 ? e : fd;
}

int
provider_listen(const sandbox_t *sb, err_t *err)
{
    return provider_listen_at(sb, PROVIDER_SOCKET_NAME, (uid_t)-1, (gid_t)-1, 0, 128, err);
}

/* ---- detached spawn ---- */

static void
log_sink_close(const char *sandbox_id, int fd)
{
    (void)sandbox_id;
    close(fd);
}

void (*provider_log_sink)(const char *sandbox_id, int fd) = log_sink_close;

enum {
    REC_PID = 1,
    REC_ERRNO_CGROUP,
    REC_ERRNO_EXEC,
    REC_ERRNO_FORK,
    REC_ERRNO_SETUP,
    REC_ERRNO_USER
};
typedef struct {
    int32_t kind, value;
} spawn_rec_t;

static void
send_rec(int fd, int kind, int value)
{
    spawn_rec_t r = {kind, value};
    ssize_t w = write(fd, &r, sizeof r);
    (void)w;
}

/* The grandchild: runs between fork() and exec(); async-signal-safe calls only. */
static void __attribute__((noreturn))
spawn_child(int status_fd, int log_fd, int null_fd, const cgroup_t *cg, const sandbox_t *sb,
            char *const argv[], char *const envp[], const char *cwd, const int *pass, int npass)
{
    setsid(); /* its own session and process group: kill(-pid) reaches what did not move */
    int e = cgroup_enter(cg, 0);
    if (e < 0) {
        send_rec(status_fd, REC_ERRNO_CGROUP, -e);
        _exit(127);
    }
    /* In its cgroup (joined as root), then the sandbox's user for good: no groups, all three
     * ids, so nothing can switch back. */
    if (sb->uid != geteuid() &&
        (setgroups(0, NULL) < 0 || setresgid(sb->gid, sb->gid, sb->gid) < 0 ||
         setresuid(sb->uid, sb->uid, sb->uid) < 0)) {
        send_rec(status_fd, REC_ERRNO_USER, errno);
        _exit(127);
    }
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    for (int s = 1; s < 32; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    if (dup2(null_fd, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0 || chdir(cwd) < 0) {
        send_rec(status_fd, REC_ERRNO_SETUP, errno);
        _exit(127);
    }
    /* The passed fds become 3, 4, ...: first out of that range (status_fd too, so no dup2
     * lands on it), then down; dup2 leaves the new fds without FD_CLOEXEC. */
    int top = 3 + npass, moved[PROVIDER_PASS_FDS_MAX];
    if ((status_fd = fcntl(status_fd, F_DUPFD_CLOEXEC, top)) < 0)
        _exit(127);
    for (int i = 0; i < npass; i++)
        if ((moved[i] = fcntl(pass[i], F_DUPFD_CLOEXEC, top)) < 0) {
            send_rec(status_fd, REC_ERRNO_SETUP, errno);
            _exit(127);
        }
    for (int i = 0; i < npass; i++)
        if (dup2(moved[i], 3 + i) < 0) {
            send_rec(status_fd, REC_ERRNO_SETUP, errno);
            _exit(127);
        }
#ifdef SYS_close_range
    /* Whatever the gateway holds (sockets, redis) must not leak into the sandbox. */
    syscall(SYS_close_range, (unsigned)top, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */);
#endif
    execve(argv[0], argv, envp);
    send_rec(status_fd, REC_ERRNO_EXEC, errno);
    _exit(127);
}

int
provider_spawn(const sandbox_spec_t *spec, sandbox_t *sb, char *const argv[], char *const envp[],
               const char *cwd, const int *pass_fds, int npass, err_t *err)
{
    if (npass < 0 || npass > PROVIDER_PASS_FDS_MAX)
        return err_set(err, EINVAL, "spawn: %d fds to pass", npass);
    cgroup_t *cg = xmalloc(sizeof *cg);
    cgroup_limits_t lim = {spec->memory_bytes, spec->cpu_millicores, spec->pids_max};
    int e = cgroup_create(cg, NULL, spec->id, &lim, err);
    int fds[2] = {-1, -1}, log_fd = -1, log_read = -1, null_fd = -1;
    if (e < 0)
        goto out;
    if (cg->warning[0])
        add_warning(sb, cg->warning);
    sb->cgroup_version = cg->version;
    snprintf(sb->cgroup, sizeof sb->cgroup, "%s", cg->version ? cg->rel : "");
    /* the limits its cgroup enforces (a controller missing: none, and a warning says so) */
    sb->memory_bytes = cg->version && cg->dir[CG_MEMORY][0] ? spec->memory_bytes : 0;
    sb->cpu_millicores = cg->version && cg->dir[CG_CPU][0] ? spec->cpu_millicores : 0;

    /* Its stdout and stderr: a pipe the gateway reads (provider_log_sink), never a host file:
     * every process of the sandbox that inherits it (bwrap's pid 1 keeps it, dumpable) could
     * otherwise write the host's disk past any quota, and /proc/<pid>/fd would name the file.
     * The write end does not block: a reader that is gone or slow loses lines, never stalls
     * the executor. */
    int logp[2] = {-1, -1};
    null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0 || pipe2(logp, O_CLOEXEC) < 0 || pipe2(fds, O_CLOEXEC) < 0 ||
        fcntl(logp[1], F_SETFL, O_NONBLOCK) < 0 || fcntl(logp[0], F_SETFL, O_NONBLOCK) < 0) {
        e = err_set(err, errno, "spawn: pipe: %s", strerror(errno));
        if (logp[0] >= 0)
            close(logp[0]);
        if (logp[1] >= 0)
            close(logp[1]);
        goto out;
    }
    log_fd = logp[1];
    log_read = logp[0];
    pid_t mid = fork();
    if (mid < 0) {
        e = err_set(err, errno, "fork: %s", strerror(errno));
        goto out;
    }
    if (mid == 0) {
        setsid(); /* leave the gateway's session and terminal */
        pid_t pid = fork();
        if (pid == 0)
            spawn_child(fds[1], log_fd, null_fd, cg, sb, argv, envp, cwd, pass_fds, npass);
        if (pid < 0)
            send_rec(fds[1], REC_ERRNO_FORK, errno);
        else
            send_rec(fds[1], REC_PID, (int32_t)pid);
        _exit(0);
    }
    close(fds[1]);
    fds[1] = -1;
    while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
        ;
    /* Records until EOF, which comes when the grandchild's copy closes on exec (or exit). */
    spawn_rec_t r;
    pid_t pid = 0;
    int fail_kind = 0, fail_errno = 0;
    ssize_t n;
    while ((n = read(fds[0], &r, sizeof r)) == (ssize_t)sizeof r || (n < 0 && errno == EINTR)) {
        if (n < 0)
            continue;
        if (r.kind == REC_PID)
            pid = r.value;
        else
            fail_kind = r.kind, fail_errno = r.value;
    }
    if (fail_kind || pid <= 0) {
        static const char *const step[] = {
            "", "", "join cgroup", "exec", "fork", "set up stdio/cwd", "switch to the sandbox uid"};
        e = err_set(err, fail_errno ? fail_errno : EIO, "spawn %s: %s failed: %s", argv[0],
                    fail_kind ? step[fail_kind] : "start", strerror(fail_errno ? fail_errno : EIO));
        if (pid > 0)
            kill(pid, SIGKILL);
        goto out;
    }
    sb->pid = pid;
    provider_proc_stat(pid, NULL, &sb->start_time, NULL);
    provider_log_sink(sb->id, log_read);
    log_read = -1;
    e = 0;
out:
    if (e < 0 && cg->version) {
        cgroup_kill(cg, NULL);
        cgroup_remove(cg, NULL);
        sb->cgroup_version = 0;
        sb->cgroup[0] = '\0';
        sb->memory_bytes = sb->cpu_millicores = 0;
    }
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (log_fd >= 0)
        close(log_fd);
    if (log_read >= 0)
        close(log_read);
    if (null_fd >= 0)
        close(null_fd);
    free(cg);
    return e;
}

/* ---- destroy, pause, resume, usage ---- */

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

static bool
only_ctl_left(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool only = true;
    for (struct dirent *de; only && (de = readdir(d));)
        only = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
               !strcmp(de->d_name, PROVIDER_CTL_DIR);
    closedir(d);
    return only;
}

/* Removes dir's entries and dir, its ctl/ (the host's record of the sandbox: sandbox_host.h)
 * last: a gateway killed during a purge of many files still finds the record after its
 * restart, and with it the sandbox to destroy again; while anything else is left (an entry on
 * another filesystem, a mount still there, as FTW_MOUNT leaves it; a name too long) ctl/ stays
 * too, and the caller finds dir not empty. */
static void
purge_dir(const char *dir)
{
    struct stat top, st;
    if (lstat(dir, &top) < 0)
        return;
    DIR *d = S_ISDIR(top.st_mode) ? opendir(dir) : NULL;
    if (!d) {
        unlink(dir); /* not a directory (never followed) */
        return;
    }
    char path[PATH_MAX];
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
            !strcmp(de->d_name, PROVIDER_CTL_DIR) ||
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path ||
            lstat(path, &st) < 0 || st.st_dev != top.st_dev)
            continue;
        if (S_ISDIR(st.st_mode)) /* FTW_PHYS: links the sandbox left are removed, never followed */
            nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        else
            unlink(path);
    }
    closedir(d);
    if (!only_ctl_left(dir))
        return; /* the record stays with what is left: a later destroy finds both */
    if (snprintf(path, sizeof path, "%s/" PROVIDER_CTL_DIR, dir) < (int)sizeof path)
        nftw(path, rm_entry, 8, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    rmdir(dir);
}

int
provider_generic_destroy(const sandbox_t *sb, bool purge, err_t *err)
{
    cgroup_t *cg = xmalloc(sizeof *cg);
    int e = 0;
    if (sb->cgroup_version && cgroup_open(cg, NULL, sb->cgroup_version, sb->cgroup) == 0) {
        e = cgroup_kill(cg, err);
        if (e >= 0)
            e = cgroup_remove(cg, err);
    }
    if (provider_top_alive(sb))
        provider_kill_tree(sb); /* no cgroup, or it failed: the process tree as /proc shows it */
    if (!sb->cgroup_version && sb->uid != geteuid())
        provider_kill_uids(sb->uid, sb->uid_range); /* and what its top process no longer
                                                     * leads: its uids' */
    if (e >= 0 && provider_top_alive(sb))
        e = err_set(err, EBUSY, "sandbox %s: pid %d survived SIGKILL", sb->id, (int)sb->pid);
    free(cg);
    if (e < 0)
        return e;
    /* Every sandbox directory, whatever its JSON says: a disk left mounted would outlive us. */
    if (sb->dir[0] == '/')
        sandbox_root_unmount(sb->dir); /* before the disk its layer is on */
    if (sb->dir[0] == '/' && (e = sandbox_disk_remove(sb->dir, purge, err)) < 0)
        return e;
    if (purge && sb->dir[0] == '/' && strlen(sb->dir) > 1) {
        purge_dir(sb->dir);
        if (access(sb->dir, F_OK) == 0)
            return err_set(err, ENOTEMPTY, "purge %s: could not remove everything", sb->dir);
        /* The uid goes back to the range only with the last file it owned. */
        char *slash = strrchr(sb->dir, '/');
        if (sb->uid != geteuid() && slash) {
            char state[PATH_MAX];
            snprintf(state, sizeof state, "%.*s", (int)(slash - sb->dir), sb->dir);
            sandbox_uid_release(state[0] ? state : "/", sb->id, sb->uid);
        }
    }
    return 0;
}

static int
freeze(const sandbox_t *sb, bool on, err_t *err)
{
    cgroup_t *cg = xmalloc(sizeof *cg);
    int e;
    if (!sb->cgroup_version || cgroup_open(cg, NULL, sb->cgroup_version, sb->cgroup) < 0)
        e = err_set(err, ENOTSUP, "sandbox %s has no cgroup freezer", sb->id);
    else
        e = on ? cgroup_freeze(cg, err) : cgroup_thaw(cg, err);
    free(cg);
    return e;
}

int
provider_generic_pause(const sandbox_t *sb, err_t *err)
{
    return freeze(sb, true, err);
}

int
provider_generic_resume(const sandbox_t *sb, err_t *err)
{
    return freeze(sb, false, err);
}

json_object *
provider_generic_usage(const sandbox_t *sb)
{
    cgroup_t *cg = xmalloc(sizeof *cg);
    json_object *o;
    if (sb->cgroup_version && cgroup_open(cg, NULL, sb->cgroup_version, sb->cgroup) == 0) {
        o = cgroup_usage(cg);
    } else {
        o = json_object_new_object();
        json_set_int(o, "cgroup_version", 0);
    }
    json_set_bool(o, "alive", provider_generic_alive(sb) == 1);
    int64_t used, size;
    if (sb->disk_bytes && sandbox_disk_usage(sb->dir, &used, &size) == 0) {
        json_set_int(o, "disk_used_bytes", used);
        json_set_int(o, "disk_size_bytes", size);
    }
    free(cg);
    return o;
}
