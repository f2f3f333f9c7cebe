/* envd_watch.c — envd's directory watches (docs/e2b-wire.md 3.3, 3.8) on the executor's
 * file.watch (inotify in the sandbox): WatchDir, a server stream ({"start":{}} once the watch
 * is set, then {"filesystem": FilesystemEvent} as things change, keepalives, an end-of-stream
 * at its deadline or on an error), and the polling watchers E2B's Python SDK uses instead
 * (CreateWatcher, GetWatcherEvents, RemoveWatcher), kept per sandbox.
 *
 * Bounds: a stream whose client does not read and has ENVD_WATCH_QUEUE bytes waiting ends with
 * resource_exhausted (never an unbounded queue, never a silent gap), as does one that the
 * executor had to drop events for; a sandbox has at most ENVD_WATCHERS_MAX polling watchers,
 * each holding at most ENVD_WATCHER_EVENTS events: past that, events are counted, and the next
 * GetWatcherEvents says how many were lost (resource_exhausted) instead of answering a list
 * with a hole in it. */
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "envd_connect.h"
#include "envd_entry.h"
#include "envd_fs.h"
#include "envd_routes.h"
#include "gw.h"
#include "json_util.h"
#include "session.h"
#include "session_int.h"
#include "xalloc.h"

#define ENVD_WATCH_QUEUE    (1u << 20) /* bytes a stream's client may leave unread */
#define ENVD_WATCHERS_MAX   64         /* polling watchers per sandbox */
#define ENVD_WATCHER_EVENTS 4096       /* events a polling watcher holds */
#define ENVD_WATCHER_BYTES  (1u << 20) /* ... and at most this much of their JSON */

/* The executor's file.watch request for path. */
static json_object *
watch_op(const char *path, json_object *req)
{
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "file.watch");
    json_set_str(op, "path", path);
    json_set_bool(op, "recursive", json_get_bool(req, "recursive", false));
    json_set_bool(op, "details",
                  json_get_bool(req, "includeEntry", false) ||
                      json_get_bool(req, "include_entry", false));
    return op;
}

static bool
include_entry(json_object *req)
{
    return json_get_bool(req, "includeEntry", false) || json_get_bool(req, "include_entry", false);
}

/* A file.watch that ended before it watched, in envd's words. */
static envd_code_t
refusal(json_object *res, const char *path, char *msg, size_t cap)
{
    if (envd_fs_error_is(res, ERR_NOT_FOUND)) {
        snprintf(msg, cap, "path %s not found: stat %s: no such file or directory", path, path);
        return ENVD_NOT_FOUND;
    }
    if (envd_fs_error_is(res, ENOTDIR)) {
        snprintf(msg, cap, "path %s not a directory", path);
        return ENVD_INVALID_ARGUMENT;
    }
    json_object *e = json_get(res, "error");
    snprintf(msg, cap, "%s", json_get_str(e, "message", "the watch ended"));
    return envd_code_of_name(json_get_str(e, "code", "internal"));
}

/* ---- WatchDir: a stream ---- */

typedef struct {
    uint64_t req;
    session_stream_t *st; /* NULL once the executor closed it */
    uv_timer_t keepalive, deadline;
    int timers_open;
    bool started, done, entry;
    char root[ENVD_PATH_MAX];        /* the directory as the executor resolved it */
    char client_root[ENVD_PATH_MAX]; /* as the client named it (cleaned) */
} stream_t;

static void
stream_release(stream_t *w)
{
    if (!w->st && !w->timers_open && !w->req)
        free(w);
}

static void
on_timer_closed(uv_handle_t *t)
{
    stream_t *w = t->data;
    w->timers_open--;
    stream_release(w);
}

/* The stream ends (its deadline, an error, the executor's end); the watch stops with it. */
static void
stream_finish(stream_t *w, const envd_code_t *code, const char *msg)
{
    http_req_t *h = w->req && !w->done ? http_find(w->req) : NULL;
    w->done = true;
    uv_timer_stop(&w->keepalive);
    uv_timer_stop(&w->deadline);
    if (w->st)
        session_stream_cancel(w->st);
    if (!h)
        return;
    if (!w->started) {
        envd_stream_fail(h, code ? *code : ENVD_INTERNAL, "%s", msg ? msg : "the watch ended");
        return;
    }
    envd_stream_end(h, code, msg);
}

