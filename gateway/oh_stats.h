/* oh_stats.h — the body of OpenHands' /server_info (upstream's get_system_stats(), types
 * included: ints for bytes, floats for percents) from the sandbox's health (the executor's op
 * "health", docs/protocol.md). Pure: the caller keeps the CPU sample between calls. */
#ifndef SP_OH_STATS_H
#define SP_OH_STATS_H

#include <json-c/json.h>
#include <stdbool.h>

#define OH_CPU_WINDOW_MIN_S 0.1 /* shortest window cpu_percent is measured over */

/* A float as Python prints small ones: at least one decimal ("0.0", "12.5"). */
json_object *oh_py_float(double v);
/* cpu_percent: the sandbox's CPU seconds (all its processes, from health h) per wall second, in
 * percent of one core, over the window since the previous sample (prev_cpu seconds at prev_at;
 * prev_at 0: none), or since the executor started when there is no usable previous sample (a
 * window under OH_CPU_WINDOW_MIN_S, or less CPU time than before because processes ended).
 * *store: whether (*cpu_s, now) should replace the kept sample. */
double oh_cpu_percent(json_object *h, double now, double prev_cpu, double prev_at, bool *store,
                      double *cpu_s);
/* {"uptime", "idle_time", "resources": {...}}: the server_info body. h may be NULL (the
 * sandbox did not answer: zeros). Differences from upstream, as the executor sees the sandbox
 * rather than one server process: cpu_percent and memory.rss count every process of the
 * sandbox, memory.vms sums their virtual sizes as psutil would; memory.percent is that RSS over
 * the machine's memory (psutil's denominator too); disk is the workspace's filesystem; io is not
 * measured and stays 0. */
json_object *oh_server_info(json_object *h, double cpu_pct, double uptime, double idle);

#endif
