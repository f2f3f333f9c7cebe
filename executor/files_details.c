/* files_details.c — the "details" of file.stat, file.list and file.watch entries
 * (docs/protocol.md "file.stat"): what E2B's envd reports of a file (docs/e2b-wire.md 3.8) and
 * plain stat fields do not say: the exact kind of file, the mtime to the nanosecond, the owner
 * and group by name as the sandbox's own /etc/passwd and /etc/group name them, and what a
 * symlink resolves to. The executor runs inside the sandbox, so the names are the sandbox's. */
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files_int.h"
#include "json_util.h"

static const char *
kind_name(mode_t m)
{
    switch (m & S_IFMT) {
    case S_IFREG: return "file";
    case S_IFDIR: return "directory";
    case S_IFLNK: return "symlink";
    case S_IFIFO: return "fifo";
    case S_IFSOCK: return "socket";
    case S_IFCHR: return "char_device";
    case S_IFBLK: return "block_device";
    default: return "other";
    }
}

/* The name of uid (or gid) through the cache, its number as text when the sandbox names none
 * (as envd does). */
static const char *
id_name(files_names_t *c, bool group, unsigned id)
{
    for (int i = 0; i < c->n; i++)
        if (c->slot[i].group == group && c->slot[i].id == id)
            return c->slot[i].name;
    int i = c->n < FILES_NAMES_CACHE ? c->n++ : (int)(id % FILES_NAMES_CACHE);
    c->slot[i].group = group;
    c->slot[i].id = id;
    const char *n = NULL;
    if (group) {
        struct group *g = getgrgid(id);
        n = g ? g->gr_name : NULL;
    } else {
        struct passwd *p = getpwuid(id);
        n = p ? p->pw_name : NULL;
    }
    if (n && strlen(n) < sizeof c->slot[i].name)
        snprintf(c->slot[i].name, sizeof c->slot[i].name, "%s", n);
    else
        snprintf(c->slot[i].name, sizeof c->slot[i].name, "%u", id);
    return c->slot[i].name;
}

void
files_details(json_object *o, const struct stat *st, const char *abs, files_names_t *names)
{
    files_names_t local = {0}, *c = names ? names : &local;
    json_set_str(o, "kind", kind_name(st->st_mode));
    json_set_int(o, "mtime_ns", (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec);
    json_set_int(o, "uid", st->st_uid);
    json_set_int(o, "gid", st->st_gid);
    json_set_str(o, "owner", id_name(c, false, st->st_uid));
    json_set_str(o, "group", id_name(c, true, st->st_gid));
    if (!S_ISLNK(st->st_mode) || !abs)
        return;
    /* what the link finally names (every link on the way followed), when it resolves */
    char real[PATH_MAX];
    struct stat tst;
    if (!realpath(abs, real) || stat(real, &tst) < 0)
        return;
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", (unsigned)(tst.st_mode & 07777));
    json_set_name(o, "resolved", real);
    json_set_str(o, "resolved_kind", kind_name(tst.st_mode));
    json_set_str(o, "resolved_mode", mode);
}
