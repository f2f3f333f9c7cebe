/* provider.h — sandbox providers behind one small interface: `bwrap` (bubblewrap namespaces +
 * cgroup limits), `local` (no isolation, development only), later `docker` and `kubernetes`.
 *
 * A provider starts a sandbox running sandpipe-executor and tells where its executor socket is
 * on the host. The provider creates that socket itself, listening, in <dir>/ctl/ (0700, the
 * gateway's user), and hands the listening fd to the executor (`--listen fd:3`): the sandbox
 * never sees, and cannot write, any path the gateway connects to; the gateway (or a restarted
 * one) connects to <dir>/ctl/executor.sock and nothing else. Sandboxes are NOT children that die
 * with the gateway: they are started detached (own session, reparented to init) so a restarted
 * gateway re-attaches to them from what it stored in its state directory (sandbox_t is plain
 * data for that reason: sandbox_host.h; Redis only names the sandbox). Calls are synchronous and
 * quick (fork/exec, cgroup writes); readiness of the executor is found out by connecting to the
 * socket, which is the caller's job. */
#ifndef SP_PROVIDER_H
#define SP_PROVIDER_H

#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "image.h"

typedef struct {
    const char *id;         /* sandbox id: [a-z0-9-]{1,48}, unique */
    const char *profile;    /* profile name ("default") */
    const char *image;      /* image name (image.h; "host": none) */
    const char *rootfs;     /* its root filesystem directory; NULL or "": the host's /usr */
    json_object *env;       /* extra environment variables (object of strings) or NULL */
    int64_t memory_bytes;   /* 0 = no limit */
    int64_t cpu_millicores; /* 1000 = one core; 0 = no limit */
    int64_t pids_max;       /* 0 = no limit */
    int64_t disk_bytes;     /* the sandbox's own filesystem for /workspace, /tmp, /var/tmp
                             * (sandbox_disk.h); 0 = none: workspace on the host's disk */
    /* No network field: every sandbox starts with a network namespace of its own, loopback
     * only; a session's network is a link netd adds later (gateway/session_network.c). */
    const char *state_dir; /* host directory for this provider's sandboxes (workspaces, sockets) */
    const char *executor_path; /* host path of the sandpipe-executor binary */
    /* Host uids for bwrap sandboxes: each gets its own uid (= gid) from [uid_base, uid_base +
     * uid_count), claimed in <state_dir>/uids. uid_count 0: PROVIDER_UID_BASE/COUNT.
     * shared_uid: run as the gateway's uid instead (hosts without unprivileged user
     * namespaces; the sandbox's processes are then the gateway's user outside their
     * namespaces). A gateway that is not root always shares its uid (sb->warning says so). */
    uid_t uid_base;
    uint32_t uid_count;
    bool shared_uid;
    /* Root inside (bwrap): the sandbox's user namespace maps its whole block of
     * SANDBOX_UID_WIDTH host uids, root inside = the block's first, the user SANDBOX_USER_INSIDE;
     * sudo works (executor/sudo_broker.h) and an image's root is writable on the sandbox's disk
     * (sandbox_root.h). false: one uid, the user's, as when the gateway is not root. */
    bool root_inside;
} sandbox_spec_t;

/* Default range: 2^30 up to 2^31 - 65536, no user's or subuid map's; 16,383 blocks. */
#define PROVIDER_UID_BASE   0x40000000u
#define PROVIDER_UID_COUNT  0x3fff0000u
#define SANDBOX_UID_WIDTH   65536u /* host uids per sandbox: 0..65535 inside */
#define SANDBOX_USER_INSIDE 1000u  /* the sandbox user's uid and gid inside */

/* A sandbox's host paths (<state_dir>/<id>/..., its cgroup): room for a state_dir of ~900
 * bytes, longer ones are refused at the sandbox's start ("state_dir path too long"). PATH_MAX
 * each made every session carry 16 KiB, most of an idle session's memory in the gateway. */
#define SANDBOX_PATH_MAX 1024

