/* err.c — error object helpers. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
err_set(err_t *err, int code, const char *fmt, ...)
{
    if (code < 0)
        code = -code;
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -code;
}

const char *
err_name(int code)
{
    if (code < 0)
        code = -code;
    switch (code) {
    case ERR_PROTO: return "protocol_error";
    case ERR_TOO_BIG: return "too_large";
    case ERR_BAD_REQ: return "bad_request";
    case ERR_ESCAPE: return "path_escape";
    case ERR_NOT_FOUND: return "not_found";
    case ERR_BUSY: return "busy";
    case ERR_AUTH: return "unauthorized";
    case ERR_AUTH_EXPIRED: return "token_expired";
    case ERR_AUTH_ROLE: return "unauthorized";
    case ERR_FORBIDDEN: return "forbidden";
    case ERR_METHOD: return "method_not_allowed";
    case ERR_SESSION_ENDED: return "session_ended";
    case ERR_CONFLICT: return "conflict";
    case ERR_FAILED: return "failed";
    case ERR_AT_CAPACITY: return "at_capacity";
    case ERR_NOT_IMPLEMENTED: return "not_implemented";
    case ERR_UNAVAILABLE: return "unavailable";
    case ERR_GATEWAY_DOWN: return "gateway_down";
    case ERR_NO_GATEWAY: return "no_gateway";
    case ERR_TIMEOUT: return "timeout";
    case ERR_ABORTED: return "aborted";
    case ENOENT: return "not_found";
    case EEXIST: return "exists";
    case EACCES:
    case EPERM:
    case EROFS: return "permission_denied"; /* a read-only mount refuses as a mode would */
    case EISDIR: return "is_directory";
    case ENOTDIR: return "not_directory";
    case ENOTEMPTY: return "not_empty";
    case EINVAL: return "invalid";
    case EILSEQ: return "bad_request"; /* text that is not in its encoding (UTF-8) */
    case ENOSPC: return "no_space";
    case EFBIG: return "too_large";
    case ENOTSUP: return "unsupported";
    default: return "internal";
    }
}
