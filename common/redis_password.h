/* redis_password.h — who the gateway and the API are to Redis: an ACL user and a password kept
 * in a file, as the JWT secret is (redis/README.md "ACL", docs/operations.md "Redis").
 *
 * A password file holds one line: the password (1 to REDIS_PASSWORD_MAX bytes, no control
 * characters), optionally ended by "\n" or "\r\n". It is a regular file its owner alone may read
 * or write (0600 or 0400): anything else is refused with why. The daemons read it again at
 * every (re)connection, so a password rotated in the file is used without a restart.
 *
 * No hiredis here (redis_auth.h sends the AUTH); no I/O but reading that one file. */
#ifndef SP_REDIS_PASSWORD_H
#define SP_REDIS_PASSWORD_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define REDIS_PASSWORD_MAX 256 /* bytes, without the newline */
#define REDIS_USER_MAX     64

typedef struct {
    const char *user;          /* ACL user; NULL: the password alone (Redis' default user) */
    const char *password_file; /* NULL: no AUTH at all (a Redis without passwords) */
} redis_auth_t;

/* Reads the password in path into out[0..cap) (cap > REDIS_PASSWORD_MAX; NUL-terminated).
 * Returns its length, or < 0 with why in err (the path named). out is wiped on failure. */
int redis_password_load(const char *path, char *out, size_t cap, err_t *err);

/* Whether name can be a user here: 1 to REDIS_USER_MAX of A-Z a-z 0-9 . _ - */
bool redis_user_name_ok(const char *name);

/* Start-up check of a daemon's options: a user needs a password file, the name is valid, the
 * file loads. 0, or < 0 with why in err (worded for the command line: --redis-user, ...). */
int redis_auth_check(const redis_auth_t *a, err_t *err);

/* The AUTH command for a with password pw (pwlen bytes): argv and lens filled, returns argc
 * (3: AUTH user password; 2: AUTH password). Borrows a and pw. */
int redis_auth_command(const redis_auth_t *a, const char *pw, size_t pwlen, const char *argv[3],
                       size_t lens[3]);

/* Whether a Redis error reply (its text) refuses these credentials: NOAUTH (none given),
 * WRONGPASS (wrong or disabled user), NOPERM (the user may not run that command). */
bool redis_auth_refusal(const char *reply_text);

#endif
