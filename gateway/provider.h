/* provider.h — sandbox providers behind one small interface: `bwrap` (bubblewrap namespaces +
 * cgroup limits), `local` (no isolation, development only), later `docker` and `kubernetes`.
 *
 * A provider starts a sandbox running sandpipe-executor and tells where its executor socket is
 * on the host. Sandboxes are NOT children that die with the gateway: they are started detached
 * (own session, reparented to init) so a restarted gateway re-attaches to them from what it
 * stored in Redis (sandbox_t is plain data for that reason: sandbox_to_json/from_json).
 * Calls are synchronous and quick (fork/exec, cgroup writes); readiness of the executor is
 * found out by connecting to the socket, which is the caller's job. */
#ifndef SP_PROVIDER_H
#define SP_PROVIDER_H

#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

typedef struct {
    const char *id;            /* sandbox id: [a-z0-9-]{1,48}, unique */
    const char *profile;       /* image/profile name ("default") */
    json_object *env;          /* extra environment variables (object of strings) or NULL */
    int64_t memory_bytes;      /* 0 = no limit */
    int64_t cpu_millicores;    /* 1000 = one core; 0 = no limit */
    int64_t pids_max;          /* 0 = no limit */
    bool network;              /* false (default): own empty network namespace, loopback only */
    const char *state_dir;     /* host directory for this provider's sandboxes (workspaces, sockets) */
    const char *executor_path; /* host path of the sandpipe-executor binary */
} sandbox_spec_t;

typedef struct {
    char id[64];
    char provider[16];
    pid_t pid;                  /* host pid of the sandbox's top process (bwrap) */
    char socket_path[PATH_MAX]; /* host path of the executor's unix socket */
    char workspace[PATH_MAX];   /* host path of the workspace directory */
    char cgroup[PATH_MAX];      /* cgroup path relative to the controllers' roots, "" if none */
    int cgroup_version;         /* 0 none, 1, 2 */
} sandbox_t;

typedef struct provider provider_t;
struct provider {
    const char *name;
    /* Starts the sandbox; returns when the process is started (not necessarily ready). */
    int (*create)(const sandbox_spec_t *spec, sandbox_t *out, err_t *err);
    /* Kills every process of the sandbox and removes its cgroup and, if purge, its directory. */
    int (*destroy)(const sandbox_t *sb, bool purge, err_t *err);
    /* 1 if the sandbox's top process still runs, 0 if not. */
    int (*alive)(const sandbox_t *sb);
    /* Freezes / thaws every process (cgroup freezer); -ENOTSUP where impossible. */
    int (*pause)(const sandbox_t *sb, err_t *err);
    int (*resume)(const sandbox_t *sb, err_t *err);
};

extern const provider_t provider_bwrap;
extern const provider_t provider_local;

const provider_t *provider_find(const char *name);

json_object *sandbox_to_json(const sandbox_t *sb);
int sandbox_from_json(json_object *o, sandbox_t *sb, err_t *err);

#endif
