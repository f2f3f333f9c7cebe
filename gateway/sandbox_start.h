/* sandbox_start.h — a provider's synchronous create (bwrap, local) run on libuv's thread pool,
 * so that the gateway's loop goes on serving while a sandbox starts.
 *
 * A start forks twice and waits for the intermediate child and for the exec, writes cgroup
 * files (cgroup v1's first attach waits for an RCU grace period), mounts, makes a user
 * namespace: tens of ms on a quiet host, seconds on a loaded one. On the loop that stalled every
 * session, the gateway's heartbeat in Redis and the executors' heartbeats; on a worker thread
 * only the start waits. What the loop does with the sandbox afterwards (host record, link,
 * READY) stays on the loop: done is called there.
 *
 * At most SANDBOX_STARTS_MAX starts run at once (each holds one of libuv's threads, whose pool
 * the Sentinel lookups and zip uploads share); more wait in order of arrival. The providers'
 * caches that a start fills (seccomp program, /etc copy, disk template, bwrap's version) are
 * guarded for it. Forking from a threaded process is safe here because the children run only
 * async-signal-safe code before exec (provider.c, sandbox_userns.c). */
#ifndef SP_SANDBOX_START_H
#define SP_SANDBOX_START_H

#include "sandbox/provider.h"

#define SANDBOX_STARTS_MAX 2

/* Called on the loop once: sb (borrowed until it returns) started, or NULL with the provider's
 * error code (< 0 or > 0, as err_t holds it) and message. */
typedef void (*sandbox_started_fn)(void *ud, const sandbox_t *sb, int code, const char *msg);

/* Starts p->create(spec) off the loop. spec is copied (its strings and env: the caller's may go
 * once this returns). Returns 0 (done will be called, never from within this call) or < 0 with
 * err set (then done is not called). */
int sandbox_start(const provider_t *p, const sandbox_spec_t *spec, sandbox_started_fn done,
                  void *ud, err_t *err);

/* Starts not begun yet are answered "the gateway is stopping" (on_stop); running ones finish. */
void sandbox_start_stop(void);

/* Starts still running (main drains them before it exits: a sandbox half made stays nowhere). */
int sandbox_start_running(void);

/* provider_log_sink for the gateway: on a start's thread the output pipe is kept with the start
 * and handed to sandbox_log_watch on the loop once it is done; elsewhere at once. */
void sandbox_start_log_sink(const char *sandbox_id, int fd);

#endif
