/* metrics.h — counters the gateway adds to the shared Prometheus figures (hash sp:metrics, read
 * by the API's /metrics): action latency histogram (submit to observation, every origin: REST,
 * /runtime/, WebSocket), bytes of command and terminal output streamed, bytes moved by file
 * transfers, events appended to the sessions' logs. Counted in memory, flushed with HINCRBY once
 * a second, so the hot paths pay an addition, not a Redis command.
 *
 * Their history: every METRICS_HISTORY_STEP_S seconds a copy of the whole hash goes into the
 * capped stream sp:metrics:history (the last METRICS_HISTORY_LEN copies), read by the API's
 * GET /api/v1/metrics/history for the overview's charts. Every gateway offers a copy each
 * second; a script takes it only when the stream's last copy is a step old, so several gateways
 * make one history, not one each. */
#ifndef SP_METRICS_H
#define SP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upper bounds (seconds) of the action latency buckets; the last bucket is +Inf. The API
 * prints them in this order, cumulatively. Fields in sp:metrics: "action_b<i>" (count in
 * bucket i, not cumulative), "action_b<N>" for +Inf, "action_sum_us". */
#define METRICS_ACTION_BUCKETS                                                                     \
    {                                                                                              \
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120        \
    }
#define METRICS_ACTION_NBUCKETS 16

#define METRICS_HISTORY_STEP_S 10
#define METRICS_HISTORY_LEN    2160 /* six hours */

void metrics_action_done(double seconds);
/* n events appended to a session's log (field "events"). */
void metrics_events(uint64_t n);
/* n events stored on a Redis primary with no replica to confirm them (field
 * "events_unreplicated"; redis_replicated.h). */
void metrics_events_unreplicated(uint64_t n);
void metrics_output(size_t bytes);
void metrics_transfer(bool upload, size_t bytes);
/* A connection (tcp) or a name (dns) netd refused a sandbox of this gateway: fields
 * "net_refused_tcp", "net_refused_dns". */
void metrics_network_refused(bool dns, uint64_t n);
/* Writes what was counted since the last flush to Redis, and offers the history a copy (from the
 * once-a-second tick). */
void metrics_flush(void);

#endif
