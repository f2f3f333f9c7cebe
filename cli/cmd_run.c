/* cmd_run.c — `sandpipe run SESSION -- CMD...`: one blocking `run` action on the session's
 * event stream. Output events of that action go to stdout as they arrive (data, or data_b64
 * decoded: byte-exact); the exit code is the observation's extras.metadata.exit_code.
 * Ctrl-C sends INT to the remote foreground process (a second one gives up, exit 130). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "json_util.h"

#define RUN_DEFAULT_TIMEOUT 3600 /* seconds the remote command may run */
#define RUN_ACTION_ID       "sandpipe-run"
#define RUN_EARLY_MAX       4096 /* events buffered before the ack says which are ours */
#define RUN_EXIT_TIMEOUT    124  /* as timeout(1) */

typedef struct {
    cli_t *cli;
    ws_t *ws;
    int64_t seq; /* the action's seq, -1 until acked */
    long long timeout;
    int sigints;
    int fatal_sig; /* SIGTERM/SIGHUP: give up */
    uv_signal_t sig_int, sig_term, sig_hup;
} run_t;

static void
run_usage(FILE *f)
{
    fprintf(
        f,
        "usage: sandpipe run [--timeout SEC] SESSION -- CMD...\n"
        "       sandpipe run [--timeout SEC] --new -- CMD...   (a fresh session, removed after)\n"
        "CMD's words are joined with spaces and run by the session's bash (as ssh does).\n"
        "Exit status: CMD's, 124 when it ran past --timeout (default %d s), 1 on errors.\n",
        RUN_DEFAULT_TIMEOUT);
}

static void
on_signal(uv_signal_t *h, int signo)
{
    run_t *r = h->data;
    if (signo == SIGINT && ++r->sigints == 1 && r->seq >= 0) {
        static const char msg[] =
            "{\"type\":\"signal\",\"id\":\"sandpipe-int\",\"signal\":\"INT\"}";
        ws_send(r->ws, false, msg, sizeof msg - 1);
        return;
    }
    r->fatal_sig = signo;
    ws_interrupt(r->ws);
}

static int
send_action(ws_t *ws, const char *id, const char *command, bool is_input, long long timeout)
{
    json_object *m = json_object_new_object(), *a = json_object_new_object(),
                *args = json_object_new_object();
    json_set_str(m, "type", "action");
    json_set_str(m, "id", id);
    json_set_str(a, "action", "run");
    json_set_str(args, "command", command);
    json_set_bool(args, "is_input", is_input);
    json_set_bool(args, "blocking", true);
    json_set(a, "args", args);
    json_set_int(a, "timeout", timeout);
    json_set(m, "action", a);
    size_t len;
    const char *text = json_text(m, &len);
    int rc = ws_send(ws, false, text, len);
    json_object_put(m);
    return rc;
}

/* Exit status from the observation. */
static int
observation_status(json_object *obs, long long timeout)
{
    if (strcmp(json_get_str(obs, "observation", ""), "run") != 0) {
        cli_fail("run: %s", json_get_str(obs, "content", "the command was refused"));
        return CLI_EXIT_FAIL;
    }
    json_object *meta = json_get(json_get(obs, "extras"), "metadata");
    json_object *ec = json_get(meta, "exit_code");
    if (!ec || !json_object_is_type(ec, json_type_int)) {
        cli_fail("run: the observation has no exit code");
        return CLI_EXIT_FAIL;
    }
    int64_t code = json_object_get_int64(ec);
    if (code == -1) {
        cli_fail("run: the command ran past --timeout (%lld s): interrupting it", timeout);
        return RUN_EXIT_TIMEOUT;
    }
    return code >= 0 && code <= 255 ? (int)code : CLI_EXIT_FAIL;
}

/* One event of the stream: returns -1 to go on, else the exit status. */
static int
on_event(run_t *r, json_object *ev)
{
    const char *type = json_get_str(ev, "type", "");
    if (json_get_int(ev, "action", -2) != r->seq) {
        if (!strcmp(type, "status")) {
            const char *st = json_get_str(ev, "status", "");
            if (!strcmp(st, "STOPPED") || !strncmp(st, "ERROR", 5))
                return cli_fail("run: the session ended (%s)", st);
        }
        return -1;
    }
    if (!strcmp(type, "output")) {
        int rc = cli_write_output(STDOUT_FILENO, ev);
        if (rc == -EINVAL)
            return cli_fail("run: the server sent output that is not base64");
        if (rc < 0)
            return cli_fail("run: cannot write to stdout: %s", strerror(-rc));
        return -1;
    }
    if (!strcmp(type, "observation"))
        return observation_status(json_get(ev, "observation"), r->timeout);
    if (!strcmp(type, "truncated"))
        fprintf(stderr, "sandpipe: run: the server dropped events %lld..%lld (stream cap)\n",
                (long long)json_get_int(ev, "from", 0), (long long)json_get_int(ev, "to", 0));
    return -1;
}

