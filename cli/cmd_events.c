/* cmd_events.c — `sandpipe events SESSION [--since N] [--follow]`: the session's event stream
 * as JSON lines, exactly as the server sent each event. Without --follow it stops once no event
 * has arrived for EVENTS_QUIET_MS; with it, it runs until the connection ends or Ctrl-C. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json_util.h"

#define EVENTS_QUIET_MS 500

typedef struct {
    ws_t *ws;
    int signo;
    uv_signal_t sig_int, sig_term;
} events_t;

static void
events_usage(FILE *f)
{
    fprintf(f, "usage: sandpipe events SESSION [--since N] [--follow]\n"
               "  --since N   events with seq > N (default 0: the whole history)\n"
               "  --follow    keep printing live events until the session ends or Ctrl-C\n");
}

static void
on_signal(uv_signal_t *h, int signo)
{
    events_t *e = h->data;
    e->signo = signo;
    ws_interrupt(e->ws);
}

static int
events_print(events_t *e, bool follow)
{
    for (;;) {
        ws_msg_t m;
        err_t err = {0};
        int got = ws_recv(e->ws, &m, follow ? -1 : EVENTS_QUIET_MS, &err);
        if (got == 0)
            return 0;
        if (got < 0) {
            if (e->signo)
                return e->signo == SIGINT ? 0 : 128 + e->signo;
            /* The server ends the stream when the session stops: a normal end when following. */
            return follow && err.code == ECONNRESET ? 0 : cli_fail("events: %s", err.msg);
        }
        json_object *msg = m.binary ? NULL : json_parse_lossy(m.data, m.len, &err);
        if (!msg || !json_object_is_type(msg, json_type_object)) {
            json_object_put(msg);
            free(m.data);
            return cli_fail("events: the server sent something that is not a JSON object");
        }
        bool failed = cli_is_error(msg, &err);
        json_object_put(msg);
        if (failed) {
            free(m.data);
            return cli_fail("events: %s", err.msg);
        }
        m.data[m.len] = '\n';
        int rc = io_write_all(STDOUT_FILENO, m.data, m.len + 1);
        free(m.data);
        if (rc < 0)
            return rc == -EPIPE ? 0 : cli_fail("events: cannot write to stdout: %s", strerror(-rc));
    }
}

int
cmd_events(cli_t *cli, int argc, char **argv)
{
    static const struct option opts[] = {{"since", required_argument, 0, 's'},
                                         {"follow", no_argument, 0, 'f'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    long long since = 0;
    bool follow = false;
    int c;
    while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (cli_parse_int(optarg, 0, INT64_MAX, &since) < 0)
                return cli_usage("events", "--since takes a sequence number (got \"%s\")", optarg);
            break;
        case 'f': follow = true; break;
        case 'h': events_usage(stdout); return 0;
        default: events_usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (argc - optind != 1)
        return cli_usage("events", "takes one session id");
    char path[256], suffix[40];
    snprintf(suffix, sizeof suffix, "?since=%lld", since);
    if (cli_session_path(path, sizeof path, argv[optind], suffix) < 0)
        return cli_usage("events", "\"%s\" is not a session id", argv[optind]);
    err_t err = {0};
    events_t e = {0};
    e.ws = cli_connect(cli, path, &err);
    if (!e.ws)
        return cli_fail("events: %s", err.msg);
    uv_signal_t *sigs[] = {&e.sig_int, &e.sig_term};
    uv_signal_init(cli->loop, &e.sig_int);
    uv_signal_init(cli->loop, &e.sig_term);
    e.sig_int.data = e.sig_term.data = &e;
    uv_signal_start(&e.sig_int, on_signal, SIGINT);
    uv_signal_start(&e.sig_term, on_signal, SIGTERM);
    int rc = events_print(&e, follow);
    cli_close_handles(cli, (uv_handle_t **)sigs, 2);
    ws_close(e.ws);
    return rc;
}
