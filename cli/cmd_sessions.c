/* cmd_sessions.c — `sandpipe sessions`: list, create, get and remove sessions through the
 * /ws/control requests session.list / session.create / session.get / session.delete. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json_util.h"
#include "xalloc.h"

#define SESSIONS_CREATE_MS 180000 /* a fresh sandbox (custom env/limits) may take a while */
#define SESSIONS_CALL_MS   30000

static void
sessions_usage(FILE *f)
{
    fprintf(f,
            "usage: sandpipe sessions [ls] [--json] [-q]      list (a table; -q ids only; --json "
            "as sent)\n"
            "       sandpipe sessions create [--env K=V]... [--memory BYTES] [--cpu MILLICORES]\n"
            "                                [--pids N] [--idle-timeout S] [--max-lifetime S]\n"
            "                                [--profile NAME] [--network]   prints the new id\n"
            "       sandpipe sessions get ID                  the session as JSON\n"
            "       sandpipe sessions rm ID...                stop and remove\n");
}

static void
print_json(json_object *o)
{
    int flags = JSON_C_TO_STRING_PLAIN;
    if (isatty(STDOUT_FILENO))
        flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED;
    printf("%s\n", json_object_to_json_string_ext(o, flags | JSON_C_TO_STRING_NOSLASHESCAPE));
}

int
sessions_create(cli_t *cli, json_object *params, char *id, size_t cap, err_t *err)
{
    json_object *res;
    int rc = cli_control_call(cli, "session.create", params, SESSIONS_CREATE_MS, &res, err);
    if (rc < 0)
        return rc;
    const char *sid = json_get_str(res, "id", "");
    if (!*sid || strlen(sid) >= cap)
        rc = err_set(err, ERR_PROTO, "session.create answered without a usable id");
    else
        snprintf(id, cap, "%s", sid);
    json_object_put(res);
    return rc;
}

int
sessions_delete(cli_t *cli, const char *id, err_t *err)
{
    json_object *params = json_object_new_object(), *res;
    json_set_str(params, "session", id);
    int rc = cli_control_call(cli, "session.delete", params, SESSIONS_CALL_MS, &res, err);
    json_object_put(res);
    return rc;
}

static int
sessions_ls(cli_t *cli, int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, 0, 'j'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    bool as_json = false, quiet = false;
    int c;
    while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = true; break;
        case 'q': quiet = true; break;
        case 'h': sessions_usage(stdout); return 0;
        default: sessions_usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_usage("sessions", "ls takes no argument (got \"%s\")", argv[optind]);
    json_object *res;
    err_t err = {0};
    if (cli_control_call(cli, "session.list", NULL, SESSIONS_CALL_MS, &res, &err) < 0)
        return cli_fail("sessions: %s", err.msg);
    json_object *list = json_get(res, "sessions");
    if (as_json) {
        print_json(res);
    } else {
        size_t n =
            list && json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
        if (!quiet)
            printf("%-20s %-12s %-16s %-10s %s\n", "ID", "STATUS", "OWNER", "PROFILE", "CREATED");
        for (size_t i = 0; i < n; i++) {
            json_object *s = json_object_array_get_idx(list, i);
            if (quiet) {
                printf("%s\n", json_get_str(s, "id", "?"));
                continue;
            }
            char when[32] = "-";
            time_t t = (time_t)json_get_double(s, "created", 0);
            struct tm tm;
            if (t > 0 && localtime_r(&t, &tm))
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
            printf("%-20s %-12s %-16s %-10s %s\n", json_get_str(s, "id", "?"),
                   json_get_str(s, "status", "?"), json_get_str(s, "owner", "?"),
                   json_get_str(s, "profile", "?"), when);
        }
    }
    json_object_put(res);
    return 0;
}

/* --env K=V into env{}; returns false when the pair has no '=' or an empty name. */
static bool
add_env(json_object *env, const char *pair)
{
    const char *eq = strchr(pair, '=');
    if (!eq || eq == pair)
        return false;
    char *name = xstrndup(pair, (size_t)(eq - pair));
    json_set_str(env, name, eq + 1);
    free(name);
    return true;
}

