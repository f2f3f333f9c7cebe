/* cmd_files.c — sandpipe-exec subcommands for files: ls, stat, cat, write, mkdir, mv, rm,
 * upload, download, watch. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "spx.h"
#include "json_util.h"

static json_object *
path_req(const char *op, const char *path)
{
    json_object *req = spx_req(op);
    json_set_str(req, "path", path);
    return req;
}

int
spx_cmd_ls(spx_t *c, int argc, char **argv)
{
    if (argc > 2)
        return spx_usage(argv[0]);
    return spx_run(c, path_req("file.list", argc == 2 ? argv[1] : "."));
}

int
spx_cmd_stat(spx_t *c, int argc, char **argv)
{
    if (argc != 2)
        return spx_usage(argv[0]);
    return spx_run(c, path_req("file.stat", argv[1]));
}

/* cat: the content raw on stdout (whether it comes as DATA or in the result). */
static void
cat_on_close(spx_t *c, json_object *res)
{
    c->done = true;
    if (spx_report_error("cat", res)) {
        c->exit_code = CLI_EXIT_FAIL;
        return;
    }
    json_object *content = json_get(res, "content");
    if (content && json_object_is_type(content, json_type_string))
        io_write_all(STDOUT_FILENO, json_object_get_string(content),
                     (size_t)json_object_get_string_len(content));
    else
        spx_print_json(STDOUT_FILENO, res, true);
    if (c->verbose) {
        json_object_object_del(res, "content");
        spx_print_json(STDERR_FILENO, res, false);
    }
    c->exit_code = 0;
}

static int
parse_line(const char *s, long long *out)
{
    char *end;
    *out = strtoll(s, &end, 10);
    return *s && !*end ? 0 : -1;
}

int
spx_cmd_cat(spx_t *c, int argc, char **argv)
{
    long long start = 0, end = 0;
    if (argc != 2 && argc != 4)
        return spx_usage(argv[0]);
    if (argc == 4 && (parse_line(argv[2], &start) < 0 || parse_line(argv[3], &end) < 0))
        return spx_usage(argv[0]);
    json_object *req = path_req("file.read", argv[1]);
    if (argc == 4) {
        json_set_int(req, "start_line", start);
        json_set_int(req, "end_line", end);
    }
    c->hooks.on_close = cat_on_close;
    return spx_run(c, req);
}

