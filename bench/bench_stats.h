/* bench_stats.h — what the benchmark clients share: a monotonic clock in microseconds,
 * percentiles of a sorted sample, a sample that grows as a thread measures, and a shuffle for
 * rounds that alternate. Header-only
 * (static inline). */
#ifndef SP_BENCH_STATS_H
#define SP_BENCH_STATS_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Puts order[0..n) in a new random order (Fisher-Yates; seed is the caller's, for runs that
 * repeat). Alternating rounds take their order from it: a target measured always right after
 * the same other one pays for what that one leaves behind (its shell's wake-ups, a CPU's idle
 * state), which in a fixed order favoured the first of two identical gateways by 11-50 us. */
static inline void
shuffle(int *order, int n, unsigned *seed)
{
    for (int k = n - 1; k > 0; k--) {
        int j = rand_r(seed) % (k + 1), x = order[k];
        order[k] = order[j];
        order[j] = x;
    }
}

/* A sample that grows as it is measured: one per thread, so no locking. */
typedef struct {
    double *v;
    size_t n, cap;
} sample_t;

static inline void
sample_add(sample_t *s, double x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) {
            fprintf(stderr, "out of memory\n");
            abort();
        }
    }
    s->v[s->n++] = x;
}

/* Moves part's values to the end of all (part is left empty). */
static inline void
sample_take(sample_t *all, sample_t *part)
{
    for (size_t i = 0; i < part->n; i++)
        sample_add(all, part->v[i]);
    free(part->v);
    *part = (sample_t){0};
}

static inline void
sample_sort(sample_t *s)
{
    qsort(s->v, s->n, sizeof *s->v, cmp_double);
}

#endif
