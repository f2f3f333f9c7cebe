/* cmd_redis_acl.c — `sandpipe redis-acl`: Redis' ACL file from the users template
 * (redis/users.acl) and the users' password files (DIR/redis-USER.password), creating the
 * missing passwords with --generate (as `token --generate` creates the JWT secret). make run,
 * compose.yaml's redis and the tests' stacks run it before redis-server --aclfile. No network. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "jwt.h"
#include "redis_acl.h"
#include "redis_password.h"
#include "xalloc.h"

#define TEMPLATES_MAX     8
#define TEMPLATE_SIZE_MAX (64 * 1024)

typedef struct {
    const char *dir;
    bool generate;
} passwords_t;

static void
redis_acl_usage(FILE *f)
{
    fprintf(f,
            "usage: sandpipe redis-acl [--dir DIR] [--template FILE]... [--generate] [--out FILE]\n"
            "  Renders Redis' ACL file: the template's users, each \"@password@\" replaced by\n"
            "  \"#\" and the SHA-256 of that user's password, read from DIR/redis-USER.password\n"
            "  (one line, mode 0600; redis/README.md \"ACL\").\n"
            "  --dir DIR        the password files (default ./run)\n"
            "  --template FILE  the users and their rules (default redis/users.acl); given more\n"
            "                   than once, the templates are read one after the other\n"
            "  --generate       first create the password files that are missing (random, 64\n"
            "                   hex digits, mode 0600; DIR made 0700 if missing); existing ones\n"
            "                   are kept\n"
            "  --out FILE       write the ACL file there (mode 0600, replaced whole); without it\n"
            "                   the ACL goes to stdout, unless --generate was given\n");
}

static int
user_password(const char *user, char *pw, size_t cap, void *ud, err_t *err)
{
    const passwords_t *p = ud;
    char *path = xasprintf("%s/redis-%s.password", p->dir, user);
    if (p->generate && access(path, F_OK) < 0 && errno == ENOENT) {
        if (mkdir(p->dir, 0700) < 0 && errno != EEXIST) {
            int rc = err_set(err, errno, "%s: %s", p->dir, strerror(errno));
            free(path);
            return rc;
        }
        /* jwt_secret_generate: 32 random bytes in hex and a newline, 0600, never clobbering */
        int rc = jwt_secret_generate(path, err);
        if (rc < 0 && rc != -EEXIST) {
            free(path);
            return rc;
        }
    }
    int n = redis_password_load(path, pw, cap, err);
    free(path);
    return n;
}

static int
read_template(const char *path, buf_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cli_fail("%s: %s", path, strerror(errno));
    size_t before = out->len;
    for (;;) {
        char *p = buf_reserve(out, 4096);
        size_t got = fread(p, 1, 4096, f);
        buf_advance(out, got);
        if (got < 4096)
            break;
        if (out->len - before > TEMPLATE_SIZE_MAX)
            break;
    }
    bool failed = ferror(f);
    fclose(f);
    if (failed)
        return cli_fail("%s: cannot read it", path);
    if (out->len - before > TEMPLATE_SIZE_MAX)
        return cli_fail("%s: larger than %d bytes", path, TEMPLATE_SIZE_MAX);
    buf_puts(out, "\n");
    return 0;
}

/* The ACL into path, whole or not at all: a 0600 temporary file renamed over it. */
static int
write_acl(const char *path, const buf_t *acl)
{
    char *tmp = xasprintf("%s.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC); /* 0600 */
    if (fd < 0) {
        int rc = cli_fail("%s: %s", tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    int w = io_write_all(fd, acl->data, acl->len), e = w < 0 ? -w : 0;
    if (!e && fsync(fd) < 0)
        e = errno;
    if (close(fd) < 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) < 0)
        e = errno;
    if (e)
        unlink(tmp);
    free(tmp);
    return e ? cli_fail("%s: %s", path, strerror(e)) : 0;
}

int
cmd_redis_acl(cli_t *cli, int argc, char **argv)
{
    (void)cli;
    static const struct option opts[] = {
        {"dir", required_argument, 0, 'd'}, {"template", required_argument, 0, 't'},
        {"generate", no_argument, 0, 'g'},  {"out", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},      {0, 0, 0, 0}};
    passwords_t p = {.dir = "run"};
    const char *templates[TEMPLATES_MAX], *out = NULL;
    int ntemplates = 0, c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': p.dir = optarg; break;
        case 'g': p.generate = true; break;
        case 'o': out = optarg; break;
        case 't':
            if (ntemplates == TEMPLATES_MAX)
                return cli_usage("redis-acl", "at most %d --template", TEMPLATES_MAX);
            templates[ntemplates++] = optarg;
            break;
        case 'h': redis_acl_usage(stdout); return 0;
        default: redis_acl_usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_usage("redis-acl", "unexpected argument \"%s\"", argv[optind]);
    if (!*p.dir)
        return cli_usage("redis-acl", "--dir needs a directory");
    if (ntemplates == 0)
        templates[ntemplates++] = "redis/users.acl";
    buf_t tmpl = BUF_INIT, acl = BUF_INIT;
    int rc = 0;
    for (int i = 0; i < ntemplates && rc == 0; i++)
        rc = read_template(templates[i], &tmpl);
    err_t err = {0};
    if (rc == 0 && redis_acl_render(tmpl.data, tmpl.len, user_password, &p, &acl, &err) < 0)
        rc = cli_fail("%s: %s", ntemplates == 1 ? templates[0] : "the templates", err.msg);
    if (rc == 0 && out)
        rc = write_acl(out, &acl);
    else if (rc == 0 && !p.generate && (rc = io_write_all(STDOUT_FILENO, acl.data, acl.len)) < 0)
        rc = cli_fail("stdout: %s", strerror(-rc));
    buf_free(&tmpl);
    buf_free(&acl);
    return rc;
}
