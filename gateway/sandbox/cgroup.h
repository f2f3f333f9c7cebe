/* cgroup.h — one cgroup per sandbox: limits, membership, freeze/thaw, kill-all, usage.
 *
 * Layout. cgroup v2 where the unified hierarchy is mounted at the mount root (it holds
 * cgroup.controllers): <mount>/sandpipe/<id>, with memory, pids and cpu enabled in the
 * subtree_control files on the way down. cgroup v1 otherwise: one directory per controller,
 * <mount>/<controller>/sandpipe/<id> for memory, pids, cpu, cpuacct (usage only) and freezer.
 * When a controller's root is not writable, the group goes under the gateway's own cgroup for
 * that controller instead (<mount>/<controller>/<self>/sandpipe/<id>); cgroup_open finds either.
 * The root location is preferred because a sandbox outlives the gateway that created it.
 *
 * Degrading: cgroup_create succeeds whenever the id is valid. If nothing is writable the group
 * has version 0 and cg->warning says why (the caller logs it once); a missing controller
 * (say no freezer) leaves the group usable with a warning, and the operations that need it
 * return -ENOTSUP. A limit that was asked for on a controller that is present but refuses it
 * is an error: a sandbox does not silently run without the limit it was given.
 *
 * Plain synchronous file I/O on cgroupfs; every call is quick except freeze and kill, which
 * wait (bounded, a few seconds at most) for the kernel to report the state reached. */
#ifndef SP_CGROUP_H
#define SP_CGROUP_H

#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

#define CGROUP_MOUNT_DEFAULT "/sys/fs/cgroup"
#define CGROUP_DIR_MAX       512

enum { CG_MEMORY, CG_PIDS, CG_CPU, CG_CPUACCT, CG_FREEZER, CG_NCTRL };

typedef struct {
    int version;   /* 0 none, 1, 2 */
    char rel[128]; /* "sandpipe/<id>" */
    char dir[CG_NCTRL]
            [CGROUP_DIR_MAX]; /* absolute directories; v2: all the same one; "" = absent */
    char warning[256];        /* why something is missing; "" when all is well */
} cgroup_t;

typedef struct {
    int64_t memory_bytes;   /* 0 = no limit; swap is limited to nothing extra where possible */
    int64_t cpu_millicores; /* 1000 = one core; 0 = no limit */
    int64_t pids_max;       /* 0 = no limit */
} cgroup_limits_t;

/* Creates (or reuses, if it exists) the group for sandbox id under mount (NULL: /sys/fs/cgroup)
 * and applies lim. Returns 0 (check cg->version and cg->warning), or < 0 with err set for an
 * invalid id or a limit that could not be applied (the group is then removed again). */
int cgroup_create(cgroup_t *cg, const char *mount, const char *id, const cgroup_limits_t *lim,
                  err_t *err);

/* Finds an existing group again from what a sandbox_t stored (version, rel). Returns 0, or
 * -ENOENT when no directory of it exists any more (cg->version is then 0). */
int cgroup_open(cgroup_t *cg, const char *mount, int version, const char *rel);

/* Moves pid (0: the caller) into every directory of the group. Safe between fork() and exec():
 * no allocation, no stdio. Returns 0 or -errno (0 for version 0: nothing to join). */
int cgroup_enter(const cgroup_t *cg, pid_t pid);

/* Freezes / thaws every process, waiting until the kernel reports the state. -ENOTSUP without
 * a freezer, -ETIMEDOUT if it does not settle (the group is thawed again then). */
int cgroup_freeze(const cgroup_t *cg, err_t *err);
int cgroup_thaw(const cgroup_t *cg, err_t *err);

/* SIGKILLs every process in the group (and its child groups) until none is left. Returns the
 * number of processes found at the start (>= 0), or < 0 (-ETIMEDOUT if some survive). */
int cgroup_kill(const cgroup_t *cg, err_t *err);

/* Number of processes in the group now (0 for version 0), or < 0. */
int cgroup_nprocs(const cgroup_t *cg);

/* rmdir of every directory (child groups first); the group must be empty (cgroup_kill).
 * Retries briefly while the kernel still sees exiting tasks. Returns 0 or < 0. */
int cgroup_remove(const cgroup_t *cg, err_t *err);

/* {"cgroup_version", "memory_bytes", "memory_cache_bytes" (the page cache memory_bytes counts),
 *  "memory_limit_bytes", "memory_max_bytes", "oom_kills",
 *  "pids", "pids_max", "cpu_usage_usec", "frozen"}: the fields that can be read; new object. */
json_object *cgroup_usage(const cgroup_t *cg);

#endif
