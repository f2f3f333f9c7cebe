/* envd_files.c — envd's plain HTTP file routes (docs/e2b-wire.md 3.7): who may use them (the
 * sandbox's envdAccessToken, or a URL signed with it), their paths, and GET /files, a file's
 * bytes streamed under the gateway's credit (file_download.h). POST /files: envd_upload.c.
 * Errors are envd's {"code": status, "message"}. */
#include <openssl/crypto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "envd_connect.h"
#include "envd_fs.h"
#include "envd_routes.h"
#include "envd_token.h"
#include "file_download.h"
#include "gw.h"
#include "json_util.h"
#include "session.h"
#include "xalloc.h"

/* A signed URL's check (envd's validateSigning): 0, or -1 with why. */
static int
signature_ok(http_req_t *h, const char *sid, const char *op, char *why, size_t cap)
{
    const char *sig = http_arg(h, "signature"), *exp_s = http_arg(h, "signature_expiration");
    if (!sig) {
        snprintf(why, cap,
                 "unauthorized access, please provide a valid access token or method signing if "
                 "supported");
        return -1;
    }
    long long exp = 0;
    if (exp_s) {
        char *end;
        exp = strtoll(exp_s, &end, 10);
        if (!exp_s[0] || *end || exp <= 0) {
            snprintf(why, cap, "signature_expiration must be unix seconds");
            return -1;
        }
    }
    char token[ENVD_TOKEN_LEN + 1], want[ENVD_SIGNATURE_MAX];
    if (envd_token_make(g_gw.secret, g_gw.secret_len, sid, token) < 0) {
        snprintf(why, cap, "invalid signature");
        return -1;
    }
    const char *path = http_arg(h, "path"), *user = http_arg(h, "username");
    envd_signature(path ? path : "", op, user ? user : "", token, exp, want);
    OPENSSL_cleanse(token, sizeof token);
    bool match = strlen(sig) == strlen(want) && CRYPTO_memcmp(sig, want, strlen(want)) == 0;
    if (!match) {
        snprintf(why, cap, "invalid signature");
        return -1;
    }
    if (exp_s && exp < (long long)time(NULL)) {
        snprintf(why, cap, "signature is already expired");
        return -1;
    }
    return 0;
}

gw_session_t *
envd_files_session(http_req_t *h, const char *sid, const char *op)
{
    char why[200];
    if (h->access_token[0]) {
        if (!envd_token_matches(g_gw.secret, g_gw.secret_len, sid, h->access_token)) {
            envd_http_fail(h, 401, "access token present in header but does not match");
            return NULL;
        }
    } else if (signature_ok(h, sid, op, why, sizeof why) < 0) {
        envd_http_fail(h, 401, "%s", why);
        return NULL;
    }
    gw_session_t *s = envd_running(sid, true, why, sizeof why);
    if (!s && !envd_wait_woken(h, sid)) /* 502: the SDK's word for a sandbox not running */
        envd_http_fail(h, 502, "%s", why);
    return s;
}

int
envd_files_path(http_req_t *h, gw_session_t *s, const char *path, char out[ENVD_PATH_MAX])
{
    const char *user = http_arg(h, "username");
    char why[400];
    const char *home = user && !strcmp(user, "root") ? "/root" : session_home(s);
    if (envd_path_abs(home, path, strlen(path), out, ENVD_PATH_MAX, why, sizeof why) == 0)
        return 0;
    envd_http_fail(h, 400, "error expanding and resolving path '%.300s': %s", path, why);
    return -1;
}

int
envd_files_status(json_object *res, const char *path, char *msg, size_t cap)
{
    json_object *e = json_get(res, "error");
    const char *m = json_get_str(e, "message", "the sandbox's executor failed");
    if (envd_fs_error_is(res, ERR_NOT_FOUND))
        return snprintf(msg, cap, "path '%s' does not exist", path), 404;
    if (envd_fs_error_is(res, EISDIR))
        return snprintf(msg, cap, "path '%s' is a directory", path), 400;
    snprintf(msg, cap, "%s", m);
    if (envd_fs_error_is(res, EINVAL) || envd_fs_error_is(res, ERR_BAD_REQ) ||
        envd_fs_error_is(res, ENOTDIR))
        return 400;
    if (envd_fs_error_is(res, EACCES) || envd_fs_error_is(res, ERR_ESCAPE))
        return 403;
    if (envd_fs_error_is(res, ENOSPC))
        return 507; /* envd's, for a full disk (NotEnoughSpaceError) */
    if (envd_fs_error_is(res, ERR_TOO_BIG))
        return 413;
    if (envd_fs_error_is(res, ERR_BUSY))
        return 502;
    return 500;
}

/* ---- GET /files ---- */

static void
download_free(file_download_t *d)
{
    free(d);
}

static void
download_fail(file_download_t *d, http_req_t *h, json_object *res)
{
    char m[ENVD_TEXT_MAX];
    if (res) {
        int status = envd_files_status(res, d->path, m, sizeof m);
        envd_http_fail(h, status, "%s", m);
    } else {
        envd_http_fail(h, 500, "the sandbox's executor sent no size");
    }
}

void
envd_files_get(http_req_t *h, const char *sid)
{
    gw_session_t *s = envd_files_session(h, sid, "read");
    if (!s)
        return;
    file_download_t *d = xcalloc(1, sizeof *d);
    const char *path = http_arg(h, "path");
    char abs[ENVD_PATH_MAX];
    if (envd_files_path(h, s, path ? path : "", abs) < 0) {
        free(d);
        return;
    }
    snprintf(d->path, sizeof d->path, "%s", abs);
    d->extra = "cache-control: no-store\r\n";
    d->fail = download_fail;
    d->free = download_free;
    file_download_attach(d, h);
    json_object *op = json_object_new_object();
    json_set_str(op, "op", "file.download");
    json_set_str(op, "path", d->path);
    err_t err = {0};
    if (file_download_open(d, s, op, &err) < 0)
        envd_http_fail(h, 502, "%s", err.msg);
    json_object_put(op);
}
