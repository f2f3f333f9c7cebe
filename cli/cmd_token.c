/* cmd_token.c — `sandpipe token`: creates the gateway's secret file (--generate), mints bearer
 * tokens from it locally (jwt_mint_file: HS256) and says nginx's route key (--route-key,
 * route_key.h; nginx/render.sh asks it). No network; `make run` uses it too. */
#include <errno.h>
#include <getopt.h>
#include <openssl/crypto.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "jwt.h"
#include "route_key.h"

#define TOKEN_TTL_MAX (366LL * 86400)

static void
token_usage(FILE *f)
{
    fprintf(f, "usage: sandpipe token [--secret-file F] [--sub NAME] [--role admin|user|viewer]"
               " [--session ID] [--ttl SECONDS]\n"
               "       sandpipe token --secret-file F --generate\n"
               "       sandpipe token --secret-file F --route-key\n"
               "  --secret-file F  the gateway's JWT secret (env SANDPIPE_SECRET_FILE, default "
               "./run/secret)\n"
               "  --generate       create the secret file (mode 0600) if it does not exist, mint "
               "nothing\n"
               "  --route-key      print the key nginx's route lookups carry (X-SP-Route-Key,\n"
               "                   derived from the secret), mint nothing\n"
               "  --sub NAME       who the token is for (default admin)\n"
               "  --role ROLE      admin (default), user or viewer\n"
               "  --session ID     the session a viewer may watch (required for viewers)\n"
               "  --ttl SECONDS    validity (default 86400)\n");
}

/* The route key of the secret in file, on stdout. */
static int
print_route_key(const char *file)
{
    uint8_t secret[JWT_SECRET_MAX];
    size_t len = 0;
    char key[ROUTE_KEY_HEX_LEN + 1];
    err_t err = {0};
    if (jwt_secret_load(file, secret, sizeof secret, &len, &err) < 0)
        return cli_fail("%s", err.msg);
    int rc = route_key_derive(secret, len, key);
    OPENSSL_cleanse(secret, sizeof secret);
    if (rc < 0)
        return cli_fail("%s: no usable secret", file);
    printf("%s\n", key);
    return 0;
}

int
cmd_token(cli_t *cli, int argc, char **argv)
{
    (void)cli;
    static const struct option opts[] = {{"secret-file", required_argument, 0, 'k'},
                                         {"generate", no_argument, 0, 'g'},
                                         {"route-key", no_argument, 0, 'K'},
                                         {"sub", required_argument, 0, 's'},
                                         {"role", required_argument, 0, 'r'},
                                         {"session", required_argument, 0, 'S'},
                                         {"ttl", required_argument, 0, 't'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *file = getenv("SANDPIPE_SECRET_FILE"), *sub = "admin", *role = "admin",
               *session = "";
    long long ttl = 86400;
    bool generate = false, route_key = false;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'k': file = optarg; break;
        case 'g': generate = true; break;
        case 'K': route_key = true; break;
        case 's': sub = optarg; break;
        case 'r': role = optarg; break;
        case 'S': session = optarg; break;
        case 't':
            if (cli_parse_int(optarg, 1, TOKEN_TTL_MAX, &ttl) < 0)
                return cli_usage("token", "--ttl takes seconds, 1 to %lld", TOKEN_TTL_MAX);
            break;
        case 'h': token_usage(stdout); return 0;
        default: token_usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_usage("token", "unexpected argument \"%s\"", argv[optind]);
    if (!file || !*file)
        file = "run/secret";
    err_t err = {0};
    if (generate) {
        int rc = jwt_secret_generate(file, &err);
        if (rc < 0 && rc != -EEXIST)
            return cli_fail("cannot create %s: %s", file, err.msg);
        return 0;
    }
    if (route_key)
        return print_route_key(file);
    if (strcmp(role, "admin") && strcmp(role, "user") && strcmp(role, "viewer"))
        return cli_usage("token", "--role must be admin, user or viewer");
    if (!strcmp(role, "viewer") && !*session)
        return cli_usage("token", "a viewer token needs --session ID");
    jwt_claims_t cl;
    memset(&cl, 0, sizeof cl);
    if (!*sub || strlen(sub) >= sizeof cl.sub || strlen(session) >= sizeof cl.session)
        return cli_usage("token", "--sub must be 1 to %zu characters, --session under %zu",
                         sizeof cl.sub - 1, sizeof cl.session);
    char *tok = jwt_mint_file(file, sub, role, session, ttl, &err);
    if (!tok)
        return cli_fail("cannot mint a token with %s: %s", file, err.msg);
    printf("%s\n", tok);
    free(tok);
    return 0;
}
