/* cmd_cp.c — `sandpipe cp`: copying files to and from a session. Not available yet: the CLI
 * speaks the WebSocket API, and the REST file routes (GET/PUT /api/v1/sessions/{id}/files/content)
 * serve UTF-8 text only until the gateway's file.download/file.upload inbox ops exist. */
#include <stdio.h>

#include "cli.h"

int
cmd_cp(cli_t *cli, int argc, char **argv)
{
    (void)cli;
    (void)argc;
    (void)argv;
    fprintf(stderr, "sandpipe cp: not available yet (file transfer needs the REST API's streamed "
                    "file routes); use `sandpipe run SESSION -- cat PATH` to read a text file\n");
    return CLI_EXIT_USAGE;
}
