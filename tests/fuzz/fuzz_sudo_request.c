/* fuzz_sudo_request.c — the sudo broker's request parser (executor/sudo_request.c) over any
 * bytes a sandbox process sends it: it never reads past them, and what it accepts points into
 * them, every string terminated there. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "executor/sudo_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_inside(const char *s, const char *buf, size_t size)
{
    if (s < buf || s >= buf + size || !memchr(s, '\0', (size_t)(buf + size - s)))
        __builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1); /* exactly the bytes: ASan sees any read past them */
    memcpy(buf, data, size);
    sudo_request_t r;
    if (sudo_request_parse(buf, size, &r) == 0) {
        check_inside(r.user, buf, size);
        check_inside(r.group, buf, size);
        check_inside(r.flags, buf, size);
        check_inside(r.dir, buf, size);
        char **lists[] = {r.argv, r.env, r.set};
        for (size_t l = 0; l < 3; l++)
            for (size_t i = 0; lists[l][i]; i++)
                check_inside(lists[l][i], buf, size);
        sudo_request_free(&r);
    } else if (r.argv || r.env || r.set) {
        __builtin_trap(); /* a refusal leaves nothing to free */
    }
    free(buf);
    return 0;
}
