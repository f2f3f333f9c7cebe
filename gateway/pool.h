/* pool.h — the warm pool: N ready sandboxes per profile, kept topped up in the background.
 * A sandbox enters the pool (Redis list `sp:pool:{<profile>}:<gateway>`) only after its executor
 * answered, so claiming one — a single LPOP — yields a sandbox that takes commands at once.
 * Several gateways never share an entry: each pops only its own list. The pool holds sandboxes
 * of the gateway's default image (--image) only; a session asking for another gets a fresh one. */
#ifndef SP_POOL_H
#define SP_POOL_H

#include <json-c/json.h>

#include "sandbox/provider.h"

typedef void (*pool_claim_cb)(void *ud, const sandbox_t *sb); /* sb NULL: pool empty */

void pool_start(void);
void pool_claim(const char *profile, pool_claim_cb cb, void *ud);
/* Starts a sandbox now for profile with params' limits/env (borrowed; may be NULL). */
int pool_create_sandbox(const char *profile, json_object *params, sandbox_t *out, err_t *err);
/* The image params ask for ("image"), else the gateway's default (borrowed). */
const char *pool_image(json_object *params);
/* Tops the pool up (called after claims and periodically). */
void pool_tick(void);
json_object *pool_describe(void);
void pool_stop(void);

#endif
