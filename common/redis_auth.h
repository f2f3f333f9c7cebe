/* redis_auth.h — AUTH on a blocking hiredis connection, with the credentials of redis_password.h
 * (the gateway's start-up and takeover connections, the API's per-worker connection). The
 * password file is read at each call, so a rotated password is picked up. */
#ifndef SP_REDIS_AUTH_H
#define SP_REDIS_AUTH_H

#include "redis_password.h"

struct redisContext;

/* Authenticates c (connected, blocking) as a says; nothing to do when a->password_file is NULL.
 * Returns 0; or < 0 with why in err: ERR_AUTH when Redis refused (its answer in the message),
 * ERR_UNAVAILABLE when the connection failed, the password file's error when it did not load.
 * On failure c is left as it is: the caller frees it. */
int redis_auth_sync(struct redisContext *c, const redis_auth_t *a, err_t *err);

#endif
