/* exec_cli.c — sandpipe-exec, the executor's debug client: global options and the table of
 * subcommands. The connection and loop are in cli/cli_loop.c, the subcommands in
 * cli/cli_cmd_*.c. Exit status: the operation's (or 0), 1 on protocol/connection errors,
 * 2 on usage errors. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define DEFAULT_SOCKET "/run/sandpipe/executor.sock"

static const cli_cmd_t commands[] = {
    {"run", cli_cmd_run, "run [--session S] [--timeout SEC] [--json] CMD..."},
    {"action", cli_cmd_action, "action [--session S] [--json] ACTION_JSON"},
    {"input", cli_cmd_input, "input [--session S] TEXT"},
    {"key", cli_cmd_key, "key [--session S] KEY          (C-c, C-d, C-z, ...)"},
    {"signal", cli_cmd_signal, "signal [--session S] SIG"},
    {"sessions", cli_cmd_sessions, "sessions"},
    {"env", cli_cmd_env, "env [--session S] K=V..."},
    {"spawn", cli_cmd_spawn, "spawn [--cwd D] [--env K=V]... [--detach] -- ARGV..."},
    {"attach", cli_cmd_attach, "attach ID [--stdout-offset N] [--stderr-offset N]"},
    {"ps", cli_cmd_ps, "ps"},
    {"kill", cli_cmd_kill, "kill ID [SIG]"},
    {"term", cli_cmd_term, "term [--cmd CMD]"},
    {"ls", cli_cmd_ls, "ls PATH"},
    {"stat", cli_cmd_stat, "stat PATH"},
    {"cat", cli_cmd_cat, "cat PATH [START END]"},
    {"write", cli_cmd_write, "write PATH           (content from stdin)"},
    {"mkdir", cli_cmd_mkdir, "mkdir [-p] PATH"},
    {"mv", cli_cmd_mv, "mv SRC DST"},
    {"rm", cli_cmd_rm, "rm [-r] PATH"},
    {"upload", cli_cmd_upload, "upload LOCAL REMOTE"},
    {"download", cli_cmd_download, "download REMOTE LOCAL   (LOCAL - for stdout)"},
    {"watch", cli_cmd_watch, "watch PATH"},
    {"health", cli_cmd_health, "health"},
    {"ping", cli_cmd_ping, "ping [COUNT]"},
    {"raw", cli_cmd_raw, "raw REQUEST_JSON"},
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
cli_usage(const char *cmd)
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
    cli_t c = {
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
