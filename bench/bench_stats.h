/* bench_stats.h — what the benchmark clients share: a monotonic clock in microseconds and
 * percentiles of a sorted sample. Header-only (static inline). */
#ifndef SP_BENCH_STATS_H
#define SP_BENCH_STATS_H

#include <stddef.h>
#include <time.h>

#include "clock.h"

static inline double
now_us(void)
{
    return (double)clock_mono_ns() / 1e3;
}

/* qsort comparator for doubles, ascending. */
static inline int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The p-th percentile of v[0..n), sorted ascending (0 for an empty sample). */
static inline double
pct(const double *v, size_t n, int p)
{
    return n ? v[n * (size_t)p / 100 < n ? n * (size_t)p / 100 : n - 1] : 0;
}

#endif
