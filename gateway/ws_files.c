/* ws_files.c — file events on a session's socket (docs/api.md, "File events"): files.watch and
 * files.unwatch, each connection's watchers (session_file_watch.h) and their batches, written
 * as {"type":"files","watch":KEY,"events":[...]} once due, one message per WRITEABLE. A
 * client that reads slowly only makes its own batch bigger, up to its bound (file_batch.h),
 * never anyone else's. A connection's watchers go with it. */
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "session_file_watch.h"
#include "ws_int.h"
#include "ws_server.h"
#include "xalloc.h"

struct ws_file_sub {
    file_watcher_t w; /* first: the watcher's callbacks are given it */
    struct ws_file_sub *next;
    struct lws *wsi;
    pss_t *p;
    char *key;
    char *path; /* as the executor resolved it, once ready */
    int64_t directories;
    json_object *req_id; /* its files.watch's id, until answered */
    bool waiting;        /* its files.watch awaits its answer */
};
typedef struct ws_file_sub sub_t;

static sub_t *
find(pss_t *p, const char *key)
{
    sub_t *x = p->files;
    while (x && strcmp(x->key, key) != 0)
        x = x->next;
    return x;
}

static void
on_ready(file_watcher_t *w, const char *path, int64_t directories)
{
    sub_t *x = (sub_t *)w;
    if (path != x->path) {
        free(x->path);
        x->path = xstrdup(path);
        x->directories = directories;
    }
    json_object *r = json_object_new_object();
    json_set_str(r, "type", "ack");
    if (x->req_id)
        json_set(r, "id", json_object_get(x->req_id));
    json_set_str(r, "watch", x->key);
    json_set_str(r, "path", x->path);
    json_set_int(r, "directories", x->directories);
    ws_queue_reply(x->wsi, x->p, r);
    json_object_put(x->req_id);
    x->req_id = NULL;
    x->waiting = false;
}

static void
on_ended(file_watcher_t *w, const char *code, const char *message)
{
    sub_t *x = (sub_t *)w;
    if (x->waiting) { /* the answer to its files.watch */
        ws_queue_reply(x->wsi, x->p, ws_error_msg(code, message, x->req_id));
        json_object_put(x->req_id);
        x->req_id = NULL;
        x->waiting = false;
        return;
    }
    json_object *m = json_object_new_object(), *e = json_object_new_object();
    json_set_str(m, "type", "files.ended");
    json_set_str(m, "watch", x->key);
    json_set_str(e, "code", code);
    json_set_str(e, "message", message);
    json_set(m, "error", e);
    ws_queue_reply(x->wsi, x->p, m);
}

static void
on_wake(file_watcher_t *w)
{
    ws_want_write(((sub_t *)w)->wsi);
}

static void
sub_free(sub_t *x)
{
    session_file_unwatch(&x->w);
    file_batch_clear(&x->w.batch);
    json_object_put(x->req_id);
    free(x->key);
    free(x->path);
    free(x);
}

static void
unlink_sub(pss_t *p, sub_t *x)
{
    for (sub_t **pp = &p->files; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            return;
        }
}

/* The key of msg's "path", or a bad_request answered (false). */
static bool
key_of(struct lws *wsi, pss_t *p, json_object *msg, char *key, size_t cap)
{
    json_object *path = json_get(msg, "path");
    if (json_object_is_type(path, json_type_string) &&
        file_watch_key(json_object_get_string(path), key, cap) &&
        !memchr(json_object_get_string(path), '\0', (size_t)json_object_get_string_len(path)))
        return true;
    ws_queue_reply(wsi, p,
                   ws_error_msg("bad_request", "\"path\" must be a directory's path (a string)",
                                json_get(msg, "id")));
    return false;
}

/* Forgets the watchers whose watch ended (refused, or ended since) and whose client was told:
 * a client asking for path after path that is not there holds none of them. */
static void
sweep_ended(pss_t *p)
{
    for (sub_t **pp = &p->files; *pp;) {
        sub_t *x = *pp;
        if (!x->w.watch && !x->waiting) {
            *pp = x->next;
            sub_free(x);
            continue;
        }
        pp = &x->next;
    }
}

void
ws_files_watch(struct lws *wsi, pss_t *p, gw_session_t *s, json_object *msg)
{
    json_object *id = json_get(msg, "id");
    char key[FILE_WATCH_PATH_MAX + 1];
    sweep_ended(p);
    if (!s) {
        ws_queue_reply(wsi, p, ws_error_msg("session_ended", "the session is gone", id));
        return;
    }
    if (!key_of(wsi, p, msg, key, sizeof key))
        return;
    sub_t *x = find(p, key);
    if (x && x->waiting) {
        ws_queue_reply(wsi, p,
                       ws_error_msg("busy", "a files.watch of this path awaits its answer", id));
        return;
    }
    if (x && x->w.watch) { /* watched already: the same answer again */
        x->req_id = id ? json_object_get(id) : NULL;
        x->waiting = true;
        on_ready(&x->w, x->path, x->directories);
        return;
    }
    bool made = !x;
    if (made) {
        x = xcalloc(1, sizeof *x);
        x->w.ready = on_ready;
        x->w.ended = on_ended;
        x->w.wake = on_wake;
        x->wsi = wsi;
        x->p = p;
        x->key = xstrdup(key);
    }
    x->req_id = id ? json_object_get(id) : NULL;
    x->waiting = true;
    if (made) { /* listed first: ready may come before session_file_watch returns */
        x->next = p->files;
        p->files = x;
    }
    err_t err = {0};
    if (session_file_watch(s, key, &x->w, &err) < 0) {
        ws_queue_reply(wsi, p, ws_error_msg(err_name(err.code), err.msg, id));
        unlink_sub(p, x);
        sub_free(x);
    }
}

void
ws_files_unwatch(struct lws *wsi, pss_t *p, gw_session_t *s, json_object *msg)
{
    (void)s;
    json_object *id = json_get(msg, "id");
    char key[FILE_WATCH_PATH_MAX + 1];
    if (!key_of(wsi, p, msg, key, sizeof key))
        return;
    sub_t *x = find(p, key);
    if (!x) {
        ws_queue_reply(wsi, p, ws_error_msg("not_found", "this connection does not watch it", id));
        return;
    }
    if (x->waiting) /* its files.watch is answered first */
        on_ended(&x->w, "cancelled", "files.unwatch came before the watch started");
    unlink_sub(p, x);
    sub_free(x);
    json_object *r = json_object_new_object();
    json_set_str(r, "type", "ack");
    if (id)
        json_set(r, "id", json_object_get(id));
    ws_queue_reply(wsi, p, r);
}

int
ws_files_write(struct lws *wsi, pss_t *p)
{
    for (sub_t *x = p->files; x; x = x->next) {
        if (!x->w.due)
            continue;
        x->w.due = false;
        json_object *events = file_batch_take(&x->w.batch);
        if (!events)
            continue;
        json_object *m = json_object_new_object();
        json_set_str(m, "type", "files");
        json_set_str(m, "watch", x->key);
        json_set(m, "events", events);
        size_t len;
        const char *text = json_text(m, &len);
        int rc = ws_write_text(wsi, text, len, LWS_WRITE_TEXT);
        json_object_put(m);
        lws_callback_on_writable(wsi); /* another may be due */
        return rc < 0 ? -1 : 1;
    }
    return 0;
}

void
ws_files_teardown(pss_t *p)
{
    while (p->files) {
        sub_t *x = p->files;
        p->files = x->next;
        sub_free(x);
    }
}
