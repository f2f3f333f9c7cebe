/* redis_sentinel.h — reaching the Redis primary a --redis address names (redis_addr.h), with
 * blocking hiredis calls: the API's workers, the gateway's start-up connections, and the
 * gateway's asking of the sentinels before each (re)connection (docs/operations.md "Redis").
 *
 * Sentinel mode: the sentinels are asked in turn (SENTINEL get-master-addr-by-name, each given
 * REDIS_SENTINEL_TIMEOUT_MS to connect and as much to answer), the first valid answer wins; a
 * connection made to that address is then asked ROLE, and one that is not "master" (a stale
 * answer, a primary demoted since) is dropped: nothing is ever written to a replica. */
#ifndef SP_REDIS_SENTINEL_H
#define SP_REDIS_SENTINEL_H

#include <stdbool.h>

#include "redis_addr.h"
#include "redis_password.h"

#define REDIS_SENTINEL_TIMEOUT_MS 200

struct redisContext;
struct redisReply;

/* Asks a's sentinels (authenticated as sentinel_auth says; NULL or no password file: no AUTH)
 * for the primary's address. 0 with it in out, or < 0 with why in err (each sentinel's failure
 * logged by the caller from err: the last one's words). */
int redis_sentinel_ask(const redis_addr_t *a, const redis_auth_t *sentinel_auth,
                       redis_endpoint_t *out, err_t *err);

/* Whether a ROLE reply says this server is a primary; *replicas gets the number of replicas it
 * lists (connected to it) when replicas is not NULL. */
bool redis_role_is_master(const struct redisReply *r, int *replicas);

/* Whether an error reply's text says the server is a replica now (READONLY: a write sent to a
 * demoted primary, which did not run it). */
bool redis_reply_readonly(const char *reply_text);

/* A blocking connection to the server a names (in sentinel mode: the primary the sentinels name
 * now), not authenticated yet. timeout_ms bounds the connection to Redis (not the sentinels').
 * NULL with why in err (ERR_UNAVAILABLE). The caller frees it with redisFree. */
struct redisContext *redis_connect_sync(const redis_addr_t *a, const redis_auth_t *sentinel_auth,
                                        int timeout_ms, err_t *err);

/* In sentinel mode, after AUTH: 0 if c's ROLE says master, else < 0 (ERR_UNAVAILABLE: drop it
 * and connect again). 0 at once in the other modes. */
int redis_check_primary(struct redisContext *c, const redis_addr_t *a, err_t *err);

#endif
