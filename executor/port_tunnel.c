/* port_tunnel.c — port.connect. See port_tunnel.h.
 *
 * A tunnel is connecting (fd watched for EPOLLOUT, the deadline timer running, client DATA
 * queued), then relaying: EPOLLIN while the app may still send and the channel has credit,
 * EPOLLOUT while client bytes wait for the socket. It ends with a CLOSE once both directions
 * have ended (the app's EOF passed on as EOF, the client's as shutdown(SHUT_WR)), at the first
 * socket error, or at once on the client's CLOSE. Freed after the current loop batch, as its
 * watch may still have an event in it. */
#include "port_tunnel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "executor.h"
#include "frame.h"
#include "json_util.h"
#include "port_target.h"
#include "xalloc.h"

#define READ_MAX   FRAME_DATA_CHUNK /* most read from the app in one wake-up */
#define READ_CHUNK (64u * 1024)

typedef struct {
    channel_t *ch;
    int fd; /* -1 between attempts */
    watch_t w;
    ltimer_t deadline; /* connecting only */
    uint16_t port;
    port_target_t targets[PORT_TARGETS_MAX];
    size_t ntargets, tried;
    bool table_read, connected;
    buf_t to_app;      /* client DATA not yet written to the socket (within its credit) */
    uint64_t sent;     /* bytes written to the app */
    uint64_t received; /* bytes read from the app */
    bool client_eof;   /* the client's EOF came */
    bool app_shut;     /* ... and was passed on: shutdown(SHUT_WR) */
    bool app_eof;      /* the app's EOF came (and went to the client as EOF) */
    int reset;         /* the app reset the connection before it was seen made */
} tunnel_t;

static unsigned open_tunnels;

static json_object *
counts(const tunnel_t *t)
{
    json_object *r = json_object_new_object();
    json_set_bool(r, "ok", true);
    json_set_int(r, "sent", (int64_t)t->sent);
    json_set_int(r, "received", (int64_t)t->received);
    return r;
}

static void
close_socket(tunnel_t *t)
{
    if (t->fd < 0)
        return;
    loop_watch_del(g_exec.loop, &t->w);
    close(t->fd);
    t->fd = -1;
}

static void
tunnel_free(void *p)
{
    tunnel_t *t = p;
    buf_free(&t->to_app);
    free(t);
}

/* Closes the socket and the channel (result: its CLOSE, taken). */
static void
tunnel_end(tunnel_t *t, json_object *result)
{
    channel_t *ch = t->ch;
    ch->owner = NULL;
    close_socket(t);
    loop_timer_stop(g_exec.loop, &t->deadline);
    open_tunnels--;
    loop_defer_free(g_exec.loop, t, tunnel_free);
    chan_close(ch, result);
}

static void
tunnel_fail(tunnel_t *t, int code, const char *msg)
{
    tunnel_end(t, json_error_new(code, msg));
}

/* A socket error after the connection: the bytes before it went out; the CLOSE says so. */
static void
tunnel_reset(tunnel_t *t, int e)
{
    json_object *r = counts(t);
    json_set_bool(r, "reset", true);
    json_set_str(r, "reason", strerror(e));
    tunnel_end(t, r);
}

static void
update_events(tunnel_t *t)
{
    uint32_t ev = 0;
    if (!t->app_eof && chan_credit(t->ch) > 0)
        ev |= EPOLLIN;
    if (t->to_app.len)
        ev |= EPOLLOUT;
    loop_watch_set(g_exec.loop, &t->w, ev);
}

/* Writes queued client bytes; grants the client what went out. 0, or -errno. */
static int
flush_to_app(tunnel_t *t)
{
    size_t written = 0;
    int rc = 0;
    while (t->to_app.len) {
        ssize_t n = send(t->fd, t->to_app.data, t->to_app.len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = errno == EAGAIN ? 0 : -errno;
            break;
        }
        buf_consume(&t->to_app, (size_t)n);
        written += (size_t)n;
    }
    t->sent += written;
    if (written)
        chan_grant(t->ch, written);
    if (rc < 0)
        return rc;
    if (t->client_eof && !t->to_app.len && !t->app_shut) {
        t->app_shut = true;
        if (shutdown(t->fd, SHUT_WR) < 0 && errno != ENOTCONN)
            return -errno;
    }
    return 0;
}

