/* cmd_cp.c — `sandpipe cp`: copies one file to or from a session through the REST API's
 * streamed file routes (PUT /api/v1/sessions/{id}/files/content, GET .../files/download), so
 * the url must be nginx's (http://HOST:PORT), which sends them to the session's own gateway (that
 * gateway's address works too; no other does). The file is never
 * held whole: it moves in pieces between the local file (or stdin/stdout) and the socket. A
 * download to a file goes to a temp file renamed into place at the end: a failed copy leaves
 * nothing behind and never clobbers an existing file. */
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "http.h"
#include "json_util.h"
#include "xalloc.h"

#define ERROR_BODY_MAX (64u * 1024) /* an error reply kept to show its message */

typedef struct {
    int in, out;      /* the upload's source, the download's destination; -1 when none */
    const char *name; /* the local side, for messages */
    buf_t reply;      /* an error reply (bounded; for its message) or an upload's answer */
} cp_io_t;

/* SESSION:PATH when arg has a ':' before any '/' (name a local file with a ':' as ./a:b). */
static bool
split_remote(const char *arg, char *session, size_t cap, const char **path)
{
    const char *colon = strchr(arg, ':');
    const char *slash = strchr(arg, '/');
    if (!colon || colon == arg || (slash && slash < colon) || (size_t)(colon - arg) >= cap)
        return false;
    memcpy(session, arg, (size_t)(colon - arg));
    session[colon - arg] = '\0';
    *path = colon + 1;
    return true;
}

/* Percent-encodes s for a query value (unreserved characters and '/' stay). */
static char *
query_encode(const char *s)
{
    char *out = xmalloc(strlen(s) * 3 + 1), *o = out;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("-._~/", *c))
            *o++ = (char)*c;
        else
            o += sprintf(o, "%%%02X", *c);
    }
    *o = '\0';
    return out;
}

static long
source_read(void *ud, char *buf, size_t cap, err_t *err)
{
    cp_io_t *io = ud;
    for (;;) {
        ssize_t n = read(io->in, buf, cap);
        if (n >= 0)
            return (long)n;
        if (errno != EINTR)
            return err_set(err, errno, "reading %s: %s", io->name, strerror(errno));
    }
}

/* 200: the bytes go to the file (download) or are the upload's JSON answer; any other status:
 * the API's error body, kept for the message. */
static int
sink_write(void *ud, int status, const char *p, size_t n, err_t *err)
{
    cp_io_t *io = ud;
    if (status != 200 || io->out < 0) {
        if (io->reply.len + n <= ERROR_BODY_MAX)
            buf_append(&io->reply, p, n);
        return 0;
    }
    int rc = io_write_all(io->out, p, n);
    if (rc < 0)
        return err_set(err, -rc, "writing %s: %s", io->name, strerror(-rc));
    return 0;
}

/* The API's {"error":{"code","message"}} as "code: message", or the bare status. */
static int
report(const cli_t *cli, int status, const buf_t *body)
{
    err_t perr = {0};
    json_object *o = body->len ? json_parse_lossy(body->data, body->len, &perr) : NULL;
    json_object *e = json_get(o, "error");
    int rc;
    if (e)
        rc = cli_fail("cp: %s: %s", json_get_str(e, "code", "error"),
                      json_get_str(e, "message", "the server refused the request"));
    else
        rc = cli_fail("cp: HTTP %d from %s (the REST API is served by nginx: is --url its "
                      "http://HOST:PORT?)",
                      status, cli->url);
    json_object_put(o);
    return rc;
}

static int
run(cli_t *cli, http_req_t *req, cp_io_t *io)
{
    err_t err = {0};
    if (!cli_ws_ctx(cli, &err))
        return cli_fail("cp: %s", err.msg);
    ws_target_t t = {.url = cli->url, .token = cli->token, .insecure = cli->insecure};
    req->ud = io;
    int status = http_run(cli->ws_ctx, &t, req, &err);
    if (status < 0 && err.code != ECONNRESET && err.code != ECONNREFUSED)
        return cli_fail("cp: %s", err.msg);
    if (status < 0) /* no HTTP answer at all: most likely the gateway's own address */
        return cli_fail("cp: %s (cp needs the REST API: is --url nginx's http://HOST:PORT?)",
                        err.msg);
    if (status != 200)
        return report(cli, status, &io->reply);
    return 0;
}

