/* exec_link.c — gateway side of one executor connection. See exec_link.h. */
#include "exec_link.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include "gw.h"
#include "json_util.h"
#include "xalloc.h"

/* One read buffer for every link: a read is handed to exec_client_feed, which keeps what it
 * does not consume, before the loop reads anything else, so nothing outlives the call. An idle
 * link then costs no buffer (256 KiB each was most of an idle session's memory). */
#define READ_BUF (256 * 1024)
static char *shared_readbuf;

struct exec_link {
    exec_link_cbs_t cbs;
    void *ud;
    exec_client_t *client;
    uv_pipe_t pipe;
    uv_connect_t connect_req;
    uv_timer_t timer; /* connect retries, heartbeats */
    char *path;
    double deadline;
    bool pipe_open, up, connecting, freeing, quiet;
    int closing_handles;
    size_t backlog;
    double last_heard; /* any frame from the executor: a PONG may queue behind megabytes of DATA */
    char home[1024];   /* its HELLO's "home" ("" when it named none) */
};

typedef struct {
    uv_write_t req;
    exec_link_t *link;
    size_t len;
    char data[];
} write_req_t;

static void try_connect(exec_link_t *l);

static void
on_handle_closed(uv_handle_t *h)
{
    exec_link_t *l = h->data;
    if (--l->closing_handles == 0 && l->freeing) {
        exec_client_free(l->client);
        free(l->path);
        free(l);
    }
}

static void
on_pipe_closed(uv_handle_t *h)
{
    exec_link_t *l = h->data;
    l->pipe_open = false;
    on_handle_closed(h);
}

static void
close_pipe(exec_link_t *l)
{
    if (l->pipe_open && !uv_is_closing((uv_handle_t *)&l->pipe)) {
        l->closing_handles++;
        uv_close((uv_handle_t *)&l->pipe, on_pipe_closed);
    }
}

static void
link_down(exec_link_t *l, const char *why)
{
    bool was = l->up || l->connecting;
    l->up = false;
    l->connecting = false;
    uv_timer_stop(&l->timer);
    close_pipe(l);
    /* A fresh client for the next connection: channel state dies with the socket. */
    exec_client_free(l->client);
    l->client = NULL;
    if (was && l->cbs.on_down)
        l->cbs.on_down(l->ud, why);
}

/* ---- exec_client callbacks ---- */

static void
c_hello(void *ud, json_object *hello)
{
    exec_link_t *l = ud;
    /* a sandbox path, only ever sent back into the sandbox: absolute, UTF-8, no NUL */
    json_object *home = json_get(hello, "home");
    const char *h =
        home && json_object_is_type(home, json_type_string) ? json_object_get_string(home) : "";
    bool ok = h[0] == '/' && !json_get(hello, "home_b64") &&
              strlen(h) == (size_t)json_object_get_string_len(home) && strlen(h) < sizeof l->home;
    snprintf(l->home, sizeof l->home, "%s", ok ? h : "");
    l->up = true;
    l->connecting = false;
    l->last_heard = gw_now();
    if (l->cbs.on_up)
        l->cbs.on_up(l->ud);
}

static void
c_data(void *ud, uint32_t ch, bool is_stderr, const uint8_t *p, size_t n)
{
    exec_link_t *l = ud;
    l->last_heard = gw_now();
    if (l->cbs.on_data)
        l->cbs.on_data(l->ud, ch, is_stderr, p, n);
}

static void
c_json(void *ud, uint32_t ch, json_object *msg)
{
    exec_link_t *l = ud;
    l->last_heard = gw_now();
    if (l->cbs.on_json)
        l->cbs.on_json(l->ud, ch, msg);
}

static void
c_eof(void *ud, uint32_t ch)
{
    exec_link_t *l = ud;
    l->last_heard = gw_now();
    if (l->cbs.on_eof)
        l->cbs.on_eof(l->ud, ch);
}

static void
c_close(void *ud, uint32_t ch, json_object *res)
{
    exec_link_t *l = ud;
    if (l->cbs.on_close)
        l->cbs.on_close(l->ud, ch, res);
}

