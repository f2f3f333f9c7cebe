/* sandpipe.c — the command-line client: global options, the command table, the loop.
 * main owns the uv loop; commands borrow it through cli_t and connect with cli_connect. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CLI_DEFAULT_URL "ws://127.0.0.1:8081"

typedef struct {
    const char *name;
    cli_cmd_fn fn;
    const char *summary;
} cli_command_t;

static const cli_command_t commands[] = {
    {"token", cmd_token,
     "token [--secret-file F] [--sub S] [--role admin|user|viewer] [--session ID] [--ttl SEC]"
     " | --generate | --route-key"},
    {"sessions", cmd_sessions,
     "sessions [ls [--json] [-q]] | create [--env K=V]... [--memory B] [--pids N]"
     " [--idle-timeout S] | get ID | rm ID..."},
    {"run", cmd_run, "run [--timeout SEC] (SESSION | --new) -- CMD..."},
    {"attach", cmd_attach, "attach SESSION"},
    {"events", cmd_events, "events SESSION [--since N] [--follow]"},
    {"cp", cmd_cp,
     "cp [--mode M] LOCAL SESSION:PATH | cp SESSION:PATH LOCAL   (LOCAL - is stdin/stdout;"
     " needs nginx's http:// url)"},
    {"image", cmd_image,
     "image build [--base IMAGE|ROOTFS] [--tag NAME]... [--force] [--no-docker|--docker]"
     " [--build-essential] | image ls [--json] | image tag NAME NEW... | image rm NAME"
     "   (local: runtime images)"},
    {"redis-acl", cmd_redis_acl,
     "redis-acl [--dir DIR] [--template FILE]... [--generate] [--out FILE]"
     "   (Redis' users: the ACL file, the password files)"},
};

static void
usage(FILE *f)
{
    fprintf(f, "usage: sandpipe [--url URL] [--token TOKEN] [--insecure] COMMAND [ARGS]\n"
               "  --url URL      gateway, ws://HOST:PORT or wss://HOST:PORT (env SANDPIPE_URL,\n"
               "                 default " CLI_DEFAULT_URL "; behind nginx http://127.0.0.1:8080)\n"
               "  --token TOKEN  bearer token (env SANDPIPE_TOKEN)\n"
               "  --insecure     accept a self-signed certificate (wss://)\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  sandpipe %s\n", commands[i].summary);
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {{"url", required_argument, 0, 'u'},
                                         {"token", required_argument, 0, 't'},
                                         {"insecure", no_argument, 0, 'k'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    cli_t cli = {.url = getenv("SANDPIPE_URL"), .token = getenv("SANDPIPE_TOKEN")};
    int c;
    /* "+": stop at the command; its own options are parsed by the command. */
    while ((c = getopt_long(argc, argv, "+hk", opts, NULL)) != -1) {
        switch (c) {
        case 'u': cli.url = optarg; break;
        case 't': cli.token = optarg; break;
        case 'k': cli.insecure = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (!cli.url || !*cli.url)
        cli.url = CLI_DEFAULT_URL;
    if (optind >= argc) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[optind];
    const cli_command_t *cmd = NULL;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name))
            cmd = &commands[i];
    if (!cmd) {
        fprintf(stderr, "sandpipe: unknown command \"%s\"\n", name);
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    signal(SIGPIPE, SIG_IGN);
    uv_loop_t loop;
    uv_loop_init(&loop);
    cli.loop = &loop;
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind;
    optind = 0; /* glibc: a full re-initialisation for the command's own getopt_long */
    int rc = cmd->fn(&cli, sub_argc, sub_argv);
    ws_ctx_free(cli.ws_ctx);
    uv_run(&loop, UV_RUN_DEFAULT); /* let lws and the commands' handles close */
    uv_loop_close(&loop);
    return rc;
}
