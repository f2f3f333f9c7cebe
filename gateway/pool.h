/* pool.h — the warm pool: N ready sandboxes per profile, kept topped up in the background.
 * A sandbox enters the pool (Redis list `sp:pool:{<profile>}:<gateway>`) only after its executor
 * answered, so claiming one — a single LPOP — yields a sandbox that takes commands at once, over
 * the link it warmed up with (pool_take_link).
 * Several gateways never share an entry: each pops only its own list. The pool holds sandboxes
 * of the gateway's default image (--image) only; a session asking for another gets a fresh one. */
#ifndef SP_POOL_H
#define SP_POOL_H

#include <json-c/json.h>
#include <stdbool.h>

#include "exec_link.h"
#include "sandbox/provider.h"

typedef void (*pool_claim_cb)(void *ud, const sandbox_t *sb); /* sb NULL: pool empty */

void pool_start(void);
/* At start-up (blocking Redis read): remembers the sandboxes an earlier life left in this
 * gateway's ready list, which pool_owns then counts as in use. */
void pool_restore(void);
/* Whether sandbox_id is warming here or was in the ready list at pool_restore. */
bool pool_owns(const char *sandbox_id);
/* Whether pool_claim of profile asks Redis (a pool of that profile is kept): it answers cb only
 * once its claim ran there, after whatever was sent before it on the same connection. */
bool pool_serves(const char *profile);
void pool_claim(const char *profile, const char *session_id, bool env_pending, pool_claim_cb cb,
                void *ud);
/* The open executor link of the warm sandbox sandbox_id, which it got when it warmed up, now
 * the caller's (exec_link_rebind it, exec_link_free it); NULL when there is none (a sandbox of
 * an earlier life or a peer's, or whose link went down). */
exec_link_t *pool_take_link(const char *sandbox_id);
/* A started sandbox (borrowed), or NULL with code and msg. */
typedef void (*pool_made_cb)(void *ud, const sandbox_t *sb, int code, const char *msg);
/* Starts a sandbox now for profile with params' limits/env/image (borrowed; may be NULL); cb
 * once, later, on the loop (bwrap and local on a worker thread meanwhile: sandbox_start.h;
 * docker through its daemon). Returns < 0 with err set (and no cb) when it cannot begin. */
int pool_start_sandbox(const char *profile, json_object *params, pool_made_cb cb, void *ud,
                       err_t *err);
/* The image params ask for ("image"), else the gateway's default (borrowed). */
const char *pool_image(json_object *params);
/* Tops the pool up (called after claims and periodically). */
void pool_tick(void);
json_object *pool_describe(void);
/* A warm sandbox (its JSON record) of a dead peer on this host (takeover.c): joins this pool
 * if it runs this gateway's default image and still lives, else it is destroyed. */
void pool_adopt(const char *record);
void pool_stop(void);

#endif
