/* session_file_watch.c — a session's file watches (session_file_watch.h). A watch is in the
 * session's list while it has watchers; the last one out cancels its executor op, and the
 * watch is freed once that op's CLOSE is in (its timer's close callback frees the memory). */
#include "session_file_watch.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "gw.h"
#include "json_util.h"
#include "session_int.h"
#include "xalloc.h"

typedef enum {
    FW_OPENING,  /* file.watch sent, its "watching" awaited */
    FW_WATCHING, /* events flow */
    FW_LOST,     /* the link went down: opened again once it is READY */
    FW_CLOSING,  /* no watchers left: its CLOSE awaited, then freed (out of the list) */
} fw_state_t;

struct file_watch {
    file_watch_t *next;
    gw_session_t *s;
    char *key;
    char *path;          /* as the executor resolved it; NULL before its first "watching" */
    int64_t directories; /* watched, as it said */
    fw_state_t state;
    session_stream_t *st; /* NULL while no op is open */
    file_watcher_t *watchers;
    uv_timer_t timer; /* the batches are due when it fires */
    bool timer_armed;
};

bool
file_watch_key(const char *path, char *out, size_t cap)
{
    size_t n = path ? strlen(path) : 0;
    while (n > 1 && path[n - 1] == '/')
        n--;
    if (n == 0 || n > FILE_WATCH_PATH_MAX || n >= cap)
        return false;
    memcpy(out, path, n);
    out[n] = '\0';
    return true;
}

int
session_file_watches(const gw_session_t *s)
{
    int n = 0;
    for (const file_watch_t *fw = s->file_watches; fw; fw = fw->next)
        n++;
    return n;
}

/* ---- batches ---- */

static void
on_timer(uv_timer_t *t)
{
    file_watch_t *fw = t->data;
    fw->timer_armed = false;
    for (file_watcher_t *w = fw->watchers, *next; w; w = next) {
        next = w->next;
        if (!file_batch_empty(&w->batch)) {
            w->due = true;
            w->wake(w);
        }
    }
}

/* ev (borrowed) into the batch of every watcher told ready; the batches are due in
 * FILE_WATCH_BATCH_MS unless they are already. */
static void
deliver(file_watch_t *fw, json_object *ev)
{
    bool any = false;
    for (file_watcher_t *w = fw->watchers; w; w = w->next)
        if (w->ready_told) {
            file_batch_add(&w->batch, ev);
            any = true;
        }
    if (any && !fw->timer_armed) {
        fw->timer_armed = true;
        uv_timer_start(&fw->timer, on_timer, FILE_WATCH_BATCH_MS, 0);
    }
}

static void
deliver_resync(file_watch_t *fw, const char *why)
{
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "resync");
    json_set_str(ev, "path", fw->path ? fw->path : fw->key);
    json_set_str(ev, "reason", why);
    deliver(fw, ev);
    json_object_put(ev);
}

/* ---- its life ---- */

static void
on_timer_closed(uv_handle_t *h)
{
    file_watch_t *fw = h->data;
    free(fw->key);
    free(fw->path);
    free(fw);
}

static void
unlink_watch(file_watch_t *fw)
{
    for (file_watch_t **pp = &fw->s->file_watches; *pp; pp = &(*pp)->next)
        if (*pp == fw) {
            *pp = fw->next;
            return;
        }
}

static void
free_watch(file_watch_t *fw)
{
    uv_close((uv_handle_t *)&fw->timer, on_timer_closed);
}

/* Lets every watcher go, telling each why (they may not touch the watch afterwards). */
static void
end_watchers(file_watch_t *fw, const char *code, const char *message)
{
    while (fw->watchers) {
        file_watcher_t *w = fw->watchers;
        fw->watchers = w->next;
        w->next = NULL;
        w->watch = NULL;
        w->ready_told = false;
        w->ended(w, code, message);
    }
}