/* Reads what the app sent, within the channel's credit. 0, or -errno. */
static int
read_from_app(tunnel_t *t)
{
    static char chunk[READ_CHUNK];
    size_t budget = READ_MAX;
    while (!t->app_eof && budget && chan_credit(t->ch) > 0) {
        size_t want = sizeof chunk < budget ? sizeof chunk : budget;
        if ((int64_t)want > chan_credit(t->ch))
            want = (size_t)chan_credit(t->ch);
        ssize_t n = recv(t->fd, chunk, want, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        if (n < 0)
            return -errno;
        if (n == 0 && t->reset)
            return -t->reset; /* its bytes were read: now the reset */
        if (n == 0) {
            t->app_eof = true;
            chan_send_eof(t->ch);
            break;
        }
        chan_send_data(t->ch, 0, chunk, (size_t)n);
        t->received += (uint64_t)n;
        budget -= (size_t)n;
    }
    return 0;
}

/* After any progress: the CLOSE once both directions ended, else the next events. */
static void
relay_step(tunnel_t *t)
{
    if (t->app_eof && t->app_shut)
        tunnel_end(t, counts(t));
    else
        update_events(t);
}

static void try_next_target(tunnel_t *t);

static void
on_connected(tunnel_t *t)
{
    t->connected = true;
    loop_timer_stop(g_exec.loop, &t->deadline);
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "connected");
    json_set_str(ev, "address", t->targets[t->tried - 1].text);
    chan_send_json(t->ch, ev);
    json_object_put(ev);
    int rc = flush_to_app(t); /* what the client sent before the connection */
    if (rc < 0)
        tunnel_reset(t, -rc);
    else
        relay_step(t);
}

static void
on_socket(watch_t *w, uint32_t events)
{
    tunnel_t *t = w->data;
    if (!t->connected) {
        int e = 0;
        socklen_t len = sizeof e;
        struct sockaddr_storage peer;
        socklen_t plen = sizeof peer;
        if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
            e = errno;
        if (!e && getpeername(t->fd, (struct sockaddr *)&peer, &plen) < 0)
            return; /* not connected yet (ENOTCONN): keep waiting */
        if (e == ECONNRESET || e == EPIPE) {
            /* made, then reset before this wake-up (refused is ECONNREFUSED): its bytes are
             * still there to read, and reading them ends in EOF, as SO_ERROR took the error */
            t->reset = e;
            on_connected(t);
        } else if (e) {
            close_socket(t);
            try_next_target(t);
        } else {
            on_connected(t);
        }
        return;
    }
    int rc = 0;
    if (events & EPOLLOUT)
        rc = flush_to_app(t);
    if (rc == 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        rc = read_from_app(t);
    if (rc == 0 && (events & EPOLLERR) && !(t->w.events & EPOLLIN)) {
        int e = 0;
        socklen_t len = sizeof e;
        getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &e, &len);
        rc = e ? -e : 0;
    }
    if (rc < 0)
        tunnel_reset(t, -rc);
    else
        relay_step(t);
}