static void
stream_send(stream_t *w, http_req_t *h, json_object *msg)
{
    envd_stream_send(h, msg);
    uv_timer_again(&w->keepalive);
}

static void
on_stream_json(void *ud, json_object *ev)
{
    stream_t *w = ud;
    http_req_t *h = w->done ? NULL : http_find(w->req);
    if (!h)
        return;
    const char *what = json_get_str(ev, "event", "");
    if (!w->started) {
        if (strcmp(what, "watching") != 0)
            return;
        /* the watch is set: envd says start only now, so no change after it is missed */
        snprintf(w->root, sizeof w->root, "%s", json_get_str(ev, "path", ""));
        w->started = true;
        envd_stream_head(h);
        json_object *m = json_object_new_object();
        json_set(m, "start", json_object_new_object());
        stream_send(w, h, m);
        return;
    }
    envd_code_t c = ENVD_RESOURCE_EXHAUSTED;
    char m[200];
    if (!strcmp(what, "overflow")) {
        snprintf(m, sizeof m, "%lld events were lost: the watch's events were not read in time",
                 (long long)json_get_int(ev, "dropped", 0));
        stream_finish(w, &c, m);
        return;
    }
    if (h->pending_len > ENVD_WATCH_QUEUE) {
        snprintf(m, sizeof m, "the client read none of the last %u bytes of events: the watch ends",
                 ENVD_WATCH_QUEUE);
        stream_finish(w, &c, m);
        return;
    }
    json_object *fe = envd_watch_event(ev, w->root, w->client_root, w->entry);
    if (!fe)
        return;
    json_object *msg = json_object_new_object();
    json_set(msg, "filesystem", fe);
    stream_send(w, h, msg);
}

static void
on_stream_close(void *ud, json_object *res)
{
    stream_t *w = ud;
    w->st = NULL;
    if (!w->done) {
        char m[ENVD_TEXT_MAX];
        envd_code_t c =
            json_get(res, "error") ? refusal(res, w->client_root, m, sizeof m) : ENVD_INTERNAL;
        if (!json_get(res, "error"))
            snprintf(m, sizeof m, "the sandbox ended the watch");
        stream_finish(w, &c, m);
    }
    stream_release(w);
}

static const session_stream_cbs_t stream_cbs = {.on_json = on_stream_json};

static void
on_keepalive(uv_timer_t *t)
{
    stream_t *w = t->data;
    http_req_t *h = w->done ? NULL : http_find(w->req);
    if (!h || !w->started)
        return;
    json_object *m = json_object_new_object();
    json_set(m, "keepalive", json_object_new_object());
    stream_send(w, h, m);
}

/* Connect-Timeout-Ms passed: the client gives up now (its SDK does too). */
static void
on_deadline(uv_timer_t *t)
{
    envd_code_t c = ENVD_DEADLINE_EXCEEDED;
    stream_finish(t->data, &c, "the operation timed out");
}

/* The request ended (answered, or its client went away). */
static void
stream_gone(void *ud)
{
    stream_t *w = ud;
    w->done = true;
    w->req = 0;
    if (w->st)
        session_stream_cancel(w->st); /* on_stream_close follows */
    uv_close((uv_handle_t *)&w->keepalive, on_timer_closed);
    uv_close((uv_handle_t *)&w->deadline, on_timer_closed);
}

