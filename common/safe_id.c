/* safe_id.c — see safe_id.h. */
#include "safe_id.h"

#include <string.h>

bool
safe_id_valid(const char *id, size_t max, const char *punct)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > max)
        return false;
    for (const char *p = id; *p; p++)
        if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') ||
              strchr(punct, *p)))
            return false;
    return true;
}