static void
c_writable(void *ud, uint32_t ch, size_t avail)
{
    exec_link_t *l = ud;
    if (l->cbs.on_writable)
        l->cbs.on_writable(l->ud, ch, avail);
}

static void
c_pong(void *ud, const uint8_t *p, size_t n)
{
    (void)p;
    (void)n;
    exec_link_t *l = ud;
    l->last_heard = gw_now();
}

static void
c_violation(void *ud, uint32_t ch, const char *what)
{
    (void)ud;
    GW_LOG("executor protocol violation on channel %u: %s", ch, what);
}

static const exec_client_cbs_t client_cbs = {
    .on_hello = c_hello,
    .on_data = c_data,
    .on_json = c_json,
    .on_eof = c_eof,
    .on_close = c_close,
    .on_writable = c_writable,
    .on_pong = c_pong,
    .on_violation = c_violation,
};

/* ---- I/O ---- */

static void
on_write_done(uv_write_t *req, int status)
{
    write_req_t *w = (write_req_t *)req;
    exec_link_t *l = w->link;
    l->backlog -= w->len;
    free(w);
    if (status < 0 && l->up)
        link_down(l, "write to executor failed");
}

void
exec_link_flush(exec_link_t *l)
{
    if (!l->client || !l->pipe_open)
        return;
    buf_t *out = exec_client_out(l->client);
    if (!out->len)
        return;
    size_t off = 0;
    if (l->backlog == 0) { /* nothing queued in libuv: write directly */
        uv_buf_t b = uv_buf_init(out->data, (unsigned)out->len);
        int n = uv_try_write((uv_stream_t *)&l->pipe, &b, 1);
        if (n > 0)
            off = (size_t)n;
    }
    if (off < out->len) {
        size_t len = out->len - off;
        write_req_t *w = xmalloc(sizeof *w + len);
        w->link = l;
        w->len = len;
        memcpy(w->data, out->data + off, len);
        uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
        l->backlog += len;
        if (uv_write(&w->req, (uv_stream_t *)&l->pipe, &b, 1, on_write_done) < 0) {
            l->backlog -= len;
            free(w);
            buf_clear(out);
            link_down(l, "write to executor failed");
            return;
        }
    }
    buf_clear(out);
}

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)suggested;
    (void)h;
    if (!shared_readbuf)
        shared_readbuf = xmalloc(READ_BUF);
    *b = uv_buf_init(shared_readbuf, READ_BUF);
}

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    exec_link_t *l = s->data;
    if (n < 0) {
        link_down(l, n == UV_EOF ? "executor closed the connection" : uv_strerror((int)n));
        return;
    }
    if (n == 0 || !l->client)
        return;
    err_t err = {0};
    if (exec_client_feed(l->client, b->base, (size_t)n, &err) < 0) {
        link_down(l, err.msg);
        return;
    }
    exec_link_flush(l); /* auto-granted credit, replies */
}

static void
on_timer(uv_timer_t *t)
{
    exec_link_t *l = t->data;
    if (l->connecting && !l->pipe_open) {
        try_connect(l);
        return;
    }
    if (l->connecting && !l->up && gw_now() > l->deadline) {
        /* Connected, but no HELLO: the socket exists from the sandbox's start, so a stopped or
         * wedged executor looks like this. */
        link_down(l, "the executor did not answer in time");
        return;
    }
    if (!l->up || l->quiet)
        return;
    double now = gw_now();
    if ((now - l->last_heard) * 1000.0 > EXEC_LINK_DEAD_MS) {
        link_down(l, "executor stopped answering heartbeats");
        return;
    }
    exec_client_ping(l->client, "hb", 2);
    exec_link_flush(l);
}

