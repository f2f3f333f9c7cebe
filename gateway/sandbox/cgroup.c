/* cgroup.c — per-sandbox cgroups, v2 or v1 (see cgroup.h for the layout and the rules).
 * Everything here is synchronous file I/O on cgroupfs. Paths are built with path_join (strlen +
 * memcpy only) so that cgroup_enter can run between fork() and exec(). */
#include "cgroup.h"
#include "provider.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json_util.h"
#include "xalloc.h"

#define CGROUP_ID_MAX 63 /* a session id as a cgroup name */

static const char *const ctrl_name[CG_NCTRL] = {"memory", "pids", "cpu", "cpuacct", "freezer"};

#define WAIT_MS 5000

/* out = a "/" b (b may be NULL or ""). Returns 0 or -ENAMETOOLONG. Async-signal-safe. */
static int
path_join(char *out, size_t n, const char *a, const char *b)
{
    size_t la = strlen(a), lb = b ? strlen(b) : 0;
    if (la + 1 + lb + 1 > n)
        return -ENAMETOOLONG;
    memcpy(out, a, la);
    if (lb) {
        out[la++] = '/';
        memcpy(out + la, b, lb);
    }
    out[la + lb] = '\0';
    return 0;
}

static int
write_at(const char *dir, const char *file, const char *val)
{
    char p[CGROUP_DIR_MAX + 64];
    if (path_join(p, sizeof p, dir, file) < 0)
        return -ENAMETOOLONG;
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = strlen(val);
    ssize_t w = write(fd, val, len);
    int e = w < 0 ? -errno : (size_t)w == len ? 0 : -EIO;
    close(fd);
    return e;
}

/* Reads a small file into buf (NUL-terminated). Returns its length or -errno. */
static ssize_t
read_at(const char *dir, const char *file, char *buf, size_t n)
{
    char p[CGROUP_DIR_MAX + 64];
    if (path_join(p, sizeof p, dir, file) < 0)
        return -ENAMETOOLONG;
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t got = 0;
    while (got + 1 < n) {
        ssize_t r = read(fd, buf + got, n - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return (ssize_t)got;
}

static bool
exists_at(const char *dir, const char *file)
{
    char p[CGROUP_DIR_MAX + 64];
    return path_join(p, sizeof p, dir, file) == 0 && access(p, F_OK) == 0;
}

/* The value after "key " in a "key value\n" file, or def. */
static int64_t
keyed_value(const char *text, const char *key, int64_t def)
{
    size_t kl = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, key, kl) == 0 && l[kl] == ' ')
            return strtoll(l + kl + 1, NULL, 10);
    return def;
}

static void
sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void
add_warning(cgroup_t *cg, const char *what)
{
    size_t l = strlen(cg->warning);
    snprintf(cg->warning + l, sizeof cg->warning - l, "%s%s", l ? "; " : "", what);
}

/* Our own cgroup path for a v1 controller (or v2 when ctrl is NULL), from /proc/self/cgroup. */
static void
self_cgroup(const char *ctrl, char *out, size_t n)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        bool match = false;
        if (!ctrl) {
            match = c1[1] == '\0' && strncmp(line, "0:", 2) == 0;
        } else {
            for (char *save = NULL, *t = strtok_r(c1 + 1, ",", &save); t;
                 t = strtok_r(NULL, ",", &save))
                match = match || strcmp(t, ctrl) == 0;
        }
        if (match) {
            c2[1 + strcspn(c2 + 1, "\n")] = '\0';
            snprintf(out, n, "%s", c2 + 1);
            break;
        }
    }
    fclose(f);
}

/* mkdir <root>/sandpipe/<id>, falling back to <root>/<self>/sandpipe/<id>. For v2, enable_ctl
 * is written to each parent's cgroup.subtree_control on the way (best effort). */
static int
make_group(const char *root, const char *self, const char *id, const char *enable_ctl, char *out)
{
    const char *bases[2] = {"", self};
    int e = -ENOENT;
    for (int b = 0; b < 2; b++) {
        if (b == 1 && (!self[0] || strcmp(self, "/") == 0))
            break;
        char base[CGROUP_DIR_MAX], parent[CGROUP_DIR_MAX];
        if (path_join(base, sizeof base, root, bases[b][0] == '/' ? bases[b] + 1 : bases[b]) < 0 ||
            path_join(parent, sizeof parent, base, "sandpipe") < 0 ||
            path_join(out, CGROUP_DIR_MAX, parent, id) < 0)
            return -ENAMETOOLONG;
        if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
            e = -errno;
            continue;
        }
        for (const char *c = enable_ctl; c && *c; c += strlen(c) + 1) {
            write_at(base, "cgroup.subtree_control", c);
            write_at(parent, "cgroup.subtree_control", c);
        }
        if (mkdir(out, 0755) == 0 || errno == EEXIST)
            return 0;
        e = -errno;
    }
    out[0] = '\0';
    return e;
}

