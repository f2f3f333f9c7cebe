/* cmd_proc.c — sandpipe-exec subcommands for non-PTY processes: spawn, attach, ps, kill. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spx.h"
#include "json_util.h"

typedef struct {
    bool detach;
    bool detached; /* CLOSE sent after "started" */
} proc_state_t;

/* Process ids are strings ("p1", ...), whatever they look like. */
static json_object *
json_id(const char *s)
{
    return json_object_new_string(s);
}

static void
proc_on_json(spx_t *c, json_object *msg)
{
    proc_state_t *st = c->op;
    json_object *id = json_get(msg, "id");
    if (st->detach && !st->detached && id) {
        const char *s = json_object_get_string(id);
        io_write_all(STDOUT_FILENO, s, strlen(s));
        io_write_all(STDOUT_FILENO, "\n", 1);
        exec_client_send_close(c->ec, c->ch, NULL);
        st->detached = true;
    } else if (c->verbose) {
        spx_print_json(STDERR_FILENO, msg, false);
    }
}

/* Exit like the remote process: its exit code, or 128 + the signal that killed it. */
static void
proc_on_close(spx_t *c, json_object *res)
{
    proc_state_t *st = c->op;
    c->done = true;
    if (spx_report_error("process", res)) {
        c->exit_code = CLI_EXIT_FAIL;
        return;
    }
    if (c->verbose)
        spx_print_json(STDERR_FILENO, res, false);
    if (st->detached) {
        c->exit_code = 0;
        return;
    }
    json_object *sig = json_get(res, "signal");
    if (sig && json_object_is_type(sig, json_type_int)) {
        c->exit_code = 128 + json_object_get_int(sig);
    } else if (sig && json_object_is_type(sig, json_type_string)) {
        int n = spx_parse_signal(json_object_get_string(sig));
        c->exit_code = 128 + (n > 0 ? n : 0);
    } else {
        json_object *code = json_get(res, "exit_code");
        if (code && json_object_is_type(code, json_type_int)) {
            c->exit_code = json_object_get_int(code);
        } else {
            spx_warn("the result has no exit_code or signal (detached?)");
            spx_print_json(STDERR_FILENO, res, false);
            c->exit_code = 0;
        }
    }
}

/* Ctrl-C goes to the remote process group, as it would locally; a second one gives up (the
 * process keeps running, re-attachable by id). */
static void
spawn_on_sigint(spx_t *c)
{
    if (++c->sigints > 1)
        spx_die(130, "interrupted; the process keeps running (see: sandpipe-exec ps)");
    json_object *msg = json_object_new_object();
    json_set_str(msg, "signal", "INT");
    exec_client_send_json(c->ec, c->ch, msg);
    json_object_put(msg);
}

int
spx_cmd_spawn(spx_t *c, int argc, char **argv)
{
    static const struct option opts[] = {
        {"cwd", required_argument, NULL, 'C'},
        {"env", required_argument, NULL, 'E'},
        {"detach", no_argument, NULL, 'D'},
        {NULL, 0, NULL, 0},
    };
    static proc_state_t st;
    json_object *req = spx_req("proc.spawn");
    json_object *env = NULL;
    int r;
    while ((r = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        const char *eq;
        switch (r) {
        case 'C': json_set_str(req, "cwd", optarg); break;
        case 'E':
            eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                fprintf(stderr, "sandpipe-exec: --env wants K=V, got \"%s\"\n", optarg);
                json_object_put(req);
                json_object_put(env);
                return CLI_EXIT_USAGE;
            }
            if (!env)
                env = json_object_new_object();
            char *key = strndup(optarg, (size_t)(eq - optarg));
            json_set_str(env, key, eq + 1);
            free(key);
            break;
        case 'D': st.detach = true; break;
        default:
            json_object_put(req);
            json_object_put(env);
            return spx_usage(argv[0]);
        }
    }
    if (optind >= argc) {
        json_object_put(req);
        json_object_put(env);
        return spx_usage(argv[0]);
    }
    json_object *av = json_object_new_array();
    for (int i = optind; i < argc; i++)
        json_object_array_add(av, json_object_new_string(argv[i]));
    json_set(req, "argv", av);
    if (env)
        json_set(req, "env", env);
    c->op = &st;
    c->hooks.on_json = proc_on_json;
    c->hooks.on_close = proc_on_close;
    c->hooks.on_sigint = spawn_on_sigint;
    if (!st.detach) {
        c->input_fd = STDIN_FILENO;
        c->input_started = true;
        c->input_send_eof = true;
    }
    return spx_run(c, req);
}

int
spx_cmd_attach(spx_t *c, int argc, char **argv)
{
    static const struct option opts[] = {
        {"stdout-offset", required_argument, NULL, 'o'},
        {"stderr-offset", required_argument, NULL, 'e'},
        {NULL, 0, NULL, 0},
    };
    static proc_state_t st;
    long long out_off = -1, err_off = -1;
    int r;
    while ((r = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        char *end;
        long long v = optarg ? strtoll(optarg, &end, 10) : -1;
        if (r == '?' || !optarg || *end || v < 0)
            return spx_usage(argv[0]);
        if (r == 'o')
            out_off = v;
        else
            err_off = v;
    }
    if (optind != argc - 1)
        return spx_usage(argv[0]);
    json_object *req = spx_req("proc.attach");
    json_set(req, "id", json_id(argv[optind]));
    if (out_off >= 0)
        json_set_int(req, "stdout_offset", out_off);
    if (err_off >= 0)
        json_set_int(req, "stderr_offset", err_off);
    c->op = &st;
    c->hooks.on_json = proc_on_json;
    c->hooks.on_close = proc_on_close;
    return spx_run(c, req);
}

int
spx_cmd_ps(spx_t *c, int argc, char **argv)
{
    if (argc != 1)
        return spx_usage(argv[0]);
    return spx_run(c, spx_req("proc.list"));
}

int
spx_cmd_kill(spx_t *c, int argc, char **argv)
{
    if (argc < 2 || argc > 3)
        return spx_usage(argv[0]);
    int sig = argc == 3 ? spx_parse_signal(argv[2]) : SIGTERM;
    if (sig < 0) {
        fprintf(stderr, "sandpipe-exec: unknown signal \"%s\"\n", argv[2]);
        return CLI_EXIT_USAGE;
    }
    json_object *req = spx_req("proc.signal");
    json_set(req, "id", json_id(argv[1]));
    json_set_int(req, "signal", sig);
    return spx_run(c, req);
}
