/* fuzz_redis_addr.c — common/redis_addr on arbitrary --redis strings and sentinel answers: never
 * reads past the input; what it accepts is well-formed (a port in 1..65535, a non-empty host
 * found in the input, 1..REDIS_SENTINELS_MAX sentinels, a non-empty primary name). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "redis_addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_endpoint(const redis_endpoint_t *e, const char *in)
{
    if (e->port < 1 || e->port > 65535 || !e->host[0] || !strstr(in, e->host))
        __builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    redis_addr_t a;
    err_t err;
    if (redis_addr_parse(s, &a, &err) == 0) {
        if (a.kind == REDIS_ADDR_TCP)
            check_endpoint(&a.tcp, s);
        if (a.kind == REDIS_ADDR_UNIX && (!a.path[0] || !strstr(s, a.path)))
            __builtin_trap();
        if (a.kind == REDIS_ADDR_SENTINEL) {
            if (a.nsentinels < 1 || a.nsentinels > REDIS_SENTINELS_MAX || !a.master[0] ||
                !strstr(s, a.master))
                __builtin_trap();
            for (int i = 0; i < a.nsentinels; i++)
                check_endpoint(&a.sentinels[i], s);
        }
    }
    /* the same bytes as a sentinel's answer: host before the first NUL byte... or half/half */
    size_t half = size / 2;
    redis_endpoint_t e;
    if (redis_endpoint_from_reply((const char *)data, half, (const char *)data + half, size - half,
                                  &e, &err) == 0) {
        if (e.port < 1 || e.port > 65535 || strlen(e.host) != half)
            __builtin_trap();
    }
    free(s);
    return 0;
}
