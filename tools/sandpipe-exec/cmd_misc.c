/* cmd_misc.c — sandpipe-exec subcommands: term (interactive PTY), health, ping, raw. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "spx.h"
#include "json_util.h"

/* ---- term ---- */

static void
term_size(int *cols, int *rows)
{
    struct winsize ws;
    *cols = 80;
    *rows = 24;
    if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
        *cols = ws.ws_col;
        *rows = ws.ws_row;
    }
}

static void
term_on_winch(spx_t *c)
{
    int cols, rows;
    term_size(&cols, &rows);
    json_object *size = json_object_new_object();
    json_set_int(size, "cols", cols);
    json_set_int(size, "rows", rows);
    json_object *msg = json_object_new_object();
    json_set(msg, "resize", size);
    exec_client_send_json(c->ec, c->ch, msg);
    json_object_put(msg);
}

static void
term_on_json(spx_t *c, json_object *msg)
{
    (void)c;
    (void)msg; /* terminal events (e.g. title) are not shown in the raw stream */
}

static void
term_on_close(spx_t *c, json_object *res)
{
    spx_tty_restore();
    c->done = true;
    if (spx_report_error("terminal", res)) {
        c->exit_code = CLI_EXIT_FAIL;
        return;
    }
    json_object *code = json_get(res, "exit_code");
    c->exit_code = code && json_object_is_type(code, json_type_int) ? json_object_get_int(code) : 0;
}

int
spx_cmd_term(spx_t *c, int argc, char **argv)
{
    static const struct option opts[] = {
        {"cmd", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = NULL;
    int r;
    while ((r = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        if (r != 'c')
            return spx_usage(argv[0]);
        cmd = optarg;
    }
    if (optind != argc)
        return spx_usage(argv[0]);
    int cols, rows;
    term_size(&cols, &rows);
    json_object *req = spx_req("terminal");
    json_set_int(req, "cols", cols);
    json_set_int(req, "rows", rows);
    if (cmd) { /* the server runs argv; default: the login shell */
        json_object *av = json_object_new_array();
        json_object_array_add(av, json_object_new_string("/bin/sh"));
        json_object_array_add(av, json_object_new_string("-c"));
        json_object_array_add(av, json_object_new_string(cmd));
        json_set(req, "argv", av);
    }
    c->hooks.on_winch = term_on_winch;
    c->hooks.on_json = term_on_json;
    c->hooks.on_close = term_on_close;
    c->input_fd = STDIN_FILENO;
    c->input_started = true;
    c->input_send_eof = false; /* the shell ends with "exit", not with our stdin */
    if (isatty(STDIN_FILENO) && spx_tty_raw(STDIN_FILENO) < 0)
        spx_warn("cannot put the terminal in raw mode");
    return spx_run(c, req);
}

/* ---- health ---- */

int
spx_cmd_health(spx_t *c, int argc, char **argv)
{
    if (argc != 1)
        return spx_usage(argv[0]);
    return spx_run(c, spx_req("health"));
}

/* ---- ping: back-to-back PING/PONG round trips ---- */

typedef struct {
    long count, sent, received;
    double min_ms, max_ms, sum_ms;
} ping_t;

static void
ping_send(spx_t *c)
{
    ping_t *p = c->op;
    uint8_t payload[12];
    uint64_t t = clock_mono_ns();
    frame_put_u32(payload, (uint32_t)(t >> 32));
    frame_put_u32(payload + 4, (uint32_t)t);
    frame_put_u32(payload + 8, (uint32_t)p->sent);
    exec_client_ping(c->ec, payload, sizeof(payload));
    p->sent++;
}

static void
ping_on_pong(spx_t *c, const uint8_t *data, size_t n)
{
    ping_t *p = c->op;
    if (n != 12) {
        spx_warn("PONG with %zu bytes, expected the 12 sent", n);
        return;
    }
    uint64_t t = (uint64_t)frame_get_u32(data) << 32 | frame_get_u32(data + 4);
    double ms = (double)(clock_mono_ns() - t) / 1e6;
    printf("pong seq=%u time=%.3f ms\n", frame_get_u32(data + 8), ms);
    fflush(stdout);
    if (p->received == 0 || ms < p->min_ms)
        p->min_ms = ms;
    if (ms > p->max_ms)
        p->max_ms = ms;
    p->sum_ms += ms;
    if (++p->received < p->count) {
        ping_send(c);
        return;
    }
    if (p->count > 1)
        printf("%ld round trips: min %.3f avg %.3f max %.3f ms\n", p->received, p->min_ms,
               p->sum_ms / (double)p->received, p->max_ms);
    c->done = true;
    c->exit_code = 0;
}

int
spx_cmd_ping(spx_t *c, int argc, char **argv)
{
    static ping_t p;
    if (argc > 2)
        return spx_usage(argv[0]);
    p.count = 1;
    if (argc == 2) {
        char *end;
        p.count = strtol(argv[1], &end, 10);
        if (*end || p.count < 1)
            return spx_usage(argv[0]);
    }
    c->op = &p;
    c->hooks.on_pong = ping_on_pong;
    c->hooks.on_connect = ping_send;
    return spx_run_bare(c);
}

/* ---- raw: every frame of the channel, for debugging ---- */

static void
raw_on_data(spx_t *c, bool is_stderr, const uint8_t *p, size_t n)
{
    (void)c;
    printf("DATA%s %zu bytes: ", is_stderr ? " (stderr)" : "", n);
    json_object *s = json_object_new_string_len((const char *)p, (int)n);
    printf("%s\n", json_object_to_json_string_ext(s, JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(s);
    fflush(stdout);
}

static void
raw_on_json(spx_t *c, json_object *msg)
{
    (void)c;
    printf("JSON %s\n", json_object_to_json_string_ext(msg, JSON_C_TO_STRING_NOSLASHESCAPE));
    fflush(stdout);
}

static void
raw_on_eof(spx_t *c)
{
    (void)c;
    printf("EOF\n");
    fflush(stdout);
}

static void
raw_on_writable(spx_t *c, size_t avail)
{
    (void)c;
    printf("CREDIT (%zu bytes may be sent)\n", avail);
    fflush(stdout);
}

static void
raw_on_close(spx_t *c, json_object *res)
{
    printf("CLOSE %s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_NOSLASHESCAPE));
    fflush(stdout);
    c->done = true;
    c->exit_code = json_get(res, "error") ? CLI_EXIT_FAIL : 0;
}

int
spx_cmd_raw(spx_t *c, int argc, char **argv)
{
    if (argc != 2)
        return spx_usage(argv[0]);
    err_t e;
    json_object *req = json_parse(argv[1], strlen(argv[1]), &e);
    if (!req) {
        fprintf(stderr, "sandpipe-exec: invalid JSON: %s\n", e.msg);
        return CLI_EXIT_USAGE;
    }
    c->hooks.on_data = raw_on_data;
    c->hooks.on_json = raw_on_json;
    c->hooks.on_eof = raw_on_eof;
    c->hooks.on_writable = raw_on_writable;
    c->hooks.on_close = raw_on_close;
    return spx_run(c, req);
}
