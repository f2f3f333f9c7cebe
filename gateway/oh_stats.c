/* oh_stats.c — OpenHands' /server_info body (oh_stats.h). */
#include "oh_stats.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json_util.h"

json_object *
oh_py_float(double v)
{
    char s[64];
    snprintf(s, sizeof s, "%.6f", v);
    char *end = s + strlen(s) - 1;
    while (end > s && *end == '0' && end[-1] != '.')
        *end-- = '\0';
    return json_object_new_double_s(v, s);
}

/* psutil rounds its percentages to one decimal. */
static double
round1(double v)
{
    return v > 0 ? (double)(long long)(v * 10 + 0.5) / 10 : 0.0;
}

double
oh_cpu_percent(json_object *h, double now, double prev_cpu, double prev_at, bool *store,
               double *cpu_s)
{
    *store = false;
    json_object *cpu = json_get(h, "cpu");
    if (!cpu)
        return 0.0;
    double cs = json_get_double(cpu, "seconds", 0), up = json_get_double(h, "uptime", 0);
    *cpu_s = cs;
    if (prev_at > 0 && now - prev_at < OH_CPU_WINDOW_MIN_S && cs >= prev_cpu)
        return up > 0 ? 100.0 * cs / up : 0.0; /* keep the older sample for the next call */
    *store = true;
    if (prev_at > 0 && cs >= prev_cpu && now > prev_at)
        return 100.0 * (cs - prev_cpu) / (now - prev_at);
    return up > 0 ? 100.0 * cs / up : 0.0;
}

static json_object *
resources(json_object *h, double cpu_pct)
{
    json_object *hm = json_get(h, "memory"), *hd = json_get(h, "disk");
    int64_t rss = json_get_int(hm, "rss_bytes", 0), total_mem = json_get_int(hm, "total_bytes", 0);
    int64_t total = json_get_int(hd, "total_bytes", 0), used = json_get_int(hd, "used_bytes", 0),
            free_ = json_get_int(hd, "free_bytes", 0);
    json_object *res = json_object_new_object(), *mem = json_object_new_object(),
                *disk = json_object_new_object(), *io = json_object_new_object();
    json_set(res, "cpu_percent", oh_py_float(round1(cpu_pct)));
    json_set_int(mem, "rss", rss);
    json_set_int(mem, "vms", json_get_int(hm, "vms_bytes", 0));
    json_set(mem, "percent",
             oh_py_float(total_mem > 0 ? 100.0 * (double)rss / (double)total_mem : 0));
    json_set_int(disk, "total", total);
    json_set_int(disk, "used", used);
    json_set_int(disk, "free", free_);
    json_set(disk, "percent",
             oh_py_float(used + free_ > 0 ? round1(100.0 * used / (used + free_)) : 0));
    json_set_int(io, "read_bytes", 0);
    json_set_int(io, "write_bytes", 0);
    json_set(res, "memory", mem);
    json_set(res, "disk", disk);
    json_set(res, "io", io);
    return res;
}

json_object *
oh_server_info(json_object *h, double cpu_pct, double uptime, double idle)
{
    json_object *o = json_object_new_object();
    json_set(o, "uptime", oh_py_float(uptime > 0 ? uptime : 0.0));
    json_set(o, "idle_time", oh_py_float(idle > 0 ? idle : 0.0));
    json_set(o, "resources", resources(h, cpu_pct));
    return o;
}
