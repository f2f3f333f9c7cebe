/* safe_id.h — ids that are safe as one path component, a cgroup or container name, or a key
 * in a log line: 1 to max ASCII letters and digits, and the punctuation the caller allows. */
#ifndef SP_SAFE_ID_H
#define SP_SAFE_ID_H

#include <stdbool.h>
#include <stddef.h>

/* Is id (may be NULL: no) 1..max characters of [A-Za-z0-9] and punct? */
bool safe_id_valid(const char *id, size_t max, const char *punct);

#endif
