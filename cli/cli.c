/* cli.c — plumbing every `sandpipe` command uses: connecting with the global options, one
 * control request, server errors, exit-code helpers, strict number parsing. */
#include "io.h"
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base64.h"
#include "json_util.h"
#include "xalloc.h"

ws_ctx_t *
cli_ws_ctx(cli_t *cli, err_t *err)
{
    if (!cli->ws_ctx)
        cli->ws_ctx = ws_ctx_new(cli->loop, ws_url_tls(cli->url), err);
    return cli->ws_ctx;
}

ws_t *
cli_connect(cli_t *cli, const char *path, err_t *err)
{
    if (!cli_ws_ctx(cli, err))
        return NULL;
    ws_target_t t = {.url = cli->url, .token = cli->token, .insecure = cli->insecure};
    return ws_open(cli->ws_ctx, &t, path, CLI_CONNECT_MS, err);
}

bool
cli_is_error(json_object *msg, err_t *err)
{
    if (strcmp(json_get_str(msg, "type", ""), "error") != 0)
        return false;
    json_object *e = json_get(msg, "error");
    err_set(err, ERR_BAD_REQ, "%s: %s", json_get_str(e, "code", "error"),
            json_get_str(e, "message", "the server refused the request"));
    return true;
}

int
cli_control_call(cli_t *cli, const char *method, json_object *params, int timeout_ms,
                 json_object **result, err_t *err)
{
    *result = NULL;
    ws_t *ws = cli_connect(cli, "/ws/control", err);
    if (!ws) {
        json_object_put(params);
        return -err->code;
    }
    json_object *req = json_object_new_object();
    json_set_int(req, "id", 1);
    json_set_str(req, "method", method);
    json_set(req, "params", params ? params : json_object_new_object());
    size_t len;
    const char *text = json_text(req, &len);
    ws_send(ws, false, text, len);
    json_object_put(req);
    int rc = -ETIMEDOUT;
    err_set(err, ETIMEDOUT, "no answer to %s within %d s", method, timeout_ms / 1000);
    for (;;) {
        ws_msg_t m;
        int r = ws_recv(ws, &m, timeout_ms, err);
        if (r <= 0) {
            rc = r < 0 ? r : rc;
            break;
        }
        err_t perr = {0};
        json_object *msg = m.binary ? NULL : json_parse_lossy(m.data, m.len, &perr);
        free(m.data);
        if (!msg || !json_object_is_type(msg, json_type_object)) {
            json_object_put(msg);
            rc = err_set(err, ERR_PROTO, "the server sent something that is not a JSON object");
            break;
        }
        if (cli_is_error(msg, err)) {
            json_object_put(msg);
            rc = -ERR_BAD_REQ;
            break;
        }
        json_object *res = json_get(msg, "result");
        if (!strcmp(json_get_str(msg, "type", ""), "result") && json_get_int(msg, "id", 0) == 1 &&
            res && json_object_is_type(res, json_type_object)) {
            *result = json_object_get(res);
            json_object_put(msg);
            rc = 0;
            break;
        }
        json_object_put(msg); /* something else (a notice): keep waiting */
    }
    ws_close(ws);
    return rc;
}

int
cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sandpipe: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CLI_EXIT_FAIL;
}

int
cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sandpipe %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(sandpipe %s --help shows the usage)\n", cmd);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int
cli_parse_int(const char *s, long long min, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < min || v > max)
        return -EINVAL;
    *out = v;
    return 0;
}

int
cli_session_path(char *out, size_t cap, const char *session, const char *suffix)
{
    size_t n = strlen(session);
    if (!n || n > 128)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        char c = session[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return -EINVAL;
    }
    if (snprintf(out, cap, "/ws/sessions/%s%s", session, suffix) >= (int)cap)
        return -EINVAL;
    return 0;
}

static void
on_handle_closed(uv_handle_t *h)
{
    (*(int *)h->data)--;
}

void
cli_close_handles(cli_t *cli, uv_handle_t **handles, size_t n)
{
    int left = 0;
    for (size_t i = 0; i < n; i++) {
        if (!handles[i] || uv_is_closing(handles[i]))
            continue;
        handles[i]->data = &left;
        left++;
        uv_close(handles[i], on_handle_closed);
    }
    while (left > 0)
        uv_run(cli->loop, UV_RUN_ONCE);
}

int
cli_write_output(int fd, json_object *event)
{
    json_object *d = json_get(event, "data");
    if (d && json_object_is_type(d, json_type_string))
        return io_write_all(fd, json_object_get_string(d), (size_t)json_object_get_string_len(d));
    json_object *b = json_get(event, "data_b64");
    if (!b || !json_object_is_type(b, json_type_string))
        return 0;
    size_t n = (size_t)json_object_get_string_len(b), out_len = 0;
    char *out = xmalloc(BASE64_DECODED_MAX(n) + 1);
    int rc = base64_decode(json_object_get_string(b), n, out, &out_len);
    if (rc == 0)
        rc = io_write_all(fd, out, out_len);
    free(out);
    return rc;
}
