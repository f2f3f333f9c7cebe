/* route_uri.c — the session a request URI names (route_uri.h). */
#include "route_uri.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *prefix;
    route_uri_kind_t kind;
    bool write;
    size_t id_at; /* where the id starts, from the prefix's start */
} prefixes[] = {
    {"/ws/sessions/", ROUTE_URI_WS, false, 13},
    {"/api/v1/sessions/", ROUTE_URI_REST, true, 17},
    {"/runtime/", ROUTE_URI_RUNTIME, true, 9},
    {"/rt-", ROUTE_URI_RUNTIME, true, 1}, /* the id is rt-… itself */
    {"/preview/", ROUTE_URI_PREVIEW, true, 9},
    {"/envd/", ROUTE_URI_ENVD, true, 6},
};

int
route_uri_parse(const char *uri, route_uri_t *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t pl = strlen(prefixes[i].prefix);
        if (strncmp(uri, prefixes[i].prefix, pl) != 0)
            continue;
        const char *seg = uri + prefixes[i].id_at;
        size_t n = strcspn(seg, "/?#");
        if (n == 0 || n >= sizeof out->id || memchr(seg, '%', n))
            return -1;
        memcpy(out->id, seg, n);
        out->id[n] = '\0';
        out->kind = prefixes[i].kind;
        out->write = prefixes[i].write;
        if (out->kind == ROUTE_URI_WS && !strncmp(seg + n, "/terminal", 9))
            out->write = true; /* a terminal writes: viewers may not open one */
        return 0;
    }
    return -1;
}

void
route_uri_arg(const char *uri, const char *name, char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    const char *q = strchr(uri, '?');
    size_t n = strlen(name);
    while (q) {
        q++;
        if (!strncmp(q, name, n) && q[n] == '=') {
            size_t len = strcspn(q + n + 1, "&#");
            if (len < cap)
                snprintf(out, cap, "%.*s", (int)len, q + n + 1);
            return;
        }
        q = strchr(q, '&');
    }
}
