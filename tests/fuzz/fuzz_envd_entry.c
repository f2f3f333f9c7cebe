/* fuzz_envd_entry.c — gateway/envd_entry on arbitrary JSON a sandbox's executor could send as a
 * file's stat or a file.watch event: never crashes, every EntryInfo has its name, path, size as
 * a decimal string and a permissions string of Go's shape, and an event's name is relative. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envd_entry.h"
#include "json_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_entry(json_object *e)
{
    const char *size = json_get_str(e, "size", NULL), *perms = json_get_str(e, "permissions", "");
    size_t n = strlen(perms);
    if (!json_get_str(e, "name", NULL) || !json_get_str(e, "path", NULL) || !size ||
        strspn(size, "0123456789") != strlen(size) || n < 10 || n >= ENVD_PERMISSIONS_MAX ||
        strspn(perms + n - 9, "rwx-") != 9)
        __builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    err_t err = {0};
    json_object *o = json_parse_lossy((const char *)data, size, &err);
    if (!o)
        return 0;
    json_object *e = envd_entry_info(o, "/tmp/x");
    check_entry(e);
    json_object_put(e);
    json_object *fe = envd_watch_event(o, "/real/w", "/tmp/w", true);
    if (fe) {
        const char *name = json_get_str(fe, "name", "");
        if (name[0] == '/' || !json_get_str(fe, "type", NULL))
            __builtin_trap();
        json_object *entry = json_get(fe, "entry");
        if (entry)
            check_entry(entry);
        json_object_put(fe);
    }
    json_object_put(o);
    return 0;
}
