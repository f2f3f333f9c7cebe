/* fuzz_e2b_metadata.c — api/e2b/metadata_filter (and common/pct_decode under it) on arbitrary
 * filters: never reads past the input; a filter it takes gives an object of string values
 * without NUL, each shorter than the filter's bound. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metadata_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    memcpy(in, data, size);
    in[size] = '\0';
    json_object *want = json_object_new_object();
    if (e2b_metadata_filter(in, want) == 0) {
        json_object_object_foreach(want, k, v)
        {
            /* a string with no NUL in it (the decoder refuses %00), shorter than the filter */
            if (!json_object_is_type(v, json_type_string) ||
                strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v) ||
                strlen(k) >= E2B_FILTER_MAX || strlen(json_object_get_string(v)) >= E2B_FILTER_MAX)
                __builtin_trap();
        }
    }
    json_object_put(want);
    free(in);
    return 0;
}