/* Writes a limit; a failure is an error when limited, ignored when resetting to unlimited. */
static int
set_limit(cgroup_t *cg, int ctrl, const char *file, int64_t v, const char *unlimited, err_t *err)
{
    if (!cg->dir[ctrl][0]) {
        if (v > 0) {
            char w[96];
            snprintf(w, sizeof w, "no %s controller: %s not applied", ctrl_name[ctrl], file);
            add_warning(cg, w);
        }
        return 0;
    }
    char val[32];
    snprintf(val, sizeof val, "%lld", (long long)v);
    int e = write_at(cg->dir[ctrl], file, v > 0 ? val : unlimited);
    if (e < 0 && v > 0)
        return err_set(err, -e, "cgroup %s/%s = %s: %s", cg->dir[ctrl], file, val, strerror(-e));
    return 0;
}

static int
apply_limits(cgroup_t *cg, const cgroup_limits_t *lim, err_t *err)
{
    int64_t mem = lim->memory_bytes, pids = lim->pids_max, cpu = lim->cpu_millicores;
    const char *md = cg->dir[CG_MEMORY];
    int e;
    if (cg->version == 2) {
        if ((e = set_limit(cg, CG_MEMORY, "memory.max", mem, "max", err)) < 0 ||
            (e = set_limit(cg, CG_PIDS, "pids.max", pids, "max", err)) < 0)
            return e;
        if (md[0] && mem > 0 && exists_at(md, "memory.swap.max"))
            write_at(md, "memory.swap.max", "0");
        if (cg->dir[CG_CPU][0]) {
            char v[48];
            snprintf(v, sizeof v, "%lld 100000", (long long)(cpu > 0 ? cpu * 100 : 0));
            if ((e = write_at(cg->dir[CG_CPU], "cpu.max", cpu > 0 ? v : "max 100000")) < 0 &&
                cpu > 0)
                return err_set(err, -e, "cgroup cpu.max = %s: %s", v, strerror(-e));
        } else if (cpu > 0) {
            add_warning(cg, "no cpu controller: cpu limit not applied");
        }
        return 0;
    }
    /* v1: memsw (memory+swap) must stay >= the memory limit; equal means no swap at all. */
    bool memsw = md[0] && exists_at(md, "memory.memsw.limit_in_bytes");
    if (memsw && mem <= 0)
        write_at(md, "memory.memsw.limit_in_bytes", "-1");
    if ((e = set_limit(cg, CG_MEMORY, "memory.limit_in_bytes", mem, "-1", err)) < 0) {
        /* Raising a reused group's limit: memsw has to go up first. */
        if (!memsw ||
            (e = set_limit(cg, CG_MEMORY, "memory.memsw.limit_in_bytes", mem, "-1", err)) < 0 ||
            (e = set_limit(cg, CG_MEMORY, "memory.limit_in_bytes", mem, "-1", err)) < 0)
            return e;
    } else if (memsw && mem > 0 &&
               (e = set_limit(cg, CG_MEMORY, "memory.memsw.limit_in_bytes", mem, "-1", err)) < 0) {
        return e;
    }
    if (md[0] && mem > 0)
        write_at(md, "memory.swappiness", "0"); /* refused on some kernels: memsw covers it */
    if ((e = set_limit(cg, CG_PIDS, "pids.max", pids, "max", err)) < 0)
        return e;
    if (cg->dir[CG_CPU][0] && cpu > 0)
        write_at(cg->dir[CG_CPU], "cpu.cfs_period_us", "100000");
    int64_t quota = cpu > 0 ? (cpu * 100 < 1000 ? 1000 : cpu * 100) : 0; /* kernel minimum 1 ms */
    return set_limit(cg, CG_CPU, "cpu.cfs_quota_us", quota, "-1", err);
}

/* True if word is one of the space-separated words of list. */
static bool
has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
            return true;
    return false;
}

