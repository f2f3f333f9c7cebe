/* redis_password.c — Redis password files and the AUTH command (redis_password.h). The password
 * read is wiped from the stack (OPENSSL_cleanse) once copied out. */
#include "redis_password.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

/* A password, "\r\n", and one byte more to tell a file that is too long. */
#define PASSWORD_FILE_READ (REDIS_PASSWORD_MAX + 3)

/* text[0..n) is the file's content: the password is what precedes one final "\n" or "\r\n". */
static int
password_parse(const char *path, const char *text, size_t n, err_t *err)
{
    if (n > 0 && text[n - 1] == '\n') {
        n--;
        if (n > 0 && text[n - 1] == '\r')
            n--;
    }
    if (n == 0)
        return err_set(err, ERR_BAD_REQ, "%s: empty (it holds the password, one line)", path);
    if (n > REDIS_PASSWORD_MAX)
        return err_set(err, ERR_TOO_BIG, "%s: a password longer than %d bytes", path,
                       REDIS_PASSWORD_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 || c == 0x7f)
            return err_set(err, ERR_BAD_REQ,
                           "%s: control character 0x%02x at byte %zu (the file holds one line: "
                           "the password)",
                           path, c, i);
    }
    return (int)n;
}

int
redis_password_load(const char *path, char *out, size_t cap, err_t *err)
{
    char text[PASSWORD_FILE_READ];
    size_t n = 0;
    int r;
    if (cap <= REDIS_PASSWORD_MAX)
        return err_set(err, EINVAL, "password buffer too small");
    out[0] = '\0';
    r = io_read_private_file(path, S_IRWXG | S_IRWXO, "open to group or others", ": chmod 600 it",
                             text, sizeof text, &n, err);
    if (r < 0)
        goto out;
    if (n == sizeof text) {
        r = err_set(err, ERR_TOO_BIG, "%s: a password longer than %d bytes", path,
                    REDIS_PASSWORD_MAX);
        goto out;
    }
    r = password_parse(path, text, n, err);
    if (r >= 0) {
        memcpy(out, text, (size_t)r);
        out[r] = '\0';
    }
out:
    OPENSSL_cleanse(text, sizeof text);
    return r;
}

bool
redis_user_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > REDIS_USER_MAX)
        return false;
    return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

int
redis_auth_check(const redis_auth_t *a, err_t *err)
{
    if (a->user && !a->password_file)
        return err_set(err, ERR_BAD_REQ, "--redis-user needs --redis-password-file");
    if (a->user && !redis_user_name_ok(a->user))
        return err_set(err, ERR_BAD_REQ,
                       "--redis-user: 1 to %d of A-Z a-z 0-9 . _ - (not \"%.64s\")", REDIS_USER_MAX,
                       a->user);
    if (!a->password_file)
        return 0;
    char pw[REDIS_PASSWORD_MAX + 1];
    int r = redis_password_load(a->password_file, pw, sizeof pw, err);
    OPENSSL_cleanse(pw, sizeof pw);
    return r < 0 ? r : 0;
}

int
redis_auth_command(const redis_auth_t *a, const char *pw, size_t pwlen, const char *argv[3],
                   size_t lens[3])
{
    int argc = 0;
    argv[argc] = "AUTH";
    lens[argc++] = 4;
    if (a->user) {
        argv[argc] = a->user;
        lens[argc++] = strlen(a->user);
    }
    argv[argc] = pw;
    lens[argc++] = pwlen;
    return argc;
}

bool
redis_auth_refusal(const char *reply_text)
{
    return reply_text &&
           (!strncmp(reply_text, "NOAUTH", 6) || !strncmp(reply_text, "WRONGPASS", 9) ||
            !strncmp(reply_text, "NOPERM", 6));
}