int
spx_cmd_write(spx_t *c, int argc, char **argv)
{
    if (argc != 2)
        return spx_usage(argv[0]);
    /* The content travels in the OPEN request: bounded by the frame size. */
    buf_t content = BUF_INIT;
    for (;;) {
        char *p = buf_reserve(&content, 65536);
        ssize_t n = read(STDIN_FILENO, p, 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            spx_die(CLI_EXIT_FAIL, "reading stdin: %s", strerror(errno));
        if (n == 0)
            break;
        buf_advance(&content, (size_t)n);
        if (content.len > FRAME_MAX_PAYLOAD - 4096)
            spx_die(CLI_EXIT_USAGE, "stdin is too large for write (over %u bytes): use upload",
                    FRAME_MAX_PAYLOAD - 4096);
    }
    if (content.len && memchr(content.data, '\0', content.len))
        spx_die(CLI_EXIT_USAGE, "stdin holds NUL bytes: use upload for binary files");
    json_object *req = path_req("file.write", argv[1]);
    json_set_strn(req, "content", content.len ? content.data : "", content.len);
    buf_free(&content);
    return spx_run(c, req);
}

int
spx_cmd_mkdir(spx_t *c, int argc, char **argv)
{
    bool parents = argc == 3 && !strcmp(argv[1], "-p");
    if (argc != 2 + parents)
        return spx_usage(argv[0]);
    json_object *req = path_req("file.mkdir", argv[argc - 1]);
    if (parents)
        json_set_bool(req, "parents", true);
    return spx_run(c, req);
}

int
spx_cmd_mv(spx_t *c, int argc, char **argv)
{
    if (argc != 3)
        return spx_usage(argv[0]);
    json_object *req = spx_req("file.move");
    json_set_str(req, "from", argv[1]);
    json_set_str(req, "to", argv[2]);
    return spx_run(c, req);
}

int
spx_cmd_rm(spx_t *c, int argc, char **argv)
{
    bool recursive = argc == 3 && (!strcmp(argv[1], "-r") || !strcmp(argv[1], "-rf"));
    if (argc != 2 + recursive)
        return spx_usage(argv[0]);
    json_object *req = path_req("file.remove", argv[argc - 1]);
    if (recursive)
        json_set_bool(req, "recursive", true);
    return spx_run(c, req);
}

int
spx_cmd_upload(spx_t *c, int argc, char **argv)
{
    if (argc != 3)
        return spx_usage(argv[0]);
    int fd = strcmp(argv[1], "-") ? open(argv[1], O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    if (fd < 0)
        spx_die(CLI_EXIT_FAIL, "%s: %s", argv[1], strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0)
        spx_die(CLI_EXIT_FAIL, "%s: %s", argv[1], strerror(errno));
    if (S_ISDIR(st.st_mode))
        spx_die(CLI_EXIT_USAGE, "%s is a directory", argv[1]);
    json_object *req = path_req("file.upload", argv[2]);
    if (S_ISREG(st.st_mode)) { /* keep the local file's permission bits */
        char mode[8];
        snprintf(mode, sizeof(mode), "%04o", (unsigned)(st.st_mode & 07777));
        json_set_str(req, "mode", mode);
    }
    c->input_fd = fd;
    c->input_started = true;
    c->input_send_eof = true;
    return spx_run(c, req);
}

typedef struct {
    const char *local;
    char *part; /* LOCAL.part while downloading, renamed at the end */
    bool to_stdout;
} download_t;

static void
download_on_data(spx_t *c, bool is_stderr, const uint8_t *p, size_t n)
{
    download_t *d = c->op;
    (void)is_stderr;
    int r = io_write_all(c->out_fd, p, n);
    if (r < 0)
        spx_die(CLI_EXIT_FAIL, "writing %s: %s", d->to_stdout ? "stdout" : d->part, strerror(-r));
}

static void
download_on_json(spx_t *c, json_object *msg)
{
    if (c->verbose) /* {"event":"size",...}: stdout may be the file itself */
        spx_print_json(STDERR_FILENO, msg, false);
}

static void
download_on_close(spx_t *c, json_object *res)
{
    download_t *d = c->op;
    c->done = true;
    bool failed = spx_report_error("download", res);
    if (failed || c->sigints) { /* an error, or cut short by Ctrl-C: keep nothing */
        if (!d->to_stdout)
            unlink(d->part);
        c->exit_code = failed ? CLI_EXIT_FAIL : 130;
        return;
    }
    if (!d->to_stdout) {
        if (close(c->out_fd) < 0 || rename(d->part, d->local) < 0) {
            spx_warn("%s: %s", d->local, strerror(errno));
            unlink(d->part);
            c->exit_code = CLI_EXIT_FAIL;
            return;
        }
    }
    spx_print_json(d->to_stdout ? STDERR_FILENO : STDOUT_FILENO, res, false);
    c->exit_code = 0;
}

int
spx_cmd_download(spx_t *c, int argc, char **argv)
{
    static download_t d;
    if (argc != 3)
        return spx_usage(argv[0]);
    d.local = argv[2];
    d.to_stdout = !strcmp(d.local, "-");
    if (!d.to_stdout) {
        if (asprintf(&d.part, "%s.part", d.local) < 0)
            abort();
        c->out_fd = open(d.part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (c->out_fd < 0)
            spx_die(CLI_EXIT_FAIL, "%s: %s", d.part, strerror(errno));
    }
    c->op = &d;
    c->hooks.on_data = download_on_data;
    c->hooks.on_json = download_on_json;
    c->hooks.on_close = download_on_close;
    int r = spx_run(c, path_req("file.download", argv[1]));
    free(d.part);
    return r;
}

static void
watch_on_close(spx_t *c, json_object *res)
{
    c->done = true;
    /* After Ctrl-C the server's CLOSE ends the watch: that is success. */
    if (!c->sigints && spx_report_error("watch", res)) {
        c->exit_code = CLI_EXIT_FAIL;
        return;
    }
    c->exit_code = 0;
}

int
spx_cmd_watch(spx_t *c, int argc, char **argv)
{
    if (argc != 2)
        return spx_usage(argv[0]);
    c->hooks.on_close = watch_on_close; /* events: the default, one JSON line each */
    return spx_run(c, path_req("file.watch", argv[1]));
}
