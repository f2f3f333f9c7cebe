/* health.c — health snapshot from /proc and statvfs. */
#include "health.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bash_session.h"
#include "plugins.h"
#include "executor.h"
#include "proc.h"
#include "json_util.h"

/* Adds one process's utime+stime (clock ticks), RSS (pages) and virtual size (bytes). */
static int
proc_usage(const char *pid, unsigned long long *ticks, long long *rss_pages,
           unsigned long long *vm_bytes)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    char *p = strrchr(line, ')'); /* comm may hold spaces */
    if (!p)
        return -1;
    unsigned long long ut = 0, st = 0, vsize = 0;
    long long rss = 0;
    /* fields after comm: state(3) ... utime(14) stime(15) ... vsize(23) rss(24) */
    if (sscanf(p + 2,
               "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %*u "
               "%llu %lld",
               &ut, &st, &vsize, &rss) != 4)
        return -1;
    *ticks += ut + st;
    *rss_pages += rss;
    *vm_bytes += vsize;
    return 0;
}

static long long
meminfo(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long v = -1;
    size_t klen = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            v = atoll(line + klen + 1) * 1024;
            break;
        }
    if (f)
        fclose(f);
    return v;
}

json_object *
health_snapshot(void)
{
    unsigned long long ticks = 0, vms = 0;
    long long rss = 0, self_rss = 0, count = 0;
    unsigned long long self_ticks = 0, self_vms = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (proc_usage(e->d_name, &ticks, &rss, &vms) == 0)
            count++;
    }
    if (d)
        closedir(d);
    char self[32];
    snprintf(self, sizeof self, "%d", getpid());
    proc_usage(self, &self_ticks, &self_rss, &self_vms);
    long page = sysconf(_SC_PAGESIZE), hz = sysconf(_SC_CLK_TCK);

    int nsessions = bash_count(), nprocs = proc_count();

    json_object *r = json_object_new_object();
    json_set_bool(r, "alive", true);
    json_set_str(r, "version", SANDPIPE_VERSION);
    json_set(r, "uptime", json_object_new_double(loop_now() - g_exec.started));
    json_set_int(r, "pid", getpid());
    json_set_int(r, "sessions", nsessions);
    json_set_int(r, "processes", count);
    json_set_int(r, "managed_processes", nprocs);
    json_object *cpu = json_object_new_object();
    json_set(cpu, "seconds", json_object_new_double((double)ticks / (double)hz));
    json_set_int(cpu, "count", sysconf(_SC_NPROCESSORS_ONLN));
    json_set(r, "cpu", cpu);
    json_object *mem = json_object_new_object();
    json_set_int(mem, "rss_bytes", rss * page);
    json_set_int(mem, "vms_bytes", (int64_t)vms);
    json_set_int(mem, "executor_rss_bytes", self_rss * page);
    json_set_int(mem, "total_bytes", meminfo("MemTotal"));
    json_set_int(mem, "available_bytes", meminfo("MemAvailable"));
    json_set(r, "memory", mem);
    struct statvfs vfs;
    json_object *disk = json_object_new_object();
    json_set_str(disk, "path", g_exec.workspace);
    if (statvfs(g_exec.workspace, &vfs) == 0) {
        json_set_int(disk, "total_bytes", (int64_t)(vfs.f_blocks * vfs.f_frsize));
        json_set_int(disk, "free_bytes", (int64_t)(vfs.f_bavail * vfs.f_frsize));
        json_set_int(disk, "used_bytes", (int64_t)((vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize));
    }
    json_set(r, "disk", disk);
    json_set(r, "plugins", plugins_status());
    return r;
}