static void
on_connected(uv_connect_t *req, int status)
{
    exec_link_t *l = req->data;
    if (l->freeing)
        return;
    if (status < 0) {
        close_pipe(l);
        /* Refused: nothing listens, and the socket listens from the sandbox's start to its
         * executor's end, so the executor is gone (a sandbox killed while alive() still saw its
         * socket, its last process exiting): no use waiting for the deadline. */
        if (status == UV_ECONNREFUSED || gw_now() > l->deadline) {
            l->connecting = true; /* so on_down fires */
            link_down(l, "cannot connect to the executor socket");
        }
        /* else the timer retries once the pipe has closed */
        return;
    }
    l->client = exec_client_new(&client_cbs, l);
    uv_read_start((uv_stream_t *)&l->pipe, on_alloc, on_read);
    uv_timer_start(&l->timer, on_timer, EXEC_LINK_PING_MS, EXEC_LINK_PING_MS);
}

/* The socket's directory, opened without following any symlink, and only if it is ours and
 * nobody else can write it: then its entries are what we put there, and addr (through
 * /proc/self/fd, which also lifts sun_path's length limit) names the socket with no further
 * lookup by name. Returns the directory fd (the caller closes it after connecting) or -1. */
static int
open_socket_dir(const char *path, char *addr, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path || !slash[1])
        return -1;
    char *dir = xstrndup(path, (size_t)(slash - path));
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int dfd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
    if (dfd < 0 && errno == ENOSYS) /* before Linux 5.6: the last component at least */
        dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    free(dir);
    struct stat st, sock;
    if (dfd >= 0 && fstat(dfd, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 022) &&
        fstatat(dfd, slash + 1, &sock, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(sock.st_mode) &&
        snprintf(addr, n, "/proc/self/fd/%d/%s", dfd, slash + 1) < (int)n)
        return dfd;
    if (dfd >= 0)
        close(dfd);
    return -1;
}

static void
try_connect(exec_link_t *l)
{
    if (l->pipe_open)
        return;
    char addr[108];
    int dfd = open_socket_dir(l->path, addr, sizeof addr);
    if (dfd < 0) { /* not there (yet), or not safe to use: the timer retries until the deadline */
        if (gw_now() > l->deadline)
            link_down(l, "no executor socket in a directory only the gateway can write");
        return;
    }
    uv_pipe_init(g_gw.loop, &l->pipe, 0);
    l->pipe.data = l;
    l->pipe_open = true;
    l->connect_req.data = l;
    /* connect(2) on a unix socket completes (or fails) inside this call: dfd may go after. */
    uv_pipe_connect(&l->connect_req, &l->pipe, addr, on_connected);
    close(dfd);
}

exec_link_t *
exec_link_new(const exec_link_cbs_t *cbs, void *ud)
{
    exec_link_t *l = xcalloc(1, sizeof *l);
    l->cbs = *cbs;
    l->ud = ud;
    uv_timer_init(g_gw.loop, &l->timer);
    l->timer.data = l;
    return l;
}

void
exec_link_connect(exec_link_t *l, const char *path, int timeout_ms)
{
    free(l->path);
    l->path = xstrdup(path);
    l->deadline = gw_now() + timeout_ms / 1000.0;
    l->connecting = true;
    l->up = false;
    uv_timer_start(&l->timer, on_timer, 5, 5); /* a starting sandbox: try every 5 ms */
    try_connect(l);
}

const char *
exec_link_home(const exec_link_t *l)
{
    return l->home;
}

bool
exec_link_up(const exec_link_t *l)
{
    return l->up;
}

void
exec_link_rebind(exec_link_t *l, const exec_link_cbs_t *cbs, void *ud)
{
    l->cbs = *cbs;
    l->ud = ud;
}

exec_client_t *
exec_link_client(exec_link_t *l)
{
    return l->up ? l->client : NULL;
}

void
exec_link_set_quiet(exec_link_t *l, bool quiet)
{
    l->quiet = quiet;
    if (!quiet)
        l->last_heard = gw_now(); /* a thawed executor answers the next ping */
}

size_t
exec_link_shrink(exec_link_t *l)
{
    return l->client && !l->backlog ? exec_client_shrink(l->client) : 0;
}

void
exec_link_free(exec_link_t *l)
{
    if (!l)
        return;
    l->freeing = true;
    l->up = false;
    close_pipe(l);
    l->closing_handles++;
    uv_close((uv_handle_t *)&l->timer, on_handle_closed);
}
