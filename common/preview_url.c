/* preview_url.c — a port's preview URL from nginx's template (preview_url.h). */
#include "preview_url.h"

#include <stdio.h>
#include <string.h>

int
preview_host_url(const char *origin, const char *sid, unsigned port, char *out, size_t cap)
{
    static const char PORT[] = "{port}", SESSION[] = "{session}";
    const char *p = strstr(origin, PORT), *s = strstr(origin, SESSION);
    if (cap)
        out[0] = '\0';
    if (!p || !s || s < p + sizeof PORT - 1)
        return -1;
    int n = snprintf(out, cap, "%.*s%u%.*s%s%s/", (int)(p - origin), origin, port,
                     (int)(s - p - (sizeof PORT - 1)), p + sizeof PORT - 1, sid,
                     s + sizeof SESSION - 1);
    if (n < 0 || (size_t)n >= cap) {
        if (cap)
            out[0] = '\0';
        return -1;
    }
    return 0;
}
