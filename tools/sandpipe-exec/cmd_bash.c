/* cmd_bash.c — sandpipe-exec subcommands for bash sessions and OpenHands actions:
 * run, action, input, key, signal, sessions, env. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spx.h"
#include "json_util.h"

typedef struct {
    const char *session;
    double timeout; /* < 0: not given */
    bool json_out;
} bash_opts_t;

/* Parses [--session S] [--timeout SEC] [--json]; returns the index of the first operand or -1. */
static int
parse_bash_opts(int argc, char **argv, bash_opts_t *o, bool allow_timeout)
{
    static const struct option opts[] = {
        {"session", required_argument, NULL, 'S'},
        {"timeout", required_argument, NULL, 'T'},
        {"json", no_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
    };
    *o = (bash_opts_t){.timeout = -1};
    int r;
    while ((r = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        char *end;
        switch (r) {
        case 'S': o->session = optarg; break;
        case 'T':
            o->timeout = strtod(optarg, &end);
            if (!allow_timeout || *end || end == optarg || o->timeout <= 0)
                return -1;
            break;
        case 'j': o->json_out = true; break;
        default: return -1;
        }
    }
    return optind;
}

static json_object *
action_req(const bash_opts_t *o, json_object *action)
{
    json_object *req = spx_req("action");
    if (o->session)
        json_set_str(req, "session", o->session);
    json_set(req, "action", action);
    return req;
}

static json_object *
run_action(const char *command, bool is_input, double timeout)
{
    json_object *args = json_object_new_object();
    json_set_str(args, "command", command);
    json_set_bool(args, "is_input", is_input);
    json_set_bool(args, "blocking", false);
    json_object *action = json_object_new_object();
    json_set_str(action, "action", "run");
    json_set(action, "args", args);
    if (timeout > 0)
        json_set(action, "timeout", json_object_new_double(timeout));
    return action;
}

/* The exit status an observation stands for: the command's exit code (124 when it did not
 * finish: -1), 1 for an error observation, else 0. */
static int
observation_status(json_object *obs)
{
    json_object *meta = json_get(json_get(obs, "extras"), "metadata");
    json_object *code = json_get(meta, "exit_code");
    if (code && json_object_is_type(code, json_type_int)) {
        int64_t v = json_object_get_int64(code);
        if (v == -1)
            return 124;
        return v >= 0 && v <= 255 ? (int)v : CLI_EXIT_FAIL;
    }
    const char *kind = json_get_str(obs, "observation", "");
    return !strcmp(kind, "error") ? CLI_EXIT_FAIL : 0;
}

/* run/input/key: output streamed to stdout, the observation to stderr (stdout with --json). */
static void
run_on_close(spx_t *c, json_object *obs)
{
    c->done = true;
    if (spx_report_error("action failed", obs)) {
        c->exit_code = CLI_EXIT_FAIL;
        return;
    }
    spx_print_json(c->json_out ? STDOUT_FILENO : STDERR_FILENO, obs, true);
    c->exit_code = observation_status(obs);
}

/* action: the observation is the result, on stdout. */
static void
action_on_close(spx_t *c, json_object *obs)
{
    c->done = true;
    if (spx_report_error("action failed", obs)) {
        c->exit_code = CLI_EXIT_FAIL;
        return;
    }
    spx_print_json(STDOUT_FILENO, obs, true);
    c->exit_code = observation_status(obs);
}

static void
run_on_json(spx_t *c, json_object *msg)
{
    if (c->verbose)
        spx_print_json(STDERR_FILENO, msg, false);
}

/* First Ctrl-C interrupts the remote command (SIGINT to the session's foreground group);
 * the second gives up. */
static void
run_on_sigint(spx_t *c)
{
    if (++c->sigints > 1)
        spx_die(130, "interrupted");
    spx_warn("sending SIGINT to the session (Ctrl-C again to quit)");
    json_object *req = spx_req("bash.signal");
    if (c->session)
        json_set_str(req, "session", c->session);
    json_set_int(req, "signal", SIGINT);
    spx_open_aside(c, req);
}

static int
run_common(spx_t *c, const bash_opts_t *o, json_object *action, bool result_is_obs)
{
    c->session = o->session;
    c->json_out = o->json_out;
    c->hooks.on_json = run_on_json;
    c->hooks.on_close = result_is_obs ? action_on_close : run_on_close;
    c->hooks.on_sigint = run_on_sigint;
    return spx_run(c, action_req(o, action));
}

int
spx_cmd_run(spx_t *c, int argc, char **argv)
{
    bash_opts_t o;
    int i = parse_bash_opts(argc, argv, &o, true);
    if (i < 0 || i >= argc)
        return spx_usage(argv[0]);
    size_t len = 0;
    for (int k = i; k < argc; k++)
        len += strlen(argv[k]) + 1;
    char *cmd = calloc(1, len + 1);
    if (!cmd)
        abort();
    for (int k = i; k < argc; k++) {
        if (k > i)
            strcat(cmd, " ");
        strcat(cmd, argv[k]);
    }
    json_object *action = run_action(cmd, false, o.timeout);
    free(cmd);
    return run_common(c, &o, action, false);
}

int
spx_cmd_action(spx_t *c, int argc, char **argv)
{
    bash_opts_t o;
    int i = parse_bash_opts(argc, argv, &o, false);
    if (i < 0 || i != argc - 1)
        return spx_usage(argv[0]);
    err_t e;
    json_object *action = json_parse(argv[i], strlen(argv[i]), &e);
    if (!action || !json_object_is_type(action, json_type_object)) {
        json_object_put(action);
        fprintf(stderr, "sandpipe-exec: the action must be a JSON object%s%s\n", action ? "" : ": ",
                action ? "" : e.msg);
        return CLI_EXIT_USAGE;
    }
    return run_common(c, &o, action, true);
}

static int
input_common(spx_t *c, int argc, char **argv)
{
    bash_opts_t o;
    int i = parse_bash_opts(argc, argv, &o, true);
    if (i < 0 || i != argc - 1)
        return spx_usage(argv[0]);
    return run_common(c, &o, run_action(argv[i], true, o.timeout), false);
}

int
spx_cmd_input(spx_t *c, int argc, char **argv)
{
    return input_common(c, argc, argv);
}

int
spx_cmd_key(spx_t *c, int argc, char **argv)
{
    return input_common(c, argc, argv);
}

int
spx_cmd_signal(spx_t *c, int argc, char **argv)
{
    bash_opts_t o;
    int i = parse_bash_opts(argc, argv, &o, false);
    if (i < 0 || i != argc - 1)
        return spx_usage(argv[0]);
    int sig = spx_parse_signal(argv[i]);
    if (sig < 0) {
        fprintf(stderr, "sandpipe-exec: unknown signal \"%s\"\n", argv[i]);
        return CLI_EXIT_USAGE;
    }
    json_object *req = spx_req("bash.signal");
    if (o.session)
        json_set_str(req, "session", o.session);
    json_set_int(req, "signal", sig);
    return spx_run(c, req);
}

int
spx_cmd_sessions(spx_t *c, int argc, char **argv)
{
    if (argc != 1)
        return spx_usage(argv[0]);
    return spx_run(c, spx_req("bash.list"));
}

int
spx_cmd_env(spx_t *c, int argc, char **argv)
{
    bash_opts_t o;
    int i = parse_bash_opts(argc, argv, &o, false);
    if (i < 0 || i >= argc)
        return spx_usage(argv[0]);
    json_object *env = json_object_new_object();
    for (; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (!eq || eq == argv[i]) {
            json_object_put(env);
            fprintf(stderr, "sandpipe-exec: expected K=V, got \"%s\"\n", argv[i]);
            return CLI_EXIT_USAGE;
        }
        char *key = strndup(argv[i], (size_t)(eq - argv[i]));
        json_set_str(env, key, eq + 1);
        free(key);
    }
    json_object *req = spx_req("bash.env");
    if (o.session)
        json_set_str(req, "session", o.session);
    json_set(req, "env", env);
    return spx_run(c, req);
}
