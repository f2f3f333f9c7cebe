/* gw.c — the gateway's process-wide state (gw.h) and its clocks. Here rather than in main.c so
 * the gateway library, and the unit tests that link it, carry them too. */
#include "gw.h"

#include <string.h>
#include <sys/random.h>

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

void
gw_random_id(char *out, size_t cap, const char *prefix)
{
    uint8_t r[8];
    if (getrandom(r, sizeof r, 0) != sizeof r)
        memset(r, 0, sizeof r);
    snprintf(out, cap, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, r[0], r[1], r[2], r[3], r[4],
             r[5], r[6], r[7]);
}