/* Waits for the action's observation; returns the exit status. */
static int
run_wait(run_t *r)
{
    json_object *early = json_object_new_array(); /* events before the ack */
    int status = -1;
    while (status < 0) {
        ws_msg_t m;
        err_t err = {0};
        int got = ws_recv(r->ws, &m, -1, &err);
        if (got < 0) {
            if (r->fatal_sig)
                status = 128 + r->fatal_sig;
            else
                status = cli_fail("run: %s", err.msg);
            break;
        }
        json_object *msg = m.binary ? NULL : json_parse_lossy(m.data, m.len, &err);
        free(m.data);
        if (!msg || !json_object_is_type(msg, json_type_object)) {
            json_object_put(msg);
            status = cli_fail("run: the server sent something that is not a JSON object");
            break;
        }
        const char *type = json_get_str(msg, "type", "");
        const char *id = json_get_str(msg, "id", "");
        if (cli_is_error(msg, &err)) {
            if (!strcmp(id, "sandpipe-int"))
                fprintf(stderr, "sandpipe: run: cannot interrupt: %s\n", err.msg);
            else
                status = cli_fail("run: %s", err.msg);
        } else if (!strcmp(type, "ack")) {
            if (!strcmp(id, RUN_ACTION_ID) && r->seq < 0) {
                r->seq = json_get_int(msg, "seq", -1);
                for (size_t i = 0; status < 0 && i < json_object_array_length(early); i++)
                    status = on_event(r, json_object_array_get_idx(early, i));
                json_object_put(early);
                early = json_object_new_array();
            }
        } else if (r->seq < 0) {
            if (json_object_array_length(early) >= RUN_EARLY_MAX)
                status = cli_fail("run: no acknowledgement after %d events", RUN_EARLY_MAX);
            json_object_array_add(early, json_object_get(msg));
        } else {
            status = on_event(r, msg);
        }
        json_object_put(msg);
    }
    json_object_put(early);
    return status;
}

/* After a timeout the command still runs: interrupt it so the session stays usable. */
static void
run_interrupt_leftover(run_t *r)
{
    if (send_action(r->ws, "sandpipe-cc", "C-c", true, 10) < 0)
        return;
    for (int i = 0; i < 64; i++) {
        ws_msg_t m;
        err_t err = {0};
        if (ws_recv(r->ws, &m, 5000, &err) <= 0)
            return;
        json_object *msg = m.binary ? NULL : json_parse_lossy(m.data, m.len, &err);
        free(m.data);
        bool done = msg && (cli_is_error(msg, &err) ||
                            !strcmp(json_get_str(msg, "type", ""), "observation"));
        json_object_put(msg);
        if (done)
            return;
    }
}

int
cmd_run(cli_t *cli, int argc, char **argv)
{
    static const struct option opts[] = {{"timeout", required_argument, 0, 't'},
                                         {"new", no_argument, 0, 'n'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    /* Everything after the first "--" is the command, whatever it looks like. */
    int dash = argc;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            dash = i;
            break;
        }
    long long timeout = RUN_DEFAULT_TIMEOUT;
    bool fresh = false;
    int c;
    while ((c = getopt_long(dash, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (cli_parse_int(optarg, 1, 1LL << 31, &timeout) < 0)
                return cli_usage("run", "--timeout takes seconds (got \"%s\")", optarg);
            break;
        case 'n': fresh = true; break;
        case 'h': run_usage(stdout); return 0;
        default: run_usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    int pos = optind; /* positionals before "--" */
    const char *session = NULL;
    if (!fresh) {
        if (pos >= dash)
            return cli_usage("run", "which session? (sandpipe run SESSION -- CMD, or --new)");
        session = argv[pos++];
    }
    int first = dash < argc ? dash + 1 : pos;
    if (dash < argc && pos < dash)
        return cli_usage("run", "unexpected \"%s\" before --", argv[pos]);
    if (first >= argc)
        return cli_usage("run", "no command (sandpipe run SESSION -- CMD...)");
    buf_t cmd = BUF_INIT;
    for (int i = first; i < argc; i++)
        buf_printf(&cmd, "%s%s", i > first ? " " : "", argv[i]);

    char sid[160], path[256];
    err_t err = {0};
    int status;
    if (fresh) {
        if (sessions_create(cli, NULL, sid, sizeof sid, &err) < 0) {
            buf_free(&cmd);
            return cli_fail("run: cannot create a session: %s", err.msg);
        }
        session = sid;
    }
    if (cli_session_path(path, sizeof path, session, "") < 0) {
        buf_free(&cmd);
        return cli_usage("run", "\"%s\" is not a session id", session);
    }
    run_t r = {.cli = cli, .seq = -1, .timeout = timeout};
    r.ws = cli_connect(cli, path, &err);
    if (!r.ws) {
        status = cli_fail("run: %s", err.msg);
        goto out;
    }
    uv_signal_t *sigs[] = {&r.sig_int, &r.sig_term, &r.sig_hup};
    int signos[] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        uv_signal_init(cli->loop, sigs[i]);
        sigs[i]->data = &r;
        uv_signal_start(sigs[i], on_signal, signos[i]);
    }
    if (send_action(r.ws, RUN_ACTION_ID, cmd.data, false, timeout) < 0)
        status = cli_fail("run: the connection closed before the action was sent");
    else
        status = run_wait(&r);
    if (status == RUN_EXIT_TIMEOUT)
        run_interrupt_leftover(&r);
    cli_close_handles(cli, (uv_handle_t **)sigs, 3);
    ws_close(r.ws);
out:
    if (fresh && sessions_delete(cli, sid, &err) < 0)
        fprintf(stderr, "sandpipe: run: cannot remove session %s: %s\n", sid, err.msg);
    buf_free(&cmd);
    return status;
}
