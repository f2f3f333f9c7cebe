/* metadata_filter.h — the metadata filter of E2B's sandbox list (GET /v2/sandboxes?metadata=,
 * docs/e2b-wire.md 2.2) into the pairs it asks for. Pure: outside input, fuzzed
 * (tests/fuzz/fuzz_e2b_metadata.c). */
#ifndef SP_E2B_METADATA_FILTER_H
#define SP_E2B_METADATA_FILTER_H

#include <json-c/json.h>

#define E2B_FILTER_MAX 2048 /* bytes of the filter */

/* param: the parameter as api_query decoded it once, "k=v&k2=v2" escaped once more, each key
 * and value escaped a third time. Fills want (an object) with the pairs. 0, or -1 when
 * malformed (a pair without '=', a bad escape, a key or value too long). */
int e2b_metadata_filter(const char *param, json_object *want);

#endif
