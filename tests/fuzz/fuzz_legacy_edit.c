/* fuzz_legacy_edit.c — the translated_ipython_code decoder over arbitrary bytes: the code comes
 * from the client's action (replayed trajectories), so nothing in it may crash the executor. A
 * decoded result is always a dict, and merging it into args behaves like parsing it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "legacy_edit.h"
#include "json_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    err_t err = {0};
    json_object *d = legacy_edit_parse((const char *)data, size, &err);
    if (d && !json_object_is_type(d, json_type_object))
        __builtin_trap();
    if (!d && (err.code != ERR_BAD_REQ || !err.msg[0]))
        __builtin_trap(); /* a refusal always says why */
    json_object_put(d);

    json_object *args = json_object_new_object(), *merged = NULL;
    json_set(args, "translated_ipython_code",
             json_object_new_string_len((const char *)data, (int)size));
    int rc = legacy_edit_args(args, &merged, &err);
    if ((rc == 0) != (d != NULL || size == 0) || (rc == 0) != (merged != NULL))
        __builtin_trap();
    json_object_put(merged);
    json_object_put(args);
    return 0;
}
