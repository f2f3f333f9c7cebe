/* envd_connect.h — Connect RPC with its JSON codec on the gateway's HTTP side: how E2B's SDKs
 * speak to envd, a sandbox's own API (docs/e2b-wire.md section 3; docs/api.md "E2B API").
 *
 * nginx sends an envd request (E2B_SANDBOX_URL is its origin; the SDK names the sandbox in
 * E2b-Sandbox-Id) to the sandbox's gateway as /envd/{session}/<the path>. A unary call is a
 * JSON body answered 200 with a JSON message, or an error status with {"code","message"}; a
 * server stream is one enveloped message in (1 byte of flags, 4 of big-endian length, the JSON),
 * enveloped messages out and always an end-of-stream envelope (flags 0x02) last, an error in
 * it, all in a 200. */
#ifndef SP_ENVD_CONNECT_H
#define SP_ENVD_CONNECT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envd_wire.h"
#include "http_server.h"

typedef struct gw_session gw_session_t;

/* Connect's codes (the ones envd answers with). */
typedef enum {
    ENVD_CANCELED,
    ENVD_UNKNOWN,
    ENVD_INVALID_ARGUMENT,
    ENVD_DEADLINE_EXCEEDED,
    ENVD_NOT_FOUND,
    ENVD_ALREADY_EXISTS,
    ENVD_PERMISSION_DENIED,
    ENVD_RESOURCE_EXHAUSTED,
    ENVD_FAILED_PRECONDITION,
    ENVD_UNIMPLEMENTED,
    ENVD_INTERNAL,
    ENVD_UNAVAILABLE,
    ENVD_UNAUTHENTICATED,
} envd_code_t;

#define ENVD_FLAG_END  0x02 /* an end-of-stream envelope */
#define ENVD_HEAD_LEN  5
#define ENVD_MSG_MAX   (4u << 20) /* the largest request message read */
#define ENVD_KEEPALIVE 50         /* seconds between keepalives when the client names none */
#define ENVD_TEXT_MAX  9000       /* an error's message: room for two paths (envd names them) */

const char *envd_code_name(envd_code_t c); /* "not_found" */
int envd_code_status(envd_code_t c);       /* its HTTP status (Connect's table) */
/* The code of an executor or gateway error (err.h code, or its name as a JSON error carries
 * it). */
envd_code_t envd_code_of(int err_code);
envd_code_t envd_code_of_name(const char *err_name);

/* The request message of h (a JSON object, new ref): the body of a unary call, the one
 * envelope of a stream's. NULL once the error is answered (wrong content type, not JSON, not an
 * object, a stream's envelope malformed). */
json_object *envd_request(http_req_t *h, bool stream);

/* The session of h's sandbox sid, for a caller holding its envdAccessToken (X-Access-Token;
 * envd_token.h). NULL once answered: unauthenticated, or unavailable (no such sandbox running
 * here, paused, its runtime not connected) in the call's own form (stream: a 200 with the error
 * in its end). */
gw_session_t *envd_session(http_req_t *h, const char *sid, bool stream);
/* The session of sandbox sid if it runs here (READY), else NULL with why (cap bytes): paused,
 * not running, not ready. wake: the caller holds the sandbox's credential, so a paused session
 * with auto_resume is resumed for it (session_wake). */
gw_session_t *envd_running(const char *sid, bool wake, char *why, size_t cap);
/* After envd_running(sid, true) found no running session: whether h waits for the session's
 * auto-resume to connect (true: its route runs again then, and answers). */
bool envd_wait_woken(http_req_t *h, const char *sid);

/* The Linux user a call names (Authorization: Basic base64("<user>:"), which E2B's SDK sends
 * when the caller named one; not a credential) into out, "" when none. -1 when the header is
 * there and malformed. */
int envd_user(const http_req_t *h, char *out, size_t cap);
/* Connect-Timeout-Ms: the client's deadline in milliseconds, 0 none (absent, or malformed: the
 * SDK sends digits). */
uint64_t envd_deadline_ms(const http_req_t *h);
/* Keepalive-Ping-Interval in seconds, bounded to [1, ENVD_KEEPALIVE]: quieter than that,
 * nginx and the SDK's HTTP client would end the stream. */
unsigned envd_keepalive_s(const http_req_t *h);

/* A unary call's answer: msg (taken) as 200 JSON, or the error. */
void envd_answer(http_req_t *h, json_object *msg);
void envd_fail(http_req_t *h, envd_code_t c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An executor op's error result ({"error":{"code","message"}}) as a unary error. */
void envd_fail_result(http_req_t *h, json_object *result);

/* An error of envd's plain HTTP routes (/files, /health): status with E2B's body
 * {"code": status, "message"} (envd's jsonError), which the SDK maps by status
 * (docs/e2b-wire.md 3.10). */
void envd_http_fail(http_req_t *h, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A server stream: its head (200, application/connect+json, chunked), messages (taken), its end
 * (NULL code: success; else the error and its message). */
void envd_stream_head(http_req_t *h);
void envd_stream_send(http_req_t *h, json_object *msg);
void envd_stream_send_text(http_req_t *h, const char *msg, size_t len); /* JSON text */
void envd_stream_end(http_req_t *h, const envd_code_t *code, const char *msg);
/* A stream that fails before its first message: head and end at once. */
void envd_stream_fail(http_req_t *h, envd_code_t c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
