/* err.h — the error object threaded through calls that need words (crun style).
 * Functions return int: >= 0 success (may carry a value), < 0 failure (-errno or -ERR_*).
 * err_t holds the message; nothing to free. */
#ifndef SP_ERR_H
#define SP_ERR_H

#include <errno.h>

#define ERR_MSG_MAX 256

typedef struct {
    int code; /* errno value or ERR_* */
    char msg[ERR_MSG_MAX];
} err_t;

/* Project error codes, beyond errno's range. */
enum {
    ERR_BASE = 1000,
    ERR_PROTO,        /* malformed frame or message */
    ERR_TOO_BIG,      /* frame or payload over its limit */
    ERR_BAD_REQ,      /* request understood but invalid (missing/wrong field) */
    ERR_ESCAPE,       /* path leaves the sandbox roots */
    ERR_NOT_FOUND,    /* named thing (session, process, channel) does not exist */
    ERR_BUSY,         /* resource in use */
    ERR_AUTH,         /* credentials missing, malformed or not valid (bad signature, claims) */
    ERR_AUTH_EXPIRED, /* a well-formed, correctly signed token whose exp has passed */
    /* What the HTTP APIs answer besides the above (api/errors.c gives each its status). */
    ERR_AUTH_ROLE,       /* a valid token whose role may not do this ("unauthorized": the name
                          * a gateway's inbox gives that refusal) */
    ERR_FORBIDDEN,       /* the caller may not do this (read-only token, admin route) */
    ERR_METHOD,          /* the path exists, not with this method */
    ERR_SESSION_ENDED,   /* the session stopped */
    ERR_CONFLICT,        /* the name is someone else's */
    ERR_FAILED,          /* it failed before and stays failed */
    ERR_AT_CAPACITY,     /* no room for one more */
    ERR_NOT_IMPLEMENTED, /* not built (yet) */
    ERR_UNAVAILABLE,     /* something it needs is not there (Redis, a gateway's answer) */
    ERR_GATEWAY_DOWN,    /* the session's gateway is not running */
    ERR_NO_GATEWAY,      /* no gateway is running */
    ERR_TIMEOUT,         /* no answer in time */
    ERR_ABORTED,         /* a transfer stopped half-way */
    ERR_INTERNAL,        /* a failure with no better name */
    ERR_LAST,            /* one past the last code */
};

/* Sets err (if not NULL) and returns -code. printf-style message. */
int err_set(err_t *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Short stable name for a code, used as the "code" field of JSON errors. */
const char *err_name(int code);

#endif
