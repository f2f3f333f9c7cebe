/* metrics.c — see metrics.h. */
#include "metrics.h"

#include <stdint.h>
#include <stdio.h>

#include "redis_client.h"

static const double bounds[METRICS_ACTION_NBUCKETS] = METRICS_ACTION_BUCKETS;
static uint64_t buckets[METRICS_ACTION_NBUCKETS + 1], sum_us, output, up, down, refused_tcp,
    refused_dns;

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
}
