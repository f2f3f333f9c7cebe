/* gw.c — the gateway's process-wide state (gw.h) and its clocks. Here rather than in main.c so
 * the gateway library, and the unit tests that link it, carry them too. */
#include "gw.h"

#include "clock.h"

gw_t g_gw;

double
gw_now(void)
{
    return clock_mono();
}

double
gw_wall(void)
{
    return clock_wall();
}
