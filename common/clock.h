/* clock.h — the two clocks every program reads: monotonic (durations, deadlines: never jumps)
 * and wall (timestamps others read: epoch seconds). Header only; no state. */
#ifndef SP_CLOCK_H
#define SP_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic nanoseconds (CLOCK_MONOTONIC, the clock libuv's uv_hrtime reads). */
static inline uint64_t
clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Monotonic milliseconds. */
static inline int64_t
clock_mono_ms(void)
{
    return (int64_t)(clock_mono_ns() / 1000000u);
}

/* Monotonic seconds. */
static inline double
clock_mono(void)
{
    return (double)clock_mono_ns() / 1e9;
}

/* Wall-clock seconds since the epoch (CLOCK_REALTIME). */
static inline double
clock_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
