/* redis_auth.c — AUTH on a blocking hiredis connection (redis_auth.h). */
#include "redis_auth.h"

#include <hiredis/hiredis.h>
#include <openssl/crypto.h>

int
redis_auth_sync(redisContext *c, const redis_auth_t *a, err_t *err)
{
    if (!a || !a->password_file)
        return 0;
    char pw[REDIS_PASSWORD_MAX + 1];
    int n = redis_password_load(a->password_file, pw, sizeof pw, err);
    if (n < 0)
        return n;
    const char *argv[3];
    size_t lens[3];
    int argc = redis_auth_command(a, pw, (size_t)n, argv, lens);
    redisReply *r = redisCommandArgv(c, argc, argv, lens);
    OPENSSL_cleanse(pw, sizeof pw);
    int rc = 0;
    if (!r)
        rc = err_set(err, ERR_UNAVAILABLE, "Redis: %s", c->errstr[0] ? c->errstr : "no answer");
    else if (r->type == REDIS_REPLY_ERROR)
        rc = err_set(err, ERR_AUTH, "Redis refused user %s: %s", a->user ? a->user : "default",
                     r->str);
    freeReplyObject(r);
    return rc;
}