void
envd_watch_dir(http_req_t *h, gw_session_t *s, json_object *req, const char *home)
{
    stream_t *w = xcalloc(1, sizeof *w);
    if (envd_fs_path(h, req, "path", home, true, w->client_root) < 0) {
        free(w);
        return;
    }
    w->req = h->id;
    w->entry = include_entry(req);
    uv_timer_init(g_gw.loop, &w->keepalive);
    uv_timer_init(g_gw.loop, &w->deadline);
    w->keepalive.data = w->deadline.data = w;
    w->timers_open = 2;
    h->ud = w;
    h->free_ud = stream_gone;
    unsigned ka = envd_keepalive_s(h);
    uv_timer_start(&w->keepalive, on_keepalive, ka * 1000ull, ka * 1000ull);
    uint64_t dl = envd_deadline_ms(h);
    if (dl)
        uv_timer_start(&w->deadline, on_deadline, dl, 0);
    json_object *op = watch_op(w->client_root, req);
    err_t err = {0};
    w->st = session_stream_open(s, op, &stream_cbs, on_stream_close, w, true, &err);
    json_object_put(op);
    if (!w->st) {
        envd_code_t c = envd_code_of(err.code);
        stream_finish(w, &c, err.msg);
    }
}

/* ---- polling watchers ---- */

typedef struct envd_watcher watcher_t;
struct envd_watcher {
    watcher_t *next;
    gw_session_t *s;
    char id[24];
    session_stream_t *st; /* NULL once the executor closed it */
    uint64_t creating;    /* CreateWatcher's request, until the watch is set */
    bool started, removed, entry;
    json_object *events; /* FilesystemEvents not fetched yet */
    size_t events_bytes; /* their JSON's size */
    unsigned long long dropped;
    envd_code_t fail_code; /* once its watch ended: fail_msg[0] set */
    char fail_msg[512];
    char root[ENVD_PATH_MAX], client_root[ENVD_PATH_MAX];
};

static void
watcher_free(watcher_t *w)
{
    json_object_put(w->events);
    free(w);
}

static void
watcher_unlink(watcher_t *w)
{
    for (watcher_t **pp = &w->s->envd_watchers; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            return;
        }
}

static void
on_watcher_json(void *ud, json_object *ev)
{
    watcher_t *w = ud;
    const char *what = json_get_str(ev, "event", "");
    if (!w->started) {
        if (strcmp(what, "watching") != 0)
            return;
        w->started = true;
        snprintf(w->root, sizeof w->root, "%s", json_get_str(ev, "path", ""));
        http_req_t *h = http_find(w->creating);
        w->creating = 0;
        if (!h) { /* nobody will learn its id */
            w->removed = true;
            watcher_unlink(w);
            session_stream_cancel(w->st);
            return;
        }
        json_object *o = json_object_new_object();
        json_set_str(o, "watcherId", w->id);
        envd_answer(h, o);
        return;
    }
    if (!strcmp(what, "overflow")) {
        w->dropped += (unsigned long long)json_get_int(ev, "dropped", 0);
        return;
    }
    json_object *fe = envd_watch_event(ev, w->root, w->client_root, w->entry);
    if (!fe)
        return;
    size_t len;
    json_text(fe, &len); /* an entry's names are the executor's: bounded by bytes, not count */
    if (json_object_array_length(w->events) >= ENVD_WATCHER_EVENTS ||
        w->events_bytes + len > ENVD_WATCHER_BYTES) {
        json_object_put(fe);
        w->dropped++;
        return;
    }
    w->events_bytes += len;
    json_object_array_add(w->events, fe);
}

static void
on_watcher_close(void *ud, json_object *res)
{
    watcher_t *w = ud;
    w->st = NULL;
    if (w->removed) {
        watcher_free(w);
        return;
    }
    char m[ENVD_TEXT_MAX];
    envd_code_t c =
        json_get(res, "error") ? refusal(res, w->client_root, m, sizeof m) : ENVD_INTERNAL;
    if (!json_get(res, "error"))
        snprintf(m, sizeof m, "the sandbox ended the watch");
    if (!w->started) { /* CreateWatcher fails: nothing was made */
        http_req_t *h = http_find(w->creating);
        if (h)
            envd_fail(h, c, "%s", m);
        watcher_unlink(w);
        watcher_free(w);
        return;
    }
    /* as envd's: every later GetWatcherEvents answers the watch's error */
    w->fail_code = c;
    snprintf(w->fail_msg, sizeof w->fail_msg, "watcher error: %.480s", m);
}

