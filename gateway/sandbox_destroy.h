/* sandbox_destroy.h — a sandbox's destroy off the gateway's loop.
 *
 * A bwrap or local sandbox's destroy kills its processes and waits for them, removes its
 * cgroup, unmounts its root, detaches its disk and removes its directory file by file: ~40 ms
 * on a quiet host, ~100 ms on a loaded one, seconds for a sandbox that wrote many files. On the
 * loop that held every other session (5,000 sessions ending brought the gateway's heartbeat key
 * within 76 ms of lapsing). Such a destroy runs on libuv's thread pool, at most
 * SANDBOX_DESTROYS_MAX at once, the rest in order; Docker's is asynchronous already (its
 * daemon removes the container) and is begun on the loop.
 *
 * A destroy once asked is always carried out: at a stop the gateway drains them (main.c); a
 * gateway killed during one leaves the session STOPPED in its set, and the restore destroys the
 * sandbox again (session_restore.c). */
#ifndef SP_SANDBOX_DESTROY_H
#define SP_SANDBOX_DESTROY_H

#include "sandbox/provider.h"

#define SANDBOX_DESTROYS_MAX 2

/* Called on the loop once the sandbox is gone: code 0, or the provider's error (code, msg). */
typedef void (*sandbox_destroyed_fn)(void *ud, int code, const char *msg);

/* Destroys and purges sb (copied) through p; done may be NULL. done is never called from
 * within this call. */
void sandbox_destroy(const provider_t *p, const sandbox_t *sb, sandbox_destroyed_fn done, void *ud);

/* Destroys sb through the provider its record names (nothing when it names none), errors
 * logged: a sandbox nothing will use. */
void sandbox_discard(const sandbox_t *sb);

/* Destroys begun or waiting (main drains them before it exits). */
int sandbox_destroy_pending(void);

#endif