int
cgroup_create(cgroup_t *cg, const char *mount, const char *id, const cgroup_limits_t *lim,
              err_t *err)
{
    memset(cg, 0, sizeof *cg);
    if (!provider_safe_id(id, CGROUP_ID_MAX))
        return err_set(err, EINVAL, "cgroup: invalid sandbox id '%s'", id);
    if (!mount)
        mount = CGROUP_MOUNT_DEFAULT;
    snprintf(cg->rel, sizeof cg->rel, "sandpipe/%s", id);
    char self[CGROUP_DIR_MAX], p[CGROUP_DIR_MAX];
    int e;

    if (exists_at(mount, "cgroup.controllers")) {
        char avail[256] = "", enable[64] = "";
        read_at(mount, "cgroup.controllers", avail, sizeof avail);
        size_t en = 0;
        for (int c = 0; c < CG_NCTRL; c++) /* "+memory\0+pids\0+cpu\0" for those available */
            if (c != CG_CPUACCT && c != CG_FREEZER && has_word(avail, ctrl_name[c]))
                en += (size_t)snprintf(enable + en, sizeof enable - en, "+%s%c", ctrl_name[c], 0);
        self_cgroup(NULL, self, sizeof self);
        if ((e = make_group(mount, self, id, enable, p)) < 0) {
            snprintf(cg->warning, sizeof cg->warning,
                     "cgroup v2 at %s not writable (%s): no limits", mount, strerror(-e));
            return 0;
        }
        cg->version = 2;
        char have[256] = "";
        read_at(p, "cgroup.controllers", have, sizeof have);
        for (int c = 0; c < CG_NCTRL; c++) {
            bool core = c == CG_FREEZER || c == CG_CPUACCT; /* cgroup.freeze, cpu.stat: always */
            if (core || has_word(have, ctrl_name[c]))
                snprintf(cg->dir[c], sizeof cg->dir[c], "%s", p);
        }
    } else {
        int made = 0;
        for (int c = 0; c < CG_NCTRL; c++) {
            char root[CGROUP_DIR_MAX];
            if (path_join(root, sizeof root, mount, ctrl_name[c]) < 0 || access(root, F_OK) < 0)
                continue;
            self_cgroup(ctrl_name[c], self, sizeof self);
            if (make_group(root, self, id, NULL, cg->dir[c]) == 0)
                made++;
        }
        if (!made) {
            snprintf(cg->warning, sizeof cg->warning,
                     "no writable cgroup (v1 or v2) under %s: no limits, no freezer", mount);
            return 0;
        }
        cg->version = 1;
    }
    if (cgroup_nprocs(cg) > 0) { /* an existing group of a live sandbox: never share it */
        memset(cg->dir, 0, sizeof cg->dir);
        cg->version = 0;
        return err_set(err, EBUSY, "cgroup %s exists and has processes", cg->rel);
    }
    if (!cg->dir[CG_FREEZER][0])
        add_warning(cg, "no freezer: pause/resume unavailable");
    if ((e = apply_limits(cg, lim, err)) < 0) {
        cgroup_remove(cg, NULL);
        memset(cg->dir, 0, sizeof cg->dir);
        cg->version = 0;
        return e;
    }
    return 0;
}

int
cgroup_open(cgroup_t *cg, const char *mount, int version, const char *rel)
{
    memset(cg, 0, sizeof *cg);
    if (!mount)
        mount = CGROUP_MOUNT_DEFAULT;
    if ((version != 1 && version != 2) || !rel || strncmp(rel, "sandpipe/", 9) != 0 ||
        !provider_safe_id(rel + 9, CGROUP_ID_MAX))
        return -ENOENT;
    snprintf(cg->rel, sizeof cg->rel, "%s", rel);
    int found = 0;
    for (int c = 0; c < CG_NCTRL; c++) {
        char root[CGROUP_DIR_MAX], self[CGROUP_DIR_MAX], p[CGROUP_DIR_MAX], q[CGROUP_DIR_MAX];
        if (version == 2)
            snprintf(root, sizeof root, "%s", mount);
        else if (path_join(root, sizeof root, mount, ctrl_name[c]) < 0)
            continue;
        self_cgroup(version == 2 ? NULL : ctrl_name[c], self, sizeof self);
        if (path_join(p, sizeof p, root, rel) == 0 && access(p, F_OK) == 0) {
            snprintf(cg->dir[c], sizeof cg->dir[c], "%s", p);
        } else if (self[0] && path_join(q, sizeof q, root, self + (self[0] == '/')) == 0 &&
                   path_join(p, sizeof p, q, rel) == 0 && access(p, F_OK) == 0) {
            snprintf(cg->dir[c], sizeof cg->dir[c], "%s", p);
        } else {
            continue;
        }
        found++;
    }
    if (!found)
        return -ENOENT;
    cg->version = version;
    return 0;
}

