/* main.c — sandpipe-exec, the executor's debug client: global options and the table of
 * subcommands. The connection and loop are in cli/spx_loop.c, the subcommands in
 * cli/spx_cmd_*.c. Exit status: the operation's (or 0), 1 on protocol/connection errors,
 * 2 on usage errors. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spx.h"

#define DEFAULT_SOCKET "/run/sandpipe/executor.sock"

static const spx_cmd_t commands[] = {
    {"run", spx_cmd_run, "run [--session S] [--timeout SEC] [--json] CMD..."},
    {"action", spx_cmd_action, "action [--session S] [--json] ACTION_JSON"},
    {"input", spx_cmd_input, "input [--session S] TEXT"},
    {"key", spx_cmd_key, "key [--session S] KEY          (C-c, C-d, C-z, ...)"},
    {"signal", spx_cmd_signal, "signal [--session S] SIG"},
    {"sessions", spx_cmd_sessions, "sessions"},
    {"env", spx_cmd_env, "env [--session S] K=V..."},
    {"spawn", spx_cmd_spawn, "spawn [--cwd D] [--env K=V]... [--detach] -- ARGV..."},
    {"attach", spx_cmd_attach, "attach ID [--stdout-offset N] [--stderr-offset N]"},
    {"ps", spx_cmd_ps, "ps"},
    {"kill", spx_cmd_kill, "kill ID [SIG]"},
    {"term", spx_cmd_term, "term [--cmd CMD]"},
    {"ls", spx_cmd_ls, "ls PATH"},
    {"stat", spx_cmd_stat, "stat PATH"},
    {"cat", spx_cmd_cat, "cat PATH [START END]"},
    {"write", spx_cmd_write, "write PATH           (content from stdin)"},
    {"mkdir", spx_cmd_mkdir, "mkdir [-p] PATH"},
    {"mv", spx_cmd_mv, "mv SRC DST"},
    {"rm", spx_cmd_rm, "rm [-r] PATH"},
    {"upload", spx_cmd_upload, "upload LOCAL REMOTE"},
    {"download", spx_cmd_download, "download REMOTE LOCAL   (LOCAL - for stdout)"},
    {"watch", spx_cmd_watch, "watch PATH"},
    {"health", spx_cmd_health, "health"},
    {"ping", spx_cmd_ping, "ping [COUNT]"},
    {"raw", spx_cmd_raw, "raw REQUEST_JSON"},
};

static void
usage(FILE *f)
{
    fprintf(f, "usage: sandpipe-exec [-s SOCKET | -c HOST:PORT -t TOKEN] [-v] COMMAND [ARGS]\n"
               "\n"
               "Debug client of sandpipe-executor (protocol: docs/protocol.md).\n"
               "  -s PATH        unix socket (default $SANDPIPE_EXECUTOR_SOCKET or " DEFAULT_SOCKET
               ")\n"
               "  -c HOST:PORT   TCP instead, with -t TOKEN (default $SANDPIPE_EXECUTOR_TOKEN)\n"
               "  -v             show the server's HELLO and connection messages\n"
               "\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %s\n", commands[i].usage);
    fprintf(f, "\nexit status: the operation's, 1 on protocol/connection errors, 2 on usage "
               "errors\n");
}

int
spx_usage(const char *cmd)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (!strcmp(commands[i].name, cmd)) {
            fprintf(stderr, "usage: sandpipe-exec [OPTIONS] %s\n", commands[i].usage);
            return CLI_EXIT_USAGE;
        }
    }
    usage(stderr);
    return CLI_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"socket", required_argument, NULL, 's'}, {"connect", required_argument, NULL, 'c'},
        {"token", required_argument, NULL, 't'},  {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    spx_t c = {
        .sock = -1,
        .input_fd = -1,
        .out_fd = 1,
        .unix_path = getenv("SANDPIPE_EXECUTOR_SOCKET"),
        .token = getenv("SANDPIPE_EXECUTOR_TOKEN"),
    };
    if (!c.unix_path || !*c.unix_path)
        c.unix_path = DEFAULT_SOCKET;
    int o;
    while ((o = getopt_long(argc, argv, "+s:c:t:vh", opts, NULL)) != -1) {
        switch (o) {
        case 's': c.unix_path = optarg; break;
        case 'c': c.tcp_addr = optarg; break;
        case 't': c.token = optarg; break;
        case 'v': c.verbose = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (c.tcp_addr && (!c.token || !*c.token)) {
        fprintf(stderr, "sandpipe-exec: -c needs a token (-t or $SANDPIPE_EXECUTOR_TOKEN)\n");
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[optind];
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (!strcmp(commands[i].name, name)) {
            int sub_argc = argc - optind;
            char **sub_argv = argv + optind;
            optind = 0; /* re-initialise getopt for the subcommand's own options */
            return commands[i].fn(&c, sub_argc, sub_argv);
        }
    }
    fprintf(stderr, "sandpipe-exec: unknown command \"%s\" (try --help)\n", name);
    return CLI_EXIT_USAGE;
}