typedef struct {
    char id[64];
    char provider[16];
    char image[IMAGE_NAME_MAX + 1];     /* the image it runs ("host": the host's /usr) */
    pid_t pid;                          /* host pid of the sandbox's top process (bwrap) */
    uint64_t start_time;                /* pid's start time (/proc/<pid>/stat field 22), so a reused
                                         * pid is not mistaken for the sandbox; 0 = unknown */
    char dir[SANDBOX_PATH_MAX];         /* host directory of the sandbox: <state_dir>/<id> */
    char socket_path[SANDBOX_PATH_MAX]; /* <dir>/ctl/executor.sock, host-only; derived from dir by
                                         * sandbox_from_json, never read from a record */
    char workspace[SANDBOX_PATH_MAX];   /* host path of the workspace directory */
    uid_t uid; /* first host uid (= gid) of its block: the sandbox's user where
                * uid_range is 1, root inside where it is SANDBOX_UID_WIDTH;
                * released with the directory (purge) */
    gid_t gid;
    uint32_t uid_range; /* host ids its user namespace maps from uid on (1 or SANDBOX_UID_WIDTH) */
    char cgroup[SANDBOX_PATH_MAX]; /* "sandpipe/<id>", relative to the controllers' roots (or to the
                                    * gateway's own cgroup where those are not writable), "" if none
                                    */
    int cgroup_version;            /* 0 none, 1, 2 */
    int64_t disk_bytes;            /* size of its own filesystem at <dir>/disk; 0 = none */
    /* The limits it runs under (spec's, where they are enforced: a cgroup or Docker's); 0 =
     * none. Kept so the session shows its real limits (E2B's cpuCount, memoryMB). */
    int64_t memory_bytes;
    int64_t cpu_millicores;
    char warning[256]; /* set by create when isolation is degraded (log it) */
} sandbox_t;

typedef struct provider provider_t;
/* create_async's answer: sb (borrowed) once started, or NULL and why. */
typedef void (*provider_done_fn)(void *ud, const sandbox_t *sb, const char *error);
/* remove's answer: code 0 once removed, else why. */
typedef void (*provider_removed_fn)(void *ud, int code, const char *error);
struct provider {
    const char *name;
    /* Starts the sandbox; returns when the process is started (not necessarily ready). */
    int (*create)(const sandbox_spec_t *spec, sandbox_t *out, err_t *err);
    /* For providers whose start waits on a daemon (docker): starts it without blocking the loop
     * and calls done once, later (spec is not kept). Returns < 0 (err set, no done) when it
     * could not begin. NULL: create is used. */
    int (*create_async)(const sandbox_spec_t *spec, provider_done_fn done, void *ud, err_t *err);
    /* Kills every process of the sandbox and removes its cgroup and, if purge, its directory
     * (after remove, where there is one: what stays on the host). Blocks until done; safe on
     * a worker thread while others start sandboxes (the gateway runs it on one:
     * sandbox_destroy.h). */
    int (*destroy)(const sandbox_t *sb, bool purge, err_t *err);
    /* For sandboxes a daemon runs (docker): asks it to remove the sandbox, without blocking
     * the loop; done on the loop once it did (code 0) or failed, never from within this call.
     * Returns < 0 (err set, no done) when it could not ask. NULL: destroy does all. */
    int (*remove)(const sandbox_t *sb, provider_removed_fn done, void *ud, err_t *err);
    /* 1 if the sandbox still runs (its executor answers), 0 if not. */
    int (*alive)(const sandbox_t *sb);
    /* Freezes / thaws every process (cgroup freezer); -ENOTSUP where impossible. */
    int (*pause)(const sandbox_t *sb, err_t *err);
    int (*resume)(const sandbox_t *sb, err_t *err);
    /* What the sandbox uses now: {"alive", "cgroup_version", "memory_bytes", "pids",
     * "cpu_usage_usec", ...} (cgroup_usage's fields where there is a cgroup), "disk_used_bytes"
     * and "disk_size_bytes" where it has its own disk. New object. */
    json_object *(*usage)(const sandbox_t *sb);
    /* Optional, once at the gateway's start, after the sessions are restored: removes what an
     * earlier life of gateway_id left that nothing will use (docker: its labelled containers
     * that no longer run, and running ones whose sandbox owned() says no session or pool entry
     * holds). owned is called later, from the loop. */
    void (*cleanup)(const char *gateway_id, bool (*owned)(const char *sandbox_id));
    /* The sandbox's network namespace (an fd) for netd; NULL: provider_netns_open. */
    int (*netns_open)(const sandbox_t *sb, err_t *err);
};