static const session_stream_cbs_t watcher_cbs = {.on_json = on_watcher_json};

/* The watcher req names, or NULL once h is answered not_found. */
static watcher_t *
watcher_find(http_req_t *h, gw_session_t *s, json_object *req)
{
    const char *id = json_get_str(req, "watcherId", json_get_str(req, "watcher_id", ""));
    for (watcher_t *w = s->envd_watchers; w; w = w->next)
        if (!strcmp(w->id, id))
            return w;
    envd_fail(h, ENVD_NOT_FOUND, "watcher with id %.40s not found", id);
    return NULL;
}

void
envd_watcher_create(http_req_t *h, gw_session_t *s, json_object *req, const char *home)
{
    int n = 0;
    for (watcher_t *w = s->envd_watchers; w; w = w->next)
        n++;
    if (n >= ENVD_WATCHERS_MAX) {
        envd_fail(h, ENVD_RESOURCE_EXHAUSTED,
                  "this sandbox has %d watchers already (the limit): remove one first", n);
        return;
    }
    watcher_t *w = xcalloc(1, sizeof *w);
    if (envd_fs_path(h, req, "path", home, false, w->client_root) < 0) {
        free(w);
        return;
    }
    uint8_t rnd[8];
    if (RAND_bytes(rnd, sizeof rnd) != 1) {
        free(w);
        envd_fail(h, ENVD_INTERNAL, "no randomness for a watcher id");
        return;
    }
    w->id[0] = 'w';
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(w->id + 1 + 2 * i, 3, "%02x", rnd[i]);
    w->s = s;
    w->entry = include_entry(req);
    w->events = json_object_new_array();
    w->creating = h->id;
    json_object *op = watch_op(w->client_root, req);
    err_t err = {0};
    w->st = session_stream_open(s, op, &watcher_cbs, on_watcher_close, w, true, &err);
    json_object_put(op);
    if (!w->st) {
        watcher_free(w);
        envd_fail(h, envd_code_of(err.code), "%s", err.msg);
        return;
    }
    w->next = s->envd_watchers;
    s->envd_watchers = w;
}

void
envd_watcher_events(http_req_t *h, gw_session_t *s, json_object *req, const char *home)
{
    (void)home;
    watcher_t *w = watcher_find(h, s, req);
    if (!w)
        return;
    if (w->dropped) {
        /* said once, then the watcher goes on from what comes next */
        unsigned long long lost = w->dropped;
        w->dropped = 0;
        json_object_put(w->events);
        w->events = json_object_new_array();
        w->events_bytes = 0;
        envd_fail(h, ENVD_RESOURCE_EXHAUSTED,
                  "%llu events were lost: a watcher holds at most %u events (%u bytes) between "
                  "two polls (these and the ones held are dropped; poll more often)",
                  lost, ENVD_WATCHER_EVENTS, ENVD_WATCHER_BYTES);
        return;
    }
    if (w->fail_msg[0]) {
        envd_fail(h, w->fail_code, "%s", w->fail_msg);
        return;
    }
    json_object *o = json_object_new_object();
    json_set(o, "events", w->events);
    w->events = json_object_new_array();
    w->events_bytes = 0;
    envd_answer(h, o);
}

void
envd_watcher_remove(http_req_t *h, gw_session_t *s, json_object *req, const char *home)
{
    (void)home;
    watcher_t *w = watcher_find(h, s, req);
    if (!w)
        return;
    watcher_unlink(w);
    w->removed = true;
    if (w->st)
        session_stream_cancel(w->st); /* on_watcher_close frees it */
    else
        watcher_free(w);
    envd_answer(h, json_object_new_object());
}

void
envd_watchers_free(gw_session_t *s)
{
    while (s->envd_watchers) {
        watcher_t *w = s->envd_watchers;
        s->envd_watchers = w->next;
        watcher_free(w); /* its channel closed when the session ended */
    }
}
