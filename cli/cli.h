/* cli.h — what the `sandpipe` commands share: the global options, connecting to the gateway,
 * the control-request helper, error reporting and argument parsing.
 *
 * Exit codes of every command: 0 success, 1 runtime failure (connection, server error),
 * 2 usage error; `run` and `attach` exit with the remote command's or shell's code. */
#ifndef SP_CLI_H
#define SP_CLI_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "io.h" /* io_write_all */
#include "err.h"
#include "ws.h"

#define CLI_EXIT_FAIL  1
#define CLI_EXIT_USAGE 2
#define CLI_CONNECT_MS 15000 /* connect + upgrade */

typedef struct {
    const char *url;   /* --url / SANDPIPE_URL */
    const char *token; /* --token / SANDPIPE_TOKEN */
    bool insecure;     /* --insecure: accept a self-signed wss:// certificate */
    uv_loop_t *loop;   /* owned by main */
    ws_ctx_t *ws_ctx;  /* created by the first cli_connect; main frees it */
} cli_t;

/* A command: argv[0] is its name; returns the process's exit code. */
typedef int (*cli_cmd_fn)(cli_t *cli, int argc, char **argv);

int cmd_token(cli_t *cli, int argc, char **argv);
int cmd_sessions(cli_t *cli, int argc, char **argv);
int cmd_run(cli_t *cli, int argc, char **argv);
int cmd_attach(cli_t *cli, int argc, char **argv);
int cmd_events(cli_t *cli, int argc, char **argv);
int cmd_cp(cli_t *cli, int argc, char **argv);
int cmd_image(cli_t *cli, int argc, char **argv);
int cmd_redis_acl(cli_t *cli, int argc, char **argv);

/* The client context, made on first use for the global url (TLS set up only for wss/https). */
ws_ctx_t *cli_ws_ctx(cli_t *cli, err_t *err);
/* Opens a WebSocket to path ("/ws/control", "/ws/sessions/ID?since=0") with the global url and
 * token. NULL with err set. */
ws_t *cli_connect(cli_t *cli, const char *path, err_t *err);

/* One /ws/control request: sends {"id":1,"method":method,"params":params} (params taken over;
 * NULL for {}) and waits up to timeout_ms for the answer. Returns 0 with *result (caller puts)
 * or < 0 with err holding the server's "code: message" or the connection's failure. */
int cli_control_call(cli_t *cli, const char *method, json_object *params, int timeout_ms,
                     json_object **result, err_t *err);

/* cmd_sessions.c, for `run --new`: creates a session with params (taken over; NULL for the
 * defaults) and copies its id into id[0..cap); deletes one. 0, or < 0 with err set. */
int sessions_create(cli_t *cli, json_object *params, char *id, size_t cap, err_t *err);
int sessions_delete(cli_t *cli, const char *id, err_t *err);

/* When msg is {"type":"error",...}: fills err with "code: message" and returns true. */
bool cli_is_error(json_object *msg, err_t *err);

/* "sandpipe: <message>" on stderr; returns CLI_EXIT_FAIL. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "sandpipe <cmd>: <message>" and a hint on stderr; returns CLI_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses a decimal integer in [min, max] (the whole string). Returns 0 or -EINVAL. */
int cli_parse_int(const char *s, long long min, long long max, long long *out);

/* Closes the handles (libuv) and runs the loop until their close callbacks have run, so they
 * may live on the caller's stack. Overwrites each handle's data. */
void cli_close_handles(cli_t *cli, uv_handle_t **handles, size_t n);

/* Writes an output event's bytes (data, or data_b64 decoded) to fd. 0, or < 0 (-EINVAL for a
 * data_b64 that is not base64, -errno from write). */
int cli_write_output(int fd, json_object *event);

/* Copies a session id into a URL path after checking it is one (letters, digits, '-', '_'). */
int cli_session_path(char *out, size_t cap, const char *session, const char *suffix);

#endif