/* Connects to the next address; past the last, nothing listens. */
static void
try_next_target(tunnel_t *t)
{
    for (;;) {
        if (t->tried == t->ntargets && !t->table_read) {
            t->table_read = true;
            t->ntargets += port_targets_from_table(t->port, t->targets + t->ntargets,
                                                   PORT_TARGETS_MAX - t->ntargets);
        }
        if (t->tried == t->ntargets) {
            char msg[64];
            snprintf(msg, sizeof msg, "nothing listens on port %u", t->port);
            tunnel_fail(t, ERR_NOT_FOUND, msg);
            return;
        }
        const port_target_t *g = &t->targets[t->tried++];
        int fd = socket(g->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "socket: %s", strerror(errno));
            tunnel_fail(t, ERR_INTERNAL, msg);
            return;
        }
        int rc;
        do
            rc = connect(fd, (const struct sockaddr *)&g->sa, g->len);
        while (rc < 0 && errno == EINTR);
        if (rc < 0 && errno != EINPROGRESS) {
            close(fd); /* refused, or no such address here (no IPv6): the next one */
            continue;
        }
        int werr = loop_watch_add(g_exec.loop, &t->w, fd, EPOLLOUT, on_socket, t);
        if (werr < 0) {
            close(fd);
            char msg[96];
            snprintf(msg, sizeof msg, "epoll: %s", strerror(-werr));
            tunnel_fail(t, ERR_INTERNAL, msg);
            return;
        }
        t->fd = fd;
        if (rc == 0)
            on_connected(t);
        return;
    }
}

static void
on_deadline(ltimer_t *tm)
{
    tunnel_t *t = tm->data;
    char msg[96];
    snprintf(msg, sizeof msg, "port %u accepted no connection within %d s", t->port,
             PORT_CONNECT_TIMEOUT_MS / 1000);
    tunnel_fail(t, ERR_BUSY, msg);
}

/* The client sent bytes or its EOF: on to the app once connected. */
static void
client_moved(tunnel_t *t)
{
    if (!t->connected)
        return;
    int rc = flush_to_app(t);
    if (rc < 0)
        tunnel_reset(t, -rc);
    else
        relay_step(t);
}

static void
on_client_data(channel_t *ch, const uint8_t *p, size_t n)
{
    tunnel_t *t = ch->owner;
    if (!t || t->client_eof)
        return;
    buf_append(&t->to_app, p, n); /* bounded by the credit granted */
    client_moved(t);
}

static void
on_client_eof(channel_t *ch)
{
    tunnel_t *t = ch->owner;
    if (!t || t->client_eof)
        return;
    t->client_eof = true;
    client_moved(t);
}

static void
on_client_resume(channel_t *ch)
{
    tunnel_t *t = ch->owner;
    if (t && t->connected)
        update_events(t);
}

/* The client's CLOSE (or its connection went away): the socket goes at once. */
static void
on_client_detach(channel_t *ch)
{
    tunnel_t *t = ch->owner;
    if (!t)
        return;
    json_object *r = counts(t);
    json_set_bool(r, "cancelled", true);
    tunnel_end(t, r);
}

static const channel_ops_t tunnel_ops = {
    .data = on_client_data,
    .eof = on_client_eof,
    .resume = on_client_resume,
    .detach = on_client_detach,
};

void
port_op_connect(channel_t *ch, json_object *req)
{
    json_object *jp = json_get(req, "port");
    int64_t port = jp && json_object_is_type(jp, json_type_int) ? json_object_get_int64(jp) : 0;
    if (port < 1 || port > 65535) {
        chan_close_error(ch, ERR_BAD_REQ, "\"port\" must be an integer from 1 to 65535");
        return;
    }
    if (open_tunnels >= PORT_TUNNELS_MAX) {
        char msg[96];
        snprintf(msg, sizeof msg, "at most %d port tunnels are open at once in a sandbox",
                 PORT_TUNNELS_MAX);
        chan_close_error(ch, ERR_BUSY, msg);
        return;
    }
    tunnel_t *t = xcalloc(1, sizeof *t);
    t->ch = ch;
    t->fd = -1;
    t->w.fd = -1;
    t->port = (uint16_t)port;
    open_tunnels++;
    ch->ops = &tunnel_ops;
    ch->owner = t;
    t->ntargets = port_targets_loopback(t->port, t->targets);
    loop_timer_start(g_exec.loop, &t->deadline, PORT_CONNECT_TIMEOUT_MS, on_deadline, t);
    try_next_target(t);
}
