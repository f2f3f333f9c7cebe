/* token_cli.c — sandpipe-token: creates the JWT secret and mints tokens (HS256).
 *   sandpipe-token --secret-file F --generate          create F (0600) if missing
 *   sandpipe-token --secret-file F [--sub NAME] [--role admin|user|viewer] [--session ID] [--ttl
 * SEC]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jwt.h"

int
main(int argc, char **argv)
{
    static const struct option opts[] = {{"secret-file", required_argument, 0, 'k'},
                                         {"generate", no_argument, 0, 'g'},
                                         {"sub", required_argument, 0, 's'},
                                         {"role", required_argument, 0, 'r'},
                                         {"session", required_argument, 0, 'S'},
                                         {"ttl", required_argument, 0, 't'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *file = NULL, *sub = "admin", *role = "admin", *session = "";
    long long ttl = 86400;
    int gen = 0, c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'k': file = optarg; break;
        case 'g': gen = 1; break;
        case 's': sub = optarg; break;
        case 'r': role = optarg; break;
        case 'S': session = optarg; break;
        case 't': ttl = atoll(optarg); break;
        case 'h':
            printf("usage: sandpipe-token --secret-file F [--generate] [--sub NAME] [--role "
                   "admin|user|viewer]"
                   " [--session ID] [--ttl SECONDS]\n");
            return 0;
        default: return 2;
        }
    }
    if (!file) {
        fprintf(stderr, "sandpipe-token: --secret-file is required\n");
        return 2;
    }
    err_t err = {0};
    if (gen) {
        int rc = jwt_secret_generate(file, &err);
        if (rc < 0 && rc != -EEXIST) {
            fprintf(stderr, "sandpipe-token: %s\n", err.msg);
            return 1;
        }
        return 0;
    }
    char *tok = jwt_mint_file(file, sub, role, session, ttl, &err);
    if (!tok) {
        fprintf(stderr, "sandpipe-token: %s\n", err.msg);
        return 1;
    }
    printf("%s\n", tok);
    free(tok);
    return 0;
}
