/* net_hint.c — see net_hint.h. */
#include "net_hint.h"

#include <stdio.h>
#include <string.h>

static const char *const failure_texts[] = {
    "Temporary failure in name resolution", /* EAI_AGAIN: no resolver reachable */
    "Name or service not known",            /* EAI_NONAME */
    "No address associated with hostname",  /* EAI_NODATA */
    "Could not resolve host",               /* curl, git */
    "Temporary failure resolving",          /* apt-get */
    "unable to resolve host address",       /* wget */
    "Failed to establish a new connection", /* urllib3 (pip, requests) */
    "NewConnectionError",
    "Network is unreachable", /* ENETUNREACH: an address, but no route */
};

bool
net_hint_failure_shown(const char *out, size_t len)
{
    for (size_t i = 0; i < sizeof failure_texts / sizeof *failure_texts; i++)
        if (memmem(out, len, failure_texts[i], strlen(failure_texts[i])))
            return true;
    return false;
}

bool
net_hint_offline(void)
{
    FILE *f = fopen("/proc/self/net/dev", "r");
    if (!f)
        return false;
    char line[512], name[64];
    int n = 0, links = 0;
    while (fgets(line, sizeof line, f))
        if (++n > 2 && sscanf(line, " %63[^:]:", name) == 1 && strcmp(name, "lo") != 0)
            links++;
    fclose(f);
    return n > 2 && links == 0;
}