static int
upload(cli_t *cli, const char *local, const char *sid, const char *path, const char *mode)
{
    cp_io_t io = {.in = 0, .out = -1, .name = "stdin"};
    long long len = HTTP_CHUNKED;
    if (strcmp(local, "-") != 0) {
        io.in = open(local, O_RDONLY | O_CLOEXEC);
        io.name = local;
        struct stat st;
        if (io.in < 0 || fstat(io.in, &st) < 0) {
            int e = errno;
            if (io.in >= 0)
                close(io.in);
            return cli_fail("cp: %s: %s", local, strerror(e));
        }
        if (S_ISDIR(st.st_mode)) {
            close(io.in);
            return cli_fail("cp: %s is a directory (cp copies one file)", local);
        }
        if (S_ISREG(st.st_mode))
            len = (long long)st.st_size;
    }
    /* PATH ending in '/' means "into that directory", under the local file's name. */
    char *target = NULL;
    if (path[strlen(path) - 1] == '/') {
        if (!strcmp(local, "-"))
            return cli_usage("cp", "name the remote file when copying stdin");
        char *copy = xstrdup(local);
        target = xasprintf("%s%s", path, basename(copy));
        free(copy);
    }
    char *qpath = query_encode(target ? target : path);
    char *url = xasprintf("/api/v1/sessions/%s/files/content?path=%s%s%s", sid, qpath,
                          mode ? "&mode=" : "", mode ? mode : "");
    http_req_t req = {
        .method = "PUT", .path = url, .body_len = len, .body = source_read, .sink = sink_write};
    int rc = run(cli, &req, &io);
    if (io.in > 0)
        close(io.in);
    buf_free(&io.reply);
    free(url);
    free(qpath);
    free(target);
    return rc;
}

static int
download(cli_t *cli, const char *sid, const char *path, const char *local)
{
    cp_io_t io = {.in = -1, .out = 1, .name = "stdout"};
    char *dest = NULL, *tmp = NULL;
    if (strcmp(local, "-") != 0) {
        struct stat st;
        char *copy = xstrdup(path);
        dest = stat(local, &st) == 0 && S_ISDIR(st.st_mode)
                   ? xasprintf("%s/%s", local, basename(copy))
                   : xstrdup(local);
        free(copy);
        tmp = xasprintf("%s.sp-partXXXXXX", dest);
        io.out = mkstemp(tmp);
        io.name = dest;
        if (io.out < 0) {
            int rc = cli_fail("cp: %s: %s", dest, strerror(errno));
            free(tmp);
            free(dest);
            return rc;
        }
        mode_t um = umask(0); /* mkstemp makes 0600: give the file what a new file gets */
        umask(um);
        fchmod(io.out, 0666 & ~um);
    }
    char *qpath = query_encode(path);
    char *url = xasprintf("/api/v1/sessions/%s/files/download?path=%s", sid, qpath);
    http_req_t req = {.method = "GET", .path = url, .body_len = HTTP_NO_BODY, .sink = sink_write};
    int rc = run(cli, &req, &io);
    if (tmp) {
        if (close(io.out) < 0 && rc == 0)
            rc = cli_fail("cp: %s: %s", dest, strerror(errno));
        if (rc == 0 && rename(tmp, dest) < 0)
            rc = cli_fail("cp: %s: %s", dest, strerror(errno));
        if (rc != 0)
            unlink(tmp);
    }
    buf_free(&io.reply);
    free(url);
    free(qpath);
    free(tmp);
    free(dest);
    return rc;
}

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: sandpipe cp [--mode MODE] LOCAL SESSION:PATH   upload (LOCAL - is stdin)\n"
            "       sandpipe cp SESSION:PATH LOCAL                 download (LOCAL - is stdout)\n"
            "Copies one file, streamed and binary safe, through the REST API: --url must be\n"
            "nginx's http://HOST:PORT. A PATH ending in / names a directory (the local file's\n"
            "name is kept); a LOCAL directory receives the file under its remote name.\n"
            "--mode sets an uploaded file's permissions (octal, e.g. 0755).\n");
}

int
cmd_cp(cli_t *cli, int argc, char **argv)
{
    static const struct option opts[] = {
        {"mode", required_argument, 0, 'm'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *mode = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "+hm:", opts, NULL)) != -1) {
        switch (c) {
        case 'm': mode = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (argc - optind != 2)
        return cli_usage("cp", "expected a source and a destination");
    if (mode && (strlen(mode) > 4 || strspn(mode, "01234567") != strlen(mode) || !*mode))
        return cli_usage("cp", "--mode takes octal permissions such as 0644");
    const char *src = argv[optind], *dst = argv[optind + 1];
    char sid_src[160], sid_dst[160], scratch[256];
    const char *path_src, *path_dst;
    bool remote_src = split_remote(src, sid_src, sizeof sid_src, &path_src);
    bool remote_dst = split_remote(dst, sid_dst, sizeof sid_dst, &path_dst);
    if (remote_src == remote_dst)
        return cli_usage("cp", "exactly one of the two must be SESSION:PATH");
    const char *sid = remote_src ? sid_src : sid_dst, *path = remote_src ? path_src : path_dst;
    /* cli_session_path checks the id is one (letters, digits, '-', '_', '.'). */
    if (cli_session_path(scratch, sizeof scratch, sid, "") < 0)
        return cli_usage("cp", "\"%s\" is not a session id", sid);
    if (!*path)
        return cli_usage("cp", "the remote PATH is empty");
    if (remote_src && mode)
        return cli_usage("cp", "--mode applies to uploads");
    if (remote_src)
        return download(cli, sid, path, dst);
    return upload(cli, src, sid, path, mode);
}