extern const provider_t provider_bwrap;
extern const provider_t provider_local;
extern const provider_t provider_docker;

const provider_t *provider_find(const char *name);

/* sandbox_t as JSON, and where the host keeps it: sandbox_host.h. */

/* ---- shared by the provider implementations (provider.c, provider_env.c, provider_proc.c) ---- */

#define PROVIDER_CTL_DIR      "ctl" /* <dir>/ctl: the gateway's user only (0700) */
#define PROVIDER_SOCKET_NAME  "executor.sock"
#define PROVIDER_PASS_FDS_MAX 12

/* Validates spec (id, state_dir, executor_path) and creates <state_dir>/<id> and <id>/ctl (0700)
 * owned by the gateway's user, and the workspace; fills sb's id, dir, workspace, socket_path,
 * uid, gid. own_uid: claim a uid of the spec's range for the sandbox (the workspace is then that
 * uid's, and <id> 0710 with the sandbox's gid: no other sandbox's uid enters it), else the
 * sandbox is the gateway's user (<id> 0711). With
 * spec->disk_bytes, the workspace (and tmp/, var-tmp/) are on the sandbox's own disk, <dir>/disk
 * (sandbox_disk.h; sb->disk_bytes set); where this host cannot make one, the workspace is
 * <dir>/workspace as without, and sb->warning says so. Returns 0 or < 0 with err set (and
 * nothing left behind but an existing directory). */
int provider_prepare(const sandbox_spec_t *spec, sandbox_t *sb, bool own_uid, err_t *err);
/* The host uid and gid of the sandbox's user (SANDBOX_USER_INSIDE inside where the block is
 * mapped, else the block's first): the owner of its workspace and home. */
uid_t provider_user_uid(const sandbox_t *sb);
gid_t provider_user_gid(const sandbox_t *sb);

#define IMAGE_HOME        "/home/openhands"   /* images/setup.sh's user's home */
#define SANDBOX_TOOLS_BIN "/opt/sandpipe/bin" /* sandpipe's tools inside (sudo), last on PATH */
/* images/setup.sh's Python environment (a venv of the agent user's), where the image has one */
#define IMAGE_PYTHON_ENV "/opt/sandpipe/venv"

/* The host directory of an image sandbox's home: <dir>/home, or home/ on its own disk. False
 * when it does not fit. */
bool provider_home_path(const sandbox_t *sb, char *out, size_t n);
/* Makes that directory (0750, the sandbox's uid) with the files of spec->rootfs's /etc/skel. */
int provider_prepare_home(const sandbox_spec_t *spec, const sandbox_t *sb, err_t *err);

/* Sets sb->socket_path from sb->dir; -ENAMETOOLONG (and "") if it does not fit. */
int sandbox_socket_path(sandbox_t *sb);

/* Creates the executor's listening unix socket at sb->socket_path (mode 0600, in the ctl
 * directory made by provider_prepare). Returns the fd (O_CLOEXEC; the caller passes it to
 * provider_spawn, then closes it) or < 0 with err set. */
int provider_listen(const sandbox_t *sb, err_t *err);
/* A listening unix socket <dir>/ctl/<name> (mode 0600; chowned to uid:gid unless uid is
 * (uid_t)-1), bound through the directory's fd (no sun_path limit, no second lookup); sock_flags
 * are added to SOCK_STREAM | SOCK_CLOEXEC. The fd, or < 0 with err set. */
int provider_listen_at(const sandbox_t *sb, const char *name, uid_t uid, gid_t gid, int sock_flags,
                       int backlog, err_t *err);

