/* metadata_filter.c — E2B's list filter (metadata_filter.h). */
#include "metadata_filter.h"

#include <string.h>

#include "json_util.h"
#include "pct_decode.h"

int
e2b_metadata_filter(const char *param, json_object *want)
{
    char once[E2B_FILTER_MAX];
    int n = pct_decode(param, strlen(param), once, sizeof once);
    if (n < 0)
        return -1;
    for (char *pair = once, *next; pair && *pair; pair = next) {
        next = strchr(pair, '&');
        if (next)
            *next++ = '\0';
        char *eq = strchr(pair, '=');
        if (!eq)
            return -1;
        char key[512], value[1024];
        if (pct_decode(pair, (size_t)(eq - pair), key, sizeof key) < 0 ||
            pct_decode(eq + 1, strlen(eq + 1), value, sizeof value) < 0)
            return -1;
        json_set_str(want, key, value);
    }
    return 0;
}
