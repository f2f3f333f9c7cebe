/* fuzz_axtree.c — the accessibility listing (plugins/browser/axtree.c) over arbitrary bytes as
 * {"ax": getFullAXTree's result, "snap": captureSnapshot's result}: both come from a page, which
 * may be hostile, so no tree (cyclic, deep, with bad indices or types) may crash
 * sandpipe-browser, and the listing stays bounded. Bytes that are not such JSON go to the
 * Python repr instead. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "plugins/browser/axtree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    err_t err = {0};
    json_object *in = json_parse((const char *)data, size, &err);
    buf_t out = BUF_INIT;
    if (in) {
        axtree_format(json_get(in, "ax"), json_get(in, "snap"), &out);
        if (out.len > AXTREE_MAX_BYTES + (64u << 10))
            __builtin_trap();
        json_object_put(in);
    } else {
        axtree_py_repr(&out, (const char *)data, size);
        if (out.len < 2 || out.len > 6 * size + 2)
            __builtin_trap();
    }
    buf_free(&out);
    return 0;
}
