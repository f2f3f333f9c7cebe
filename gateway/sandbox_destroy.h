/* sandbox_destroy.h — a sandbox's destroy off the gateway's loop.
 *
 * A bwrap or local sandbox's destroy kills its processes and waits for them, removes its
 * cgroup, unmounts its root, detaches its disk and removes its directory file by file: ~40 ms
 * on a quiet host, ~100 ms on a loaded one, seconds for a sandbox that wrote many files. On the
 * loop that held every other session (5,000 sessions ending brought the gateway's heartbeat key
 * within 76 ms of lapsing). Such a destroy runs on libuv's thread pool, at most
 * SANDBOX_DESTROYS_MAX at once, the rest in order; Docker's daemon is asked to remove the
 * container from the loop (asynchronously), then the directory goes on a worker.
 *
 * A destroy once asked is carried out: a session leaves its gateway's set only once its
 * sandbox is gone, so a gateway killed or stopped before that finds it STOPPED there at its
 * restart and destroys the sandbox again (session_restore.c); discards are drained at a stop
 * (main.c). A destroy that fails keeps its session in the set, so the restart tries again. */
#ifndef SP_SANDBOX_DESTROY_H
#define SP_SANDBOX_DESTROY_H

#include "sandbox/provider.h"

#define SANDBOX_DESTROYS_MAX 2

/* Called on the loop once the sandbox is gone: code 0, or the provider's error (code, msg). */
typedef void (*sandbox_destroyed_fn)(void *ud, int code, const char *msg);

/* Destroys and purges sb (copied) through p: its daemon's removal first where it has one
 * (provider_t.remove, begun on the loop), then what stays on the host on a worker. done may be
 * NULL (a discard); never called from within this call. A destroy with a done is one its
 * caller can carry out again later (a session STOPPED in its gateway's set): at a stop, one
 * that has not begun is answered ERR_BUSY instead (sandbox_destroy_stop). urgent: someone
 * waits for it (a client's delete): ahead of the others still waiting. */
void sandbox_destroy(const provider_t *p, const sandbox_t *sb, sandbox_destroyed_fn done, void *ud,
                     bool urgent);

/* Destroys sb through the provider its record names (nothing when it names none), errors
 * logged: a sandbox nothing will use. */
void sandbox_discard(const sandbox_t *sb);

/* At a stop: destroys with a done that have not begun are answered ERR_BUSY (their sessions are
 * STOPPED in the gateway's set: the restart destroys the sandboxes), discards stay queued. A
 * long queue (thousands of sessions ending) is not drained while the gateway's heartbeat is
 * gone and a peer may take its sessions over. */
void sandbox_destroy_stop(void);

/* Destroys begun or waiting (main drains them before it exits). */
int sandbox_destroy_pending(void);

#endif