/* Is id safe as one path component and a cgroup or container name: 1 to max ASCII letters,
 * digits, '-' and '_'? */
bool provider_safe_id(const char *id, size_t max);

/* Where the read end of a sandbox's stdout/stderr pipe goes (O_NONBLOCK, O_CLOEXEC; the sink owns
 * it). The gateway sets it to its log reader (gateway/sandbox_log.c); by default it is closed
 * (the sandbox's output is then dropped: writes fail, never block). */
extern void (*provider_log_sink)(const char *sandbox_id, int fd);

/* Creates the sandbox's cgroup (degrading to none with sb->warning set), starts argv[0] with envp
 * fully detached (own session, reparented to init), inside that cgroup, as sb->uid:sb->gid
 * (no supplementary groups) when that is not the gateway's uid, with cwd, stdin from
 * /dev/null and stdout/stderr a non-blocking pipe whose read end goes to provider_log_sink.
 * pass_fds[i] (npass of them, at most PROVIDER_PASS_FDS_MAX; borrowed) becomes fd 3 + i of the new
 * process; every other fd of the gateway is closed on exec. Fills pid, start_time, cgroup. Returns
 * once the exec succeeded (0) or failed (< 0, err says which step). */
int provider_spawn(const sandbox_spec_t *spec, sandbox_t *sb, char *const argv[],
                   char *const envp[], const char *cwd, const int *pass_fds, int npass, err_t *err);

/* The environment for a sandbox: PATH, HOME=home, LANG=C.UTF-8, TERM, then spec->env (which may
 * override them; keys must be non-empty without '='). An image with IMAGE_PYTHON_ENV has its
 * bin/ first on PATH and VIRTUAL_ENV naming it. NULL-terminated, caller frees with
 * provider_env_free. Returns NULL with err set on a bad spec->env. */
char **provider_env_new(const sandbox_spec_t *spec, const char *home, err_t *err);
void provider_env_free(char **envp);

/* 0 when env (may be NULL) is an object of valid NAME: "string" pairs, else -ERR_BAD_REQ. */
int provider_env_check(json_object *env, err_t *err);

/* From /proc/<pid>/stat: state letter, parent and start time (each may be NULL); -ENOENT when
 * gone. The command name, which the sandbox chooses, is skipped by its last ')'. */
int provider_proc_stat(pid_t pid, char *state, uint64_t *start, pid_t *ppid);

/* The sandbox's network namespace (an fd, O_CLOEXEC) from its process inside (the child of its
 * top process, checked to still be that child once opened), or < 0 with err set. For netd
 * (gateway/session_network.c). */
int provider_netns_open(const sandbox_t *sb, err_t *err);

/* Without a cgroup: stops the sandbox's whole process tree (no more forks), collects it again,
 * then SIGKILLs it; a few rounds while its top process lives. */
void provider_kill_tree(const sandbox_t *sb);
/* SIGKILLs every process whose real uid is in [uid, uid + count) (a sandbox's own block,
 * never root's or the gateway's), a few rounds until none is left: what a sandbox without a
 * cgroup left when its top process was killed first. */
void provider_kill_uids(uid_t uid, uint32_t count);

/* The generic destroy / alive / pause / resume both providers use. destroy unmounts the
 * sandbox's disk (and with purge removes its image). */
int provider_generic_destroy(const sandbox_t *sb, bool purge, err_t *err);
/* alive: the sandbox's executor answers on its socket (connect succeeds), whatever became of
 * its top process (an outer bwrap killed leaves the sandbox running). */
int provider_generic_alive(const sandbox_t *sb);
/* Whether the top process (sb->pid, still the same process by its start time) lives: for
 * killing its tree where there is no cgroup. */
int provider_top_alive(const sandbox_t *sb);
int provider_generic_pause(const sandbox_t *sb, err_t *err);
int provider_generic_resume(const sandbox_t *sb, err_t *err);
json_object *provider_generic_usage(const sandbox_t *sb); /* the cgroup's and disk's readings */

#endif