static void
on_json(void *ud, json_object *msg)
{
    file_watch_t *fw = ud;
    const char *ev = json_get_str(msg, "event", "");
    if (!strcmp(ev, "watching")) {
        bool again = fw->path != NULL;
        free(fw->path);
        fw->path = xstrdup(json_get_str(msg, "path", fw->key));
        fw->directories = json_get_int(msg, "directories", 0);
        fw->state = FW_WATCHING;
        if (again) /* before the new watchers are told ready: it is not news to them */
            deliver_resync(fw, "the runtime reconnected: changes meanwhile were not seen");
        for (file_watcher_t *w = fw->watchers, *next; w; w = next) {
            next = w->next;
            if (!w->ready_told) {
                w->ready_told = true;
                w->ready(w, fw->path, fw->directories);
            }
        }
        return;
    }
    if (fw->state != FW_WATCHING)
        return;
    if (!strcmp(ev, "overflow")) /* the executor or the kernel dropped events */
        deliver_resync(fw, "too many changes at once: some were not seen");
    else
        deliver(fw, msg);
}

static const session_stream_cbs_t watch_cbs = {.on_json = on_json};

static void
on_closed(void *ud, json_object *res)
{
    file_watch_t *fw = ud;
    fw->st = NULL;
    if (fw->state == FW_CLOSING) {
        free_watch(fw);
        return;
    }
    if (fw->state == FW_LOST) /* the link went: opened again when it is back */
        return;
    /* refused (not a directory, ...), or ended by the executor */
    json_object *err = json_get(res, "error");
    unlink_watch(fw);
    end_watchers(fw, err ? json_get_str(err, "code", "internal") : "ended",
                 err ? json_get_str(err, "message", "the watch failed")
                     : "the executor ended the watch");
    free_watch(fw);
}

static int
open_watch(file_watch_t *fw, err_t *err)
{
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "file.watch");
    json_set_str(req, "path", fw->key);
    json_set_bool(req, "recursive", true);
    fw->st = session_probe_stream_open(fw->s, req, &watch_cbs, on_closed, fw, err);
    json_object_put(req);
    if (!fw->st)
        return -1;
    fw->state = FW_OPENING;
    return 0;
}

int
session_file_watch(gw_session_t *s, const char *key, file_watcher_t *w, err_t *err)
{
    file_watch_t *fw = s->file_watches;
    while (fw && strcmp(fw->key, key) != 0)
        fw = fw->next;
    if (!fw) {
        if (session_file_watches(s) >= FILE_WATCH_MAX)
            return err_set(err, ERR_AT_CAPACITY,
                           "a session has at most %d file watches open at once (all its clients "
                           "together): watch a directory above, or unwatch one first",
                           FILE_WATCH_MAX);
        fw = xcalloc(1, sizeof *fw);
        fw->s = s;
        fw->key = xstrdup(key);
        if (open_watch(fw, err) < 0) {
            free(fw->key);
            free(fw);
            return -1;
        }
        uv_timer_init(g_gw.loop, &fw->timer);
        fw->timer.data = fw;
        fw->next = s->file_watches;
        s->file_watches = fw;
    }
    w->watch = fw;
    w->next = fw->watchers;
    fw->watchers = w;
    if (fw->state == FW_WATCHING) {
        w->ready_told = true;
        w->ready(w, fw->path, fw->directories);
    }
    return 0;
}

void
session_file_unwatch(file_watcher_t *w)
{
    file_watch_t *fw = w->watch;
    if (!fw)
        return;
    for (file_watcher_t **pp = &fw->watchers; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    w->next = NULL;
    w->watch = NULL;
    w->ready_told = false;
    if (fw->watchers)
        return;
    unlink_watch(fw);
    if (!fw->st) {
        free_watch(fw);
        return;
    }
    fw->state = FW_CLOSING; /* freed once the executor has closed it */
    session_stream_cancel(fw->st);
}

void
session_file_watches_lost(gw_session_t *s)
{
    for (file_watch_t *fw = s->file_watches; fw; fw = fw->next)
        fw->state = FW_LOST;
}

void
session_file_watches_reopen(gw_session_t *s)
{
    for (file_watch_t *fw = s->file_watches; fw; fw = fw->next) {
        err_t err = {0};
        if (fw->state == FW_LOST && !fw->st && open_watch(fw, &err) < 0)
            GW_LOG("session %s: file watch of %s not opened again: %s", s->id, fw->key, err.msg);
    }
}

void
session_file_watches_free(gw_session_t *s)
{
    while (s->file_watches) {
        file_watch_t *fw = s->file_watches;
        s->file_watches = fw->next;
        end_watchers(fw, "session_ended", "the session is gone");
        if (fw->st)
            fw->state = FW_CLOSING; /* its op fails with the session: freed then */
        else
            free_watch(fw);
    }
}
