/* fuzz_route_uri.c — common/route_uri on arbitrary URIs: never reads past the string, an id it
 * finds is non-empty, without '/', '?', '#' or '%', and appears in the URI right where its route
 * puts it; a query value found is a substring of the URI. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "route_uri.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *uri = malloc(size + 1);
    memcpy(uri, data, size);
    uri[size] = '\0';
    route_uri_t u;
    if (route_uri_parse(uri, &u) == 0) {
        size_t n = strlen(u.id);
        if (n == 0 || n >= ROUTE_URI_ID_MAX || strpbrk(u.id, "/?#%") || !strstr(uri, u.id))
            __builtin_trap();
        if (u.kind == ROUTE_URI_NONE)
            __builtin_trap();
    } else if (u.kind != ROUTE_URI_NONE) {
        __builtin_trap();
    }
    char v[64];
    route_uri_arg(uri, "token", v, sizeof v);
    if (strlen(v) >= sizeof v || (v[0] && !strstr(uri, v)))
        __builtin_trap();
    free(uri);
    return 0;
}