int
cgroup_enter(const cgroup_t *cg, pid_t pid)
{
    char val[24];
    /* pid to decimal without stdio (async-signal-safe). */
    char *d = val + sizeof val - 1;
    *d = '\0';
    unsigned long v = pid > 0 ? (unsigned long)pid : 0;
    do
        *--d = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    for (int c = 0; c < CG_NCTRL; c++) {
        if (!cg->dir[c][0] || (c > 0 && strcmp(cg->dir[c], cg->dir[c - 1]) == 0))
            continue;
        int e = write_at(cg->dir[c], "cgroup.procs", d);
        if (e < 0)
            return e;
    }
    return 0;
}

static int
wait_state(const char *dir, const char *file, const char *want_key, const char *want,
           const char *rewrite, long timeout_ms)
{
    char buf[512];
    for (long waited = 0;; waited += 2) {
        ssize_t r = read_at(dir, file, buf, sizeof buf);
        if (r < 0)
            return (int)r;
        if (want_key ? keyed_value(buf, want_key, -1) == strtoll(want, NULL, 10)
                     : strncmp(buf, want, strlen(want)) == 0)
            return 0;
        if (waited >= timeout_ms)
            return -ETIMEDOUT;
        if (rewrite && waited % 100 == 98) /* old v1 kernels may stall in FREEZING */
            write_at(dir, file, rewrite);
        sleep_ms(2);
    }
}

static int
set_frozen(const cgroup_t *cg, bool frozen, long timeout_ms)
{
    const char *fd = cg->dir[CG_FREEZER];
    if (cg->version == 0 || !fd[0])
        return -ENOTSUP;
    int e;
    if (cg->version == 2) {
        if ((e = write_at(fd, "cgroup.freeze", frozen ? "1" : "0")) < 0)
            return e;
        e = wait_state(fd, "cgroup.events", "frozen", frozen ? "1" : "0", NULL, timeout_ms);
        if (e == -ETIMEDOUT && frozen)
            write_at(fd, "cgroup.freeze", "0");
        return e;
    }
    const char *s = frozen ? "FROZEN" : "THAWED";
    if ((e = write_at(fd, "freezer.state", s)) < 0)
        return e;
    e = wait_state(fd, "freezer.state", NULL, s, s, timeout_ms);
    if (e == -ETIMEDOUT && frozen)
        write_at(fd, "freezer.state", "THAWED");
    return e;
}

int
cgroup_freeze(const cgroup_t *cg, err_t *err)
{
    int e = set_frozen(cg, true, WAIT_MS);
    return e < 0 ? err_set(err, -e, "cgroup freeze %s: %s", cg->rel, strerror(-e)) : 0;
}

int
cgroup_thaw(const cgroup_t *cg, err_t *err)
{
    int e = set_frozen(cg, false, WAIT_MS);
    return e < 0 ? err_set(err, -e, "cgroup thaw %s: %s", cg->rel, strerror(-e)) : 0;
}

/* Calls fn for every pid in dir's cgroup.procs and in its child groups; returns the count. */
static int
walk_procs(const char *dir, void (*fn)(pid_t), int depth)
{
    char p[CGROUP_DIR_MAX + 64];
    if (depth > 16 || path_join(p, sizeof p, dir, "cgroup.procs") < 0)
        return 0;
    int n = 0;
    FILE *f = fopen(p, "re");
    if (f) {
        long pid;
        while (fscanf(f, "%ld", &pid) == 1) {
            if (fn && pid > 0)
                fn((pid_t)pid);
            n++;
        }
        fclose(f);
    }
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
            path_join(p, sizeof p, dir, de->d_name) == 0)
            n += walk_procs(p, fn, depth + 1);
    }
    if (d)
        closedir(d);
    return n;
}

static void
kill_pid(pid_t pid)
{
    kill(pid, SIGKILL);
}

int
cgroup_nprocs(const cgroup_t *cg)
{
    int most = 0;
    for (int c = 0; c < CG_NCTRL; c++) {
        if (cg->dir[c][0]) {
            int n = walk_procs(cg->dir[c], NULL, 0);
            most = n > most ? n : most;
        }
    }
    return most;
}

int
cgroup_kill(const cgroup_t *cg, err_t *err)
{
    if (cg->version == 0)
        return 0;
    int found = cgroup_nprocs(cg);
    bool kill_file = cg->version == 2 && exists_at(cg->dir[CG_FREEZER], "cgroup.kill");
    if (kill_file)
        write_at(cg->dir[CG_FREEZER], "cgroup.kill", "1");
    for (long waited = 0; cgroup_nprocs(cg) > 0; waited += 5) {
        if (waited > WAIT_MS)
            return err_set(err, ETIMEDOUT, "cgroup kill %s: %d processes left", cg->rel,
                           cgroup_nprocs(cg));
        if (!kill_file) {
            /* Frozen processes cannot fork while we kill them; they die when thawed. */
            bool frozen = set_frozen(cg, true, 200) == 0;
            for (int c = 0; c < CG_NCTRL; c++)
                if (cg->dir[c][0] && (c == 0 || strcmp(cg->dir[c], cg->dir[c - 1]) != 0))
                    walk_procs(cg->dir[c], kill_pid, 0);
            if (frozen)
                set_frozen(cg, false, 200);
        }
        sleep_ms(5);
    }
    return found;
}

