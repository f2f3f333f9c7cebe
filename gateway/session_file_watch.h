/* session_file_watch.h — a session's file watches (docs/api.md, "File events"): one executor
 * file.watch (recursive inotify) per (session, directory), shared by every client watching that
 * directory. Each event goes into each watcher's batch (file_batch.h), which is due
 * FILE_WATCH_BATCH_MS after the first event in it: a burst is one message per client, not
 * thousands. A watch is not use of its session (its idle_timeout runs on). When the executor
 * link drops and comes back (an executor restart, a link lost and made again) the watch opens
 * again and its watchers get a "resync" event: what changed meanwhile was not seen. A client
 * that reconnects to the session (a gateway restart, a takeover) watches again the same way. */
#ifndef SP_SESSION_FILE_WATCH_H
#define SP_SESSION_FILE_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "file_batch.h"
#include "session.h"

/* Watches a session holds at once: each is an inotify instance in its sandbox, and the kernel
 * allows a user 128 of those by default. */
#define FILE_WATCH_MAX      8
#define FILE_WATCH_BATCH_MS 100
#define FILE_WATCH_PATH_MAX 4096

typedef struct file_watch file_watch_t;
typedef struct file_watcher file_watcher_t;
struct file_watcher {
    /* Set by the client. ready: the executor watches path (as it resolved it), with that many
     * directories; an event that comes later is in the batch. ended: the watch could not start
     * or stopped (code, message); w is let go (watch NULL), its batch is still its own. wake:
     * the batch is due (due set). */
    void (*ready)(file_watcher_t *w, const char *path, int64_t directories);
    void (*ended)(file_watcher_t *w, const char *code, const char *message);
    void (*wake)(file_watcher_t *w);
    /* The watch's: */
    file_watcher_t *next;
    file_watch_t *watch; /* NULL once let go */
    file_batch_t batch;  /* events not taken yet: the client takes and clears it */
    bool ready_told;     /* ready was called: later losses are told as "resync" */
    bool due;
};

/* A path as a watch's key: at most FILE_WATCH_PATH_MAX bytes, not empty, trailing slashes
 * dropped ("/" stays). False when it is not one. */
bool file_watch_key(const char *path, char *out, size_t cap);
/* Adds w (zeroed but for its callbacks) to the watch of key (file_watch_key), made when there
 * is none: ERR_AT_CAPACITY past FILE_WATCH_MAX, ERR_BUSY when the session cannot run it now.
 * ready comes once the executor watches, maybe before this returns; the executor's refusal
 * (not a directory, ...) comes to ended. 0 or -1 with err. */
int session_file_watch(gw_session_t *s, const char *key, file_watcher_t *w, err_t *err);
/* w leaves its watch; the last one out closes it. Its batch stays as it is. */
void session_file_unwatch(file_watcher_t *w);
/* The watches a session holds now. */
int session_file_watches(const gw_session_t *s);

#endif
