/* session_stats.h — what a session's sandbox uses now (gateway op session.stats, docs/api.md):
 * CPU, memory and disk, from its cgroup (the provider's usage: the whole sandbox, exited
 * processes' CPU time included) where it has one, else from its executor's health (the
 * processes it sees), and its limits. E2B's getMetrics is built from it.
 *
 * The CPU percentage is measured over the window since the previous session.stats of the same
 * session (kept in the session, in memory: a gateway restart starts over), or, for the first,
 * since the sandbox started. */
#ifndef SP_SESSION_STATS_H
#define SP_SESSION_STATS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "session.h"

#define STATS_HEALTH_TIMEOUT_MS 2000 /* the executor's health, at most; then the cgroup alone */
#define STATS_CPU_WINDOW_MIN_S  0.1  /* a shorter window says nothing: the older sample stays */

/* The inputs of one sample (all borrowed); a reading that is not there is NULL or 0. */
typedef struct {
    json_object *usage;  /* the provider's usage (provider.h), NULL when none */
    json_object *health; /* the executor's health (docs/protocol.md), NULL when it did not answer */
    int64_t memory_limit, cpu_millicores; /* the sandbox's limits; 0: none */
    int host_cpus;                        /* online CPUs of this host */
    int64_t host_memory;                  /* physical memory of this host */
    double now, started;                  /* wall clock; when the sandbox started (0: unknown) */
    double prev_cpu_s, prev_at;           /* the session's previous sample (prev_at 0: none) */
} stats_in_t;

/* One sample: {"at", "cpu_count", "cpu_used_pct", "cpu_seconds", "memory_used_bytes",
 * "memory_cache_bytes", "memory_total_bytes", "disk_used_bytes", "disk_total_bytes"} (new
 * object). cpu_used_pct is of cpu_count cores, 0 to 100; memory used excludes the page cache.
 * *cpu_s: the CPU seconds the sample counted (to keep as the next window's start); *keep:
 * whether the window was long enough to be the next one's start. Pure. */
json_object *session_stats_compose(const stats_in_t *in, double *cpu_s, bool *keep);

/* Samples s and calls cb once with the sample (borrowed), now or later (at most
 * STATS_HEALTH_TIMEOUT_MS): a paused sandbox, or one whose executor does not answer, is
 * sampled from its cgroup alone. */
typedef void (*session_stats_cb)(void *ud, json_object *stats);
void session_stats(gw_session_t *s, session_stats_cb cb, void *ud);

#endif
