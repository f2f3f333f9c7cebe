/* jwt_secret.c — the HS256 secret on disk (see jwt.h): jwt_secret_load reads and checks a
 * secret file (regular, not group/other-writable, hex or raw bytes), jwt_secret_generate creates
 * one from RAND_bytes, atomically and without clobbering, jwt_secret_derive makes a key for
 * another use of it. Secrets are wiped from the stack (OPENSSL_cleanse) once copied out. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hex.h"
#include "io.h"
#include "jwt.h"
#include "xalloc.h"

#define SECRET_FILE_MAX (2 * JWT_SECRET_MAX + 2)

static bool
all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (hex_digit(s[i]) < 0)
            return false;
    return true;
}

static int
secret_parse(const char *path, char *text, size_t n, uint8_t *out, size_t cap, size_t *len,
             err_t *err)
{
    if (n > 0 && text[n - 1] == '\n') {
        n--;
        if (n > 0 && text[n - 1] == '\r')
            n--;
    }
    if (n > 0 && n % 2 == 0 && all_hex(text, n)) {
        if (n / 2 > cap)
            return err_set(err, ERR_TOO_BIG, "%s: secret of %zu bytes exceeds %zu", path, n / 2,
                           cap);
        for (size_t i = 0; i < n / 2; i++)
            out[i] = (uint8_t)((unsigned)hex_digit(text[2 * i]) << 4 |
                               (unsigned)hex_digit(text[2 * i + 1]));
        *len = n / 2;
    } else {
        if (n > cap)
            return err_set(err, ERR_TOO_BIG, "%s: secret of %zu bytes exceeds %zu", path, n, cap);
        memcpy(out, text, n);
        *len = n;
    }
    if (*len < JWT_SECRET_MIN)
        return err_set(err, ERR_BAD_REQ, "%s: secret of %zu bytes is shorter than %d", path, *len,
                       JWT_SECRET_MIN);
    return 0;
}

int
jwt_secret_load(const char *path, uint8_t *out, size_t cap, size_t *len, err_t *err)
{
    char text[SECRET_FILE_MAX + 1];
    size_t n = 0;
    int r;
    *len = 0;
    r = io_read_private_file(path, S_IWGRP | S_IWOTH, "writable by group or others", "", text,
                             sizeof text, &n, err);
    if (r < 0)
        goto out;
    if (n > SECRET_FILE_MAX) {
        r = err_set(err, ERR_TOO_BIG, "%s: larger than %d bytes", path, SECRET_FILE_MAX);
        goto out;
    }
    r = secret_parse(path, text, n, out, cap, len, err);
    if (r < 0) {
        OPENSSL_cleanse(out, cap);
        *len = 0;
    }
out:
    OPENSSL_cleanse(text, sizeof text);
    return r;
}

int
jwt_secret_derive(const uint8_t *secret, size_t secret_len, const char *label, uint8_t key[32])
{
    unsigned int n = 0;
    if (!secret || secret_len < JWT_SECRET_MIN || secret_len > 0x7fffffff ||
        !HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)label, strlen(label),
              key, &n) ||
        n != 32)
        return -1;
    return 0;
}

/* Best effort: makes the new directory entry durable. */
static void
fsync_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int
jwt_secret_generate(const char *path, err_t *err)
{
    uint8_t key[JWT_SECRET_GEN_LEN];
    char text[2 * JWT_SECRET_GEN_LEN + 2];
    static const char digits[] = "0123456789abcdef";
    int r = 0;

    if (RAND_bytes(key, sizeof key) != 1)
        return err_set(err, EIO, "RAND_bytes failed");
    for (size_t i = 0; i < sizeof key; i++) {
        text[2 * i] = digits[key[i] >> 4];
        text[2 * i + 1] = digits[key[i] & 0x0f];
    }
    text[2 * sizeof key] = '\n';
    text[2 * sizeof key + 1] = '\0';
    OPENSSL_cleanse(key, sizeof key);

    char *tmp = xasprintf("%s.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC); /* created 0600, whatever the umask */
    if (fd < 0) {
        r = err_set(err, errno, "%s: cannot create a temporary file: %s", tmp, strerror(errno));
        free(tmp);
        OPENSSL_cleanse(text, sizeof text);
        return r;
    }
    if (fchmod(fd, 0600) < 0 || (r = io_write_all(fd, text, 2 * JWT_SECRET_GEN_LEN + 1)) < 0 ||
        fsync(fd) < 0) {
        int e = r < 0 ? -r : errno;
        r = err_set(err, e, "%s: %s", tmp, strerror(e));
    }
    OPENSSL_cleanse(text, sizeof text);
    if (close(fd) < 0 && r == 0)
        r = err_set(err, errno, "%s: %s", tmp, strerror(errno));
    /* link() publishes the complete file under its name, and fails if the name exists. */
    if (r == 0 && link(tmp, path) < 0) {
        if (errno == EEXIST)
            r = err_set(err, EEXIST, "%s: already exists, left unchanged", path);
        else
            r = err_set(err, errno, "%s: %s", path, strerror(errno));
    }
    unlink(tmp);
    free(tmp);
    if (r == 0)
        fsync_parent(path);
    return r;
}

char *
jwt_mint_file(const char *secret_file, const char *sub, const char *role, const char *session,
              int64_t ttl, err_t *err)
{
    uint8_t secret[JWT_SECRET_MAX];
    size_t len;
    if (jwt_secret_load(secret_file, secret, sizeof secret, &len, err) < 0)
        return NULL;
    jwt_claims_t cl;
    memset(&cl, 0, sizeof cl);
    snprintf(cl.sub, sizeof cl.sub, "%s", sub);
    snprintf(cl.role, sizeof cl.role, "%s", role);
    snprintf(cl.session, sizeof cl.session, "%s", session ? session : "");
    cl.iat = (int64_t)time(NULL);
    cl.exp = cl.iat + ttl;
    char *tok = jwt_sign(secret, len, &cl);
    OPENSSL_cleanse(secret, sizeof secret);
    if (!tok)
        err_set(err, ERR_BAD_REQ,
                "cannot mint that token (role must be admin, user or viewer; viewers need a "
                "session; no control characters)");
    return tok;
}