static int
rmdir_tree(const char *dir, int depth)
{
    DIR *d = depth < 16 ? opendir(dir) : NULL;
    struct dirent *de;
    char p[CGROUP_DIR_MAX];
    while (d && (de = readdir(d))) {
        if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
            path_join(p, sizeof p, dir, de->d_name) == 0)
            rmdir_tree(p, depth + 1);
    }
    if (d)
        closedir(d);
    return rmdir(dir) == 0 || errno == ENOENT ? 0 : -errno;
}

int
cgroup_remove(const cgroup_t *cg, err_t *err)
{
    int e = 0;
    for (int c = 0; c < CG_NCTRL; c++) {
        if (!cg->dir[c][0] || (c > 0 && strcmp(cg->dir[c], cg->dir[c - 1]) == 0))
            continue;
        for (int tries = 0; (e = rmdir_tree(cg->dir[c], 0)) == -EBUSY && tries < 200; tries++)
            sleep_ms(10); /* tasks that were just killed may still be leaving */
        if (e < 0)
            return err_set(err, -e, "cgroup rmdir %s: %s", cg->dir[c], strerror(-e));
    }
    return 0;
}

static int64_t
read_int(const char *dir, const char *file)
{
    char buf[64];
    if (!dir[0] || read_at(dir, file, buf, sizeof buf) <= 0)
        return -1;
    return strncmp(buf, "max", 3) == 0 ? 0 : strtoll(buf, NULL, 10);
}

static void
put_int(json_object *o, const char *key, int64_t v)
{
    if (v >= 0)
        json_set_int(o, key, v);
}

json_object *
cgroup_usage(const cgroup_t *cg)
{
    json_object *o = json_object_new_object();
    json_set_int(o, "cgroup_version", cg->version);
    if (cg->version == 0)
        return o;
    const char *md = cg->dir[CG_MEMORY], *pd = cg->dir[CG_PIDS], *fd = cg->dir[CG_FREEZER];
    char buf[2048];
    bool v2 = cg->version == 2;
    put_int(o, "memory_bytes", read_int(md, v2 ? "memory.current" : "memory.usage_in_bytes"));
    int64_t lim = read_int(md, v2 ? "memory.max" : "memory.limit_in_bytes");
    put_int(o, "memory_limit_bytes", lim >= (INT64_C(1) << 60) ? 0 : lim);
    put_int(o, "memory_max_bytes", read_int(md, v2 ? "memory.peak" : "memory.max_usage_in_bytes"));
    /* the page cache in that figure (what E2B's memCache is): v2 "file", v1 "total_cache" (its
     * child groups too, as usage_in_bytes counts them) */
    char stat[8192];
    if (md[0] && read_at(md, "memory.stat", stat, sizeof stat) > 0)
        put_int(o, "memory_cache_bytes",
                v2 ? keyed_value(stat, "file", -1)
                   : keyed_value(stat, "total_cache", keyed_value(stat, "cache", -1)));
    if (md[0] && read_at(md, v2 ? "memory.events" : "memory.oom_control", buf, sizeof buf) > 0)
        put_int(o, "oom_kills", keyed_value(buf, "oom_kill", -1));
    put_int(o, "pids", read_int(pd, "pids.current"));
    put_int(o, "pids_max", read_int(pd, "pids.max"));
    if (v2 && cg->dir[CG_CPUACCT][0] &&
        read_at(cg->dir[CG_CPUACCT], "cpu.stat", buf, sizeof buf) > 0)
        put_int(o, "cpu_usage_usec", keyed_value(buf, "usage_usec", -1));
    else if (!v2) {
        int64_t ns = read_int(cg->dir[CG_CPUACCT], "cpuacct.usage");
        put_int(o, "cpu_usage_usec", ns >= 0 ? ns / 1000 : -1);
    }
    if (fd[0] && read_at(fd, v2 ? "cgroup.events" : "freezer.state", buf, sizeof buf) > 0)
        json_set_bool(o, "frozen",
                      v2 ? keyed_value(buf, "frozen", 0) == 1 : strncmp(buf, "FROZEN", 6) == 0);
    return o;
}