static int
sessions_create_cmd(cli_t *cli, int argc, char **argv)
{
    static const struct option opts[] = {{"env", required_argument, 0, 'e'},
                                         {"memory", required_argument, 0, 'm'},
                                         {"cpu", required_argument, 0, 'c'},
                                         {"pids", required_argument, 0, 'p'},
                                         {"idle-timeout", required_argument, 0, 'i'},
                                         {"max-lifetime", required_argument, 0, 'l'},
                                         {"profile", required_argument, 0, 'P'},
                                         {"network", no_argument, 0, 'n'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    static const struct {
        int opt;
        const char *name, *key, *what;
        long long max;
    } limits[] = {{'m', "memory", "memory", "bytes", 1LL << 50},
                  {'c', "cpu", "cpu", "millicores", 1 << 20},
                  {'p', "pids", "pids", "a count", 1 << 22},
                  {'i', "idle-timeout", "idle_timeout", "seconds", 1LL << 32},
                  {'l', "max-lifetime", "max_lifetime", "seconds", 1LL << 32}};
    json_object *params = json_object_new_object(), *env = NULL;
    int c, rc = 0;
    while (!rc && (c = getopt_long(argc, argv, "e:h", opts, NULL)) != -1) {
        switch (c) {
        case 'e':
            if (!env)
                env = json_object_new_object();
            if (!add_env(env, optarg))
                rc = cli_usage("sessions", "--env takes NAME=VALUE (got \"%s\")", optarg);
            break;
        case 'P': json_set_str(params, "profile", optarg); break;
        case 'n': json_set_bool(params, "network", true); break;
        case 'h':
            sessions_usage(stdout);
            rc = -1;
            break;
        case '?':
            sessions_usage(stderr);
            rc = CLI_EXIT_USAGE;
            break;
        default:
            for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
                long long v;
                if (limits[i].opt != c)
                    continue;
                if (cli_parse_int(optarg, 0, limits[i].max, &v) < 0)
                    rc = cli_usage("sessions", "--%s takes %s (got \"%s\")", limits[i].name,
                                   limits[i].what, optarg);
                else
                    json_set_int(params, limits[i].key, v);
            }
        }
    }
    if (!rc && optind < argc)
        rc = cli_usage("sessions", "create takes options only (got \"%s\")", argv[optind]);
    if (rc) {
        json_object_put(env);
        json_object_put(params);
        return rc < 0 ? 0 : rc;
    }
    if (env)
        json_set(params, "env", env);
    char id[160];
    err_t err = {0};
    if (sessions_create(cli, params, id, sizeof id, &err) < 0)
        return cli_fail("sessions create: %s", err.msg);
    printf("%s\n", id);
    return 0;
}

static int
sessions_get(cli_t *cli, int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-')
        return cli_usage("sessions", "get takes one session id");
    json_object *params = json_object_new_object(), *res;
    json_set_str(params, "session", argv[1]);
    err_t err = {0};
    if (cli_control_call(cli, "session.get", params, SESSIONS_CALL_MS, &res, &err) < 0)
        return cli_fail("sessions get %s: %s", argv[1], err.msg);
    print_json(res);
    json_object_put(res);
    return 0;
}

static int
sessions_rm(cli_t *cli, int argc, char **argv)
{
    if (argc < 2)
        return cli_usage("sessions", "rm takes one or more session ids");
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        err_t err = {0};
        if (sessions_delete(cli, argv[i], &err) < 0)
            rc = cli_fail("sessions rm %s: %s", argv[i], err.msg);
    }
    return rc;
}

int
cmd_sessions(cli_t *cli, int argc, char **argv)
{
    /* argv[0] is "sessions"; the verb (default ls) follows. */
    if (argc < 2 || argv[1][0] == '-') {
        if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
            sessions_usage(stdout);
            return 0;
        }
        return sessions_ls(cli, argc, argv);
    }
    const char *verb = argv[1];
    if (!strcmp(verb, "ls") || !strcmp(verb, "list"))
        return sessions_ls(cli, argc - 1, argv + 1);
    if (!strcmp(verb, "create") || !strcmp(verb, "new"))
        return sessions_create_cmd(cli, argc - 1, argv + 1);
    if (!strcmp(verb, "get"))
        return sessions_get(cli, argc - 1, argv + 1);
    if (!strcmp(verb, "rm") || !strcmp(verb, "delete"))
        return sessions_rm(cli, argc - 1, argv + 1);
    return cli_usage("sessions", "unknown verb \"%s\" (ls, create, get, rm)", verb);
}
