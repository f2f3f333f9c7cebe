/* redis_acl.h — Redis' ACL file from sandpipe's template (redis/users.acl), as `sandpipe
 * redis-acl` writes it for make run, compose.yaml and the tests.
 *
 * The template is Redis' own ACL syntax, made readable: lines starting with '#' and blank lines
 * are dropped (an ACL file has no comments); a line "user NAME ..." begins a user, and lines
 * starting with a space or a tab continue it (joined with one space: an ACL file has one line
 * per user). The rule "@password@" in a user's rules becomes "#" and the SHA-256 of that user's
 * password in hex, so the file Redis reads holds no password. A cleartext password (">...") or
 * "nopass" in a template is refused: every password comes from its file.
 *
 * Pure: passwords come from the caller's callback; the output is appended to a buf_t. */
#ifndef SP_REDIS_ACL_H
#define SP_REDIS_ACL_H

#include <stddef.h>

#include "buf.h"
#include "err.h"

#define REDIS_ACL_PASSWORD_RULE "@password@"
#define REDIS_ACL_USERS_MAX     32

/* Gives user's password: copies it into pw[0..cap) and returns its length, or < 0 with why in
 * err. */
typedef int (*redis_acl_password_fn)(const char *user, char *pw, size_t cap, void *ud, err_t *err);

/* Renders tmpl[0..len) into out (appended: one "user ..." line per user, in template order).
 * Returns the number of users, or < 0 with why in err (the template's line number, or the
 * callback's error). */
int redis_acl_render(const char *tmpl, size_t len, redis_acl_password_fn password, void *ud,
                     buf_t *out, err_t *err);

#endif
