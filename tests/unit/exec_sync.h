/* exec_sync.h — a blocking executor client for tests: exec_client (the I/O-free protocol
 * client) driven over a unix socket with poll(), so a test can spawn a command in a sandbox and
 * read its output and exit code in a few lines. Header-only (static inline). */
#ifndef SP_TEST_EXEC_SYNC_H
#define SP_TEST_EXEC_SYNC_H

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "exec_client.h"
#include "json_util.h"
#include "xalloc.h"

static inline double
now(void)
{
    return clock_mono();
}

static inline void
sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

typedef struct {
    int fd;
    exec_client_t *c;
    uint32_t ch;
    buf_t out;
    json_object *started, *result;
} conn_t;

static inline void
on_data(void *ud, uint32_t ch, bool is_stderr, const uint8_t *p, size_t n)
{
    conn_t *k = ud;
    if (ch == k->ch && !is_stderr)
        buf_append(&k->out, p, n);
}

static inline void
on_json(void *ud, uint32_t ch, json_object *msg)
{
    conn_t *k = ud;
    if (ch == k->ch && !k->started)
        k->started = json_object_get(msg);
}

static inline void
on_close(void *ud, uint32_t ch, json_object *result)
{
    conn_t *k = ud;
    if (ch == k->ch)
        k->result = json_object_get(result ? result : json_object_new_object());
}

static inline int
flush_out(conn_t *k)
{
    buf_t *o = exec_client_out(k->c);
    while (o->len) {
        ssize_t w = send(k->fd, o->data, o->len, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        buf_consume(o, (size_t)w);
    }
    return 0;
}

/* Reads until done() or the deadline; 0, or -1 on timeout/EOF. */
static inline int
pump(conn_t *k, double secs, bool (*done)(conn_t *))
{
    double end = now() + secs;
    while (!done(k)) {
        if (flush_out(k) < 0)
            return -1;
        struct pollfd pfd = {k->fd, POLLIN, 0};
        int left = (int)((end - now()) * 1000);
        if (left <= 0 || poll(&pfd, 1, left) <= 0)
            return -1;
        char b[65536];
        ssize_t n = recv(k->fd, b, sizeof b, 0);
        if (n <= 0 || exec_client_feed(k->c, b, (size_t)n, NULL) < 0)
            return -1;
    }
    return flush_out(k);
}

static inline bool
got_hello(conn_t *k)
{
    return exec_client_hello(k->c) != NULL;
}
static inline bool
got_result(conn_t *k)
{
    return k->result != NULL;
}
static inline bool
got_started(conn_t *k)
{
    return k->started != NULL || k->result != NULL;
}

static inline void
conn_close(conn_t *k)
{
    if (k->fd >= 0)
        close(k->fd);
    exec_client_free(k->c);
    buf_free(&k->out);
    json_object_put(k->started);
    json_object_put(k->result);
    memset(k, 0, sizeof *k);
    k->fd = -1;
}

/* Connects and waits for HELLO; retries until secs have passed (the executor is starting). */
static inline int
conn_open(conn_t *k, const char *path, double secs)
{
    static const exec_client_cbs_t cbs = {
        .on_data = on_data, .on_json = on_json, .on_close = on_close};
    double end = now() + secs;
    memset(k, 0, sizeof *k);
    k->fd = -1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return -1;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    while (now() < end) {
        k->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (connect(k->fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            k->c = exec_client_new(&cbs, k);
            if (pump(k, end - now(), got_hello) == 0)
                return 0;
            conn_close(k);
        } else {
            close(k->fd);
            k->fd = -1;
        }
        sleep_ms(20);
    }
    return -1;
}

static inline uint32_t
conn_spawn(conn_t *k, const char *cmd)
{
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "proc.spawn");
    json_set_str(req, "cmd", cmd);
    k->ch = exec_client_open(k->c, req, NULL);
    json_object_put(req);
    return k->ch;
}

/* Runs cmd in the sandbox; returns the CLOSE result (caller puts it), stdout into *out. */
static inline json_object *
run(const char *sock, const char *cmd, double secs, char **out)
{
    conn_t k;
    if (conn_open(&k, sock, 10) < 0)
        return NULL;
    conn_spawn(&k, cmd);
    json_object *res = NULL;
    if (pump(&k, secs, got_result) == 0) {
        res = json_object_get(k.result);
        if (out)
            *out = xstrndup(k.out.data ? k.out.data : "", k.out.len);
    }
    conn_close(&k);
    return res;
}

/* Runs cmd and asserts it exits 0; returns its stdout (caller frees). */
static inline char *
run_ok(const sandbox_t *sb, const char *cmd)
{
    char *out = NULL;
    json_object *res = run(sb->socket_path, cmd, 20, &out);
    assert_non_null(res);
    if (json_get_int(res, "exit_code", -1) != 0)
        fail_msg("'%s' -> %s, stdout: %s", cmd, json_object_to_json_string(res), out);
    json_object_put(res);
    return out;
}

#endif
