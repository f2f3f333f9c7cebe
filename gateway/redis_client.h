/* redis_client.h — the gateway's asynchronous Redis connection (hiredis on the uv loop), with
 * reconnection. Commands issued while disconnected fail at once (callback with NULL). hiredis
 * frees each reply after the callback returns: copy what you keep. */
#ifndef SP_REDIS_CLIENT_H
#define SP_REDIS_CLIENT_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>

#include "redis_password.h"

typedef void (*redis_client_cb)(redisReply *reply,
                                void *ud); /* reply NULL: error or disconnected */

/* The credentials of every connection this module makes, the blocking ones included (AUTH
 * before anything else; redis_password.h). Before redis_client_start; a's strings are borrowed
 * for the process's life. NULL, or no password_file: no AUTH. */
void redis_client_set_auth(const redis_auth_t *a);

/* The credentials for the sentinels (redis_sentinel.h), as redis_client_set_auth's. */
void redis_client_set_sentinel_auth(const redis_auth_t *a);

/* addr: "unix:/path", "host:port" or "sentinel://HOST:PORT[,...]/NAME" (redis_addr.h; -1 and
 * logged when it is none of them). on_ready runs after every (re)connection. In sentinel mode
 * each (re)connection asks the sentinels (off the loop, on libuv's thread pool: at most
 * REDIS_SENTINEL_TIMEOUT_MS per sentinel to connect and as much to answer) and checks ROLE; a
 * server that answers READONLY or whose ROLE stops saying master is left, its pending commands
 * answered NULL. */
int redis_client_start(const char *addr, void (*on_ready)(void));
void redis_client_stop(void);
bool redis_client_connected(void);
/* Writes the commands queued in this loop iteration now (redis_uv_flush): before a reply that
 * reports what they store goes out at once. */
void redis_client_flush(void);

/* printf-style command (hiredis %s/%b/%lld). cb may be NULL. Returns 0, or -1 when not
 * connected (cb is then called with NULL before returning). */
int redis_client_cmd(redis_client_cb cb, void *ud, const char *fmt, ...);
int redis_client_cmdv(redis_client_cb cb, void *ud, int argc, const char **argv,
                      const size_t *lens);

/* Whether --redis names sentinels. */
bool redis_client_sentinel(void);
/* Leaves the connection now (pending commands answered NULL) and makes a new one. */
void redis_client_reconnect(const char *why);

/* A blocking connection for start-up work (re-attaching sessions) before the loop runs,
 * authenticated as redis_client_set_auth says. Caller frees with redisFree. NULL on failure
 * (a refused AUTH is logged). */
redisContext *redis_client_sync_connect(const char *addr);

#endif
