/* cmd_image.c — `sandpipe image build|ls|tag|rm`: runs images/sandpipe-image, installed next to
 * this binary as sandpipe-image (images/module.mk). Building an image is debootstrap, chroot, tar
 * and docker import in sequence: a script says that plainly, the CLI only finds it and hands over
 * (with the executor next to it, which goes into the image). Local, no gateway. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int
cmd_image(cli_t *cli, int argc, char **argv)
{
    (void)cli;
    char self[PATH_MAX], script[PATH_MAX + 32], exe[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        perror("sandpipe image: /proc/self/exe");
        return CLI_EXIT_USAGE;
    }
    self[n] = '\0';
    *strrchr(self, '/') = '\0';
    snprintf(script, sizeof script, "%s/sandpipe-image", self);
    snprintf(exe, sizeof exe, "%s/sandpipe-executor", self);
    if (!getenv("SANDPIPE_EXECUTOR"))
        setenv("SANDPIPE_EXECUTOR", exe, 1);
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args)
        return CLI_EXIT_USAGE;
    args[0] = script;
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    execv(script, args);
    fprintf(stderr, "sandpipe image: cannot run %s: %m\n", script);
    free(args);
    return CLI_EXIT_USAGE;
}
