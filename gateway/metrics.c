/* metrics.c — see metrics.h. */
#include "metrics.h"

#include <stdint.h>
#include <stdio.h>

#include "redis_client.h"

static const double bounds[METRICS_ACTION_NBUCKETS] = METRICS_ACTION_BUCKETS;
static uint64_t buckets[METRICS_ACTION_NBUCKETS + 1], sum_us, output, up, down, refused_tcp,
    refused_dns, events, unreplicated;

/* ARGV: step (ms), length. Copies sp:metrics into sp:metrics:history (stream id: Redis' clock,
 * field "t" the same in ms) unless its last copy is less than a step old. */
static const char HISTORY_LUA[] =
    "local now = redis.call('TIME')\n"
    "local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)\n"
    "local last = redis.call('XREVRANGE', 'sp:metrics:history', '+', '-', 'COUNT', 1)\n"
    "if #last > 0 and ms - tonumber(string.match(last[1][1], '^%d+')) < tonumber(ARGV[1]) then\n"
    "  return 0\n"
    "end\n"
    "redis.call('XADD', 'sp:metrics:history', 'MAXLEN', '~', ARGV[2], '*', 't', tostring(ms),\n"
    "           unpack(redis.call('HGETALL', 'sp:metrics')))\n"
    "return 1\n";

void
metrics_action_done(double seconds)
{
    int i = 0;
    while (i < METRICS_ACTION_NBUCKETS && seconds > bounds[i])
        i++;
    buckets[i]++;
    sum_us += seconds > 0 ? (uint64_t)(seconds * 1e6) : 0;
}

void
metrics_events(uint64_t n)
{
    events += n;
}

void
metrics_events_unreplicated(uint64_t n)
{
    unreplicated += n;
}

void
metrics_output(size_t bytes)
{
    output += bytes;
}

void
metrics_network_refused(bool dns, uint64_t n)
{
    if (dns)
        refused_dns += n;
    else
        refused_tcp += n;
}

void
metrics_transfer(bool upload, size_t bytes)
{
    if (upload)
        up += bytes;
    else
        down += bytes;
}

static void
flush_one(const char *field, uint64_t *v)
{
    if (!*v)
        return;
    char n[32];
    snprintf(n, sizeof n, "%llu", (unsigned long long)*v);
    redis_client_cmd(NULL, NULL, "HINCRBY sp:metrics %s %s", field, n);
    *v = 0;
}

void
metrics_flush(void)
{
    if (!redis_client_connected())
        return; /* keep counting: the next flush carries it */
    for (int i = 0; i <= METRICS_ACTION_NBUCKETS; i++) {
        char f[24];
        snprintf(f, sizeof f, "action_b%d", i);
        flush_one(f, &buckets[i]);
    }
    flush_one("action_sum_us", &sum_us);
    flush_one("output_bytes", &output);
    flush_one("upload_bytes", &up);
    flush_one("download_bytes", &down);
    flush_one("net_refused_tcp", &refused_tcp);
    flush_one("net_refused_dns", &refused_dns);
    flush_one("events", &events);
    flush_one("events_unreplicated", &unreplicated);
    char step[16], len[16];
    snprintf(step, sizeof step, "%d", METRICS_HISTORY_STEP_S * 1000);
    snprintf(len, sizeof len, "%d", METRICS_HISTORY_LEN);
    const char *argv[] = {"EVAL", HISTORY_LUA, "0", step, len};
    redis_client_cmdv(NULL, NULL, 5, argv, NULL);
}
