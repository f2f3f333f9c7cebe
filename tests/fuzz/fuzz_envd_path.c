/* fuzz_envd_path.c — gateway/envd_path on arbitrary client paths (the input's first line is the
 * home, the rest the path, NUL bytes included): never reads past the input; a path it takes
 * comes out absolute and clean (no "//", no "." or ".." element, no trailing "/" but the root's)
 * and shorter than its bound, and envd_path_rel/base agree with it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envd_path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
clean(const char *p)
{
    if (p[0] != '/')
        return 0;
    if (!strcmp(p, "/"))
        return 1;
    size_t n = strlen(p);
    if (p[n - 1] == '/' || strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../"))
        return 0;
    const char *last = strrchr(p, '/') + 1;
    return strcmp(last, ".") && strcmp(last, "..");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t hl = nl ? (size_t)(nl - data) : 0;
    char *home = malloc(hl + 1), *path = malloc(size - (nl ? hl + 1 : 0) + 1);
    memcpy(home, data, hl);
    home[hl] = '\0';
    size_t pl = size - (nl ? hl + 1 : 0);
    memcpy(path, data + (nl ? hl + 1 : 0), pl);
    path[pl] = '\0';
    char out[ENVD_PATH_MAX], why[300];
    /* the home the executor names is an absolute path without NUL (exec_link.c) */
    if (home[0] == '/' && strlen(home) == hl &&
        envd_path_abs(home, path, pl, out, sizeof out, why, sizeof why) == 0) {
        if (!clean(out) || strlen(out) >= ENVD_PATH_MAX)
            __builtin_trap();
        const char *rel = envd_path_rel("/", out);
        if (strcmp(out, "/") != 0 && (!rel || strcmp(rel, out + 1) != 0))
            __builtin_trap();
        const char *base = envd_path_base(out);
        if (base < out || base > out + strlen(out))
            __builtin_trap();
    }
    free(home);
    free(path);
    return 0;
}
