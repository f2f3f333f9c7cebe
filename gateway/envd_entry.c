/* envd_entry.c — envd's EntryInfo and FilesystemEvent from the executor's words (envd_entry.h). */
#include "envd_entry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "envd_path.h"
#include "json_util.h"

void
envd_permissions(const char *kind, unsigned mode, char out[ENVD_PERMISSIONS_MAX])
{
    /* Go's type letters in its order ("dalTLDpSugct?"), the ones a Linux file can have */
    size_t w = 0;
    if (!strcmp(kind, "directory"))
        out[w++] = 'd';
    if (!strcmp(kind, "symlink"))
        out[w++] = 'L';
    if (!strcmp(kind, "char_device") || !strcmp(kind, "block_device"))
        out[w++] = 'D';
    if (!strcmp(kind, "fifo"))
        out[w++] = 'p';
    if (!strcmp(kind, "socket"))
        out[w++] = 'S';
    if (mode & 04000)
        out[w++] = 'u';
    if (mode & 02000)
        out[w++] = 'g';
    if (!strcmp(kind, "char_device"))
        out[w++] = 'c';
    if (mode & 01000)
        out[w++] = 't';
    if (w == 0)
        out[w++] = '-';
    static const char rwx[] = "rwxrwxrwx";
    for (int i = 0; i < 9; i++)
        out[w++] = mode & (1u << (8 - i)) ? rwx[i] : '-';
    out[w] = '\0';
}

void
envd_timestamp(int64_t ns, char out[ENVD_TIMESTAMP_MAX])
{
    int64_t sec = ns / 1000000000, frac = ns % 1000000000;
    if (frac < 0) {
        frac += 1000000000;
        sec--;
    }
    time_t t = (time_t)sec;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(out, ENVD_TIMESTAMP_MAX, "1970-01-01T00:00:00Z");
        return;
    }
    char date[24], fraction[16] = "";
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    if (frac % 1000000 == 0 && frac)
        snprintf(fraction, sizeof fraction, ".%03d", (int)(frac / 1000000));
    else if (frac % 1000 == 0 && frac)
        snprintf(fraction, sizeof fraction, ".%06d", (int)(frac / 1000));
    else if (frac)
        snprintf(fraction, sizeof fraction, ".%09d", (int)frac);
    snprintf(out, ENVD_TIMESTAMP_MAX, "%s%sZ", date, fraction);
}

/* An octal mode string of the executor's ("0644"), 0 when it is not one. */
static unsigned
mode_of(json_object *o, const char *key)
{
    const char *s = json_get_str(o, key, "");
    size_t n = strlen(s);
    if (n == 0 || n > 5 || strspn(s, "01234567") != n)
        return 0;
    return (unsigned)strtoul(s, NULL, 8) & 07777;
}

static const char *
file_type(const char *kind)
{
    return !strcmp(kind, "file")        ? "FILE_TYPE_FILE"
           : !strcmp(kind, "directory") ? "FILE_TYPE_DIRECTORY"
                                        : NULL; /* UNSPECIFIED: protobuf leaves it out */
}

json_object *
envd_entry_info(json_object *st, const char *path)
{
    json_object *o = json_object_new_object();
    const char *kind = json_get_str(st, "kind", json_get_str(st, "type", ""));
    bool link = !strcmp(kind, "symlink");
    unsigned mode = mode_of(st, "mode");
    json_set_str(o, "name", envd_path_base(path));
    const char *type = file_type(link ? json_get_str(st, "resolved_kind", "") : kind);
    if (type)
        json_set_str(o, "type", type);
    json_set_str(o, "path", path);
    char num[32];
    int64_t size = json_get_int(st, "size", 0);
    snprintf(num, sizeof num, "%lld", (long long)(size > 0 ? size : 0));
    json_set_str(o, "size", num); /* int64: a string in protobuf's JSON */
    /* permission bits only; a link's are its target's (0 when it resolves to nothing) */
    json_set_int(o, "mode", (link ? mode_of(st, "resolved_mode") : mode) & 0777);
    char perms[ENVD_PERMISSIONS_MAX];
    envd_permissions(kind, mode, perms);
    json_set_str(o, "permissions", perms);
    json_set_str(o, "owner", json_get_str(st, "owner", ""));
    json_set_str(o, "group", json_get_str(st, "group", ""));
    char ts[ENVD_TIMESTAMP_MAX];
    envd_timestamp(json_get_int(st, "mtime_ns", 0), ts);
    json_set_str(o, "modifiedTime", ts);
    if (link) /* envd's: where it resolves, or the link itself when it does not */
        json_set_str(o, "symlinkTarget", json_get_str(st, "resolved", path));
    return o;
}

json_object *
envd_watch_event(json_object *ev, const char *root, const char *client_root, bool include_entry)
{
    static const struct {
        const char *event, *type;
        bool entry;
    } types[] = {
        /* as fsnotify names inotify's: a move into the directory is a create */
        {"created", "EVENT_TYPE_CREATE", true},       {"moved_to", "EVENT_TYPE_CREATE", true},
        {"modified", "EVENT_TYPE_WRITE", true},       {"deleted", "EVENT_TYPE_REMOVE", false},
        {"moved_from", "EVENT_TYPE_RENAME", false},   {"attrib", "EVENT_TYPE_CHMOD", true},
        {"deleted_self", "EVENT_TYPE_REMOVE", false},
    };
    const char *event = json_get_str(ev, "event", ""), *given = json_get_str(ev, "path", "");
    /* the executor sends canonical paths; a sandbox's own words need not be */
    char path[ENVD_PATH_MAX];
    if (given[0] != '/' || strlen(given) >= sizeof path)
        return NULL;
    memcpy(path, given, strlen(given) + 1);
    envd_path_clean(path);
    const char *rel = envd_path_rel(root, path);
    if (!rel)
        return NULL;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (strcmp(event, types[i].event) != 0)
            continue;
        /* a watched subdirectory's own end: its parent already said "deleted" */
        if (!strcmp(event, "deleted_self") && strcmp(rel, ".") != 0)
            return NULL;
        json_object *o = json_object_new_object();
        json_set_str(o, "name", rel);
        json_set_str(o, "type", types[i].type);
        json_object *st = json_get(ev, "stat");
        if (include_entry && types[i].entry && st && json_object_is_type(st, json_type_object)) {
            char p[ENVD_PATH_MAX + 8];
            if (!strcmp(rel, "."))
                snprintf(p, sizeof p, "%s", client_root);
            else
                snprintf(p, sizeof p, "%s%s%s", client_root, strcmp(client_root, "/") ? "/" : "",
                         rel);
            json_set(o, "entry", envd_entry_info(st, p));
        }
        return o;
    }
    return NULL;
}
