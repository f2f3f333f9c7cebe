/* file_batch.c — a client's pending file events, bounded (file_batch.h). */
#include "file_batch.h"

#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "xalloc.h"

size_t
file_batch_common_dir(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    /* one is the other, or a directory of it ("/" is the only one ending with a slash) */
    if (i == na && (i == nb || b[i] == '/' || (na && a[na - 1] == '/')))
        return na;
    if (i == nb && (a[i] == '/' || (nb && b[nb - 1] == '/')))
        return nb;
    size_t j = i; /* back to the start of the component they differ in */
    while (j > 0 && a[j - 1] != '/')
        j--;
    if (j == 0)
        return 0;
    return j - 1 > 0 ? j - 1 : 1; /* without its slash, but "/" itself */
}

/* The directory whose listing ev changed (a "many" or "resync" event names it itself). */
static const char *
dir_of(json_object *ev, size_t *len)
{
    const char *path = json_get_str(ev, "path", "");
    const char *kind = json_get_str(ev, "event", "");
    size_t n = strlen(path);
    if (!strcmp(kind, "many") || !strcmp(kind, "resync")) {
        *len = n;
        return path;
    }
    const char *slash = strrchr(path, '/');
    *len = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
    return path;
}

/* Widens the summary's directory to hold ev's too. */
static void
widen(file_batch_t *b, json_object *ev)
{
    size_t n;
    const char *dir = dir_of(ev, &n);
    if (!b->many) {
        b->many = xstrndup(dir, n);
        return;
    }
    b->many[file_batch_common_dir(b->many, strlen(b->many), dir, n)] = '\0';
}

static bool
same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static bool
same_event(json_object *x, json_object *y)
{
    return same_str(json_get_str(x, "event", NULL), json_get_str(y, "event", NULL)) &&
           same_str(json_get_str(x, "path", NULL), json_get_str(y, "path", NULL)) &&
           same_str(json_get_str(x, "path_b64", NULL), json_get_str(y, "path_b64", NULL));
}

void
file_batch_add(file_batch_t *b, json_object *ev)
{
    b->count++;
    if (b->many) {
        widen(b, ev);
        return;
    }
    if (!b->events)
        b->events = json_object_new_array();
    size_t n = json_object_array_length(b->events);
    for (size_t i = 0; i < n; i++)
        if (same_event(json_object_array_get_idx(b->events, i), ev))
            return;
    if (n < FILE_BATCH_MAX) {
        json_object_array_add(b->events, json_object_get(ev));
        return;
    }
    /* one past the bound: the batch becomes its summary */
    for (size_t i = 0; i < n; i++)
        widen(b, json_object_array_get_idx(b->events, i));
    widen(b, ev);
    json_object_put(b->events);
    b->events = NULL;
}

bool
file_batch_empty(const file_batch_t *b)
{
    return !b->many && (!b->events || json_object_array_length(b->events) == 0);
}

json_object *
file_batch_take(file_batch_t *b)
{
    json_object *out = NULL;
    if (b->many) {
        json_object *ev = json_object_new_object();
        json_set_str(ev, "event", "many");
        json_set_str(ev, "path", b->many[0] ? b->many : "/");
        json_set_int(ev, "count", (int64_t)b->count);
        out = json_object_new_array();
        json_object_array_add(out, ev);
        free(b->many);
        b->many = NULL;
    } else if (b->events && json_object_array_length(b->events)) {
        out = b->events;
        b->events = NULL;
    }
    file_batch_clear(b);
    return out;
}

void
file_batch_clear(file_batch_t *b)
{
    json_object_put(b->events);
    free(b->many);
    *b = (file_batch_t){0};
}
