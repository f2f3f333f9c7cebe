/* fuzz_browser_action.c — the BrowserGym action-string parser (plugins/browser/action.c) over
 * arbitrary bytes: the text is an agent's, so nothing in it may crash sandpipe-browser. A parse
 * is a non-empty array of {"name": string, "args": array}; a refusal says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "plugins/browser/action.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    err_t err = {0};
    json_object *calls = ba_parse((const char *)data, size, &err);
    if (!calls) {
        if (!err.msg[0])
            __builtin_trap();
        return 0;
    }
    size_t n = json_object_array_length(calls);
    if (n == 0 || n > BA_MAX_CALLS)
        __builtin_trap();
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(calls, i);
        if (!json_get_str(c, "name", NULL) ||
            !json_object_is_type(json_get(c, "args"), json_type_array))
            __builtin_trap();
    }
    json_object_put(calls);
    return 0;
}
