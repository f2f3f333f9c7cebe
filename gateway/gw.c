/* gw.c — the gateway's process-wide state (gw.h) and its clocks. Here rather than in main.c so
 * the gateway library, and the unit tests that link it, carry them too. */
#include "gw.h"

#include <time.h>

gw_t g_gw;

double
gw_now(void)
{
    return (double)uv_hrtime() / 1e9;
}

double
gw_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
