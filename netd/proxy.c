/* proxy.c — see proxy.h. */
#include "proxy.h"

#include <arpa/inet.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loop.h"
#include "netd.h"
#include "sandboxes.h"
#include "verdict.h"
#include "sniff.h"
#include "xalloc.h"

#define RELAY_BUF       65536
#define SNIFF_WAIT      0.3 /* seconds a connection may say nothing before it is judged */
#define CONNECT_TIMEOUT 30.0

typedef enum { C_SNIFF, C_CONNECTING, C_RELAY } cstate_t;

typedef struct conn {
    loop_fd_t cl, up; /* the sandbox's side, the destination's side */
    struct conn *next, *prev;
    netd_sb_t *sb;
    struct sockaddr_in dst;
    char dest[24];
    cstate_t state;
    double deadline;
    /* to_up: the sandbox's bytes for the destination (the first ones are sniffed there);
     * to_cl: the destination's for the sandbox. [off, len) waits to be written. */
    unsigned char *to_up, *to_cl; /* RELAY_BUF each, made when first needed (a refused
                                   * connection costs none) */
    size_t up_off, up_len, cl_off, cl_len;
    bool cl_eof, up_eof, up_shut, cl_shut;
} conn_t;

static loop_fd_t listener;
static conn_t *conns;
static int nconns;         /* open, every sandbox's */
static bool accept_paused; /* at the global cap, or out of fds: resumed by conn_close, tick */

static void
conn_unlink(conn_t *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
}

/* Ends c; reset: the sandbox's side gets an RST (a refusal, a failed connect). */
static void
conn_close(conn_t *c, bool reset)
{
    conn_unlink(c);
    nconns--;
    if (accept_paused && nconns < g_netd.max_total_conns) {
        accept_paused = false;
        loop_set(&listener, EPOLLIN);
    }
    free(c->to_up);
    free(c->to_cl);
    c->to_up = c->to_cl = NULL;
    if (c->sb)
        c->sb->open_conns--;
    if (reset) {
        struct linger l = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->cl.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    loop_del(&c->cl);
    close(c->cl.fd);
    c->cl.fd = -1;
    if (c->up.fd >= 0) {
        loop_del(&c->up);
        close(c->up.fd);
        c->up.fd = -1;
    }
    loop_free_later(c);
}

static void
refuse(conn_t *c, const char *name, const char *why)
{
    sandboxes_refused(c->sb, "tcp", c->dest, name, why);
    conn_close(c, true);
}

/* How many bytes sb may move now in one direction (tokens: its bucket). */
static size_t
allowance(double *tokens, size_t want)
{
    if (g_netd.bandwidth <= 0)
        return want;
    if (*tokens < 1)
        return 0;
    return *tokens < (double)want ? (size_t)*tokens : want;
}

static void
update_interest(conn_t *c)
{
    if (c->state == C_SNIFF) {
        loop_set(&c->cl, EPOLLIN);
        return;
    }
    if (c->state == C_CONNECTING) {
        loop_set(&c->cl, 0);
        loop_set(&c->up, EPOLLOUT);
        return;
    }
    uint32_t cl = 0, up = 0;
    if (c->up_off == c->up_len && !c->cl_eof && allowance(&c->sb->tokens_out, 1))
        cl |= EPOLLIN;
    if (c->cl_off < c->cl_len)
        cl |= EPOLLOUT;
    if (c->cl_off == c->cl_len && !c->up_eof && allowance(&c->sb->tokens_in, 1))
        up |= EPOLLIN;
    if (c->up_off < c->up_len)
        up |= EPOLLOUT;
    loop_set(&c->cl, cl);
    loop_set(&c->up, up);
}

/* Writes what waits in buf to fd. -1 on a broken connection. */
static int
flush(int fd, const unsigned char *buf, size_t *off, size_t len)
{
    while (*off < len) {
        ssize_t n = send(fd, buf + *off, len - *off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        *off += (size_t)n;
    }
    return 0;
}

/* Reads into an empty buffer. 1 read, 0 nothing now, -1 EOF, -2 error. */
static int
fill(int fd, unsigned char *buf, size_t *off, size_t *len, double *tokens, uint64_t *count)
{
    size_t want = allowance(tokens, RELAY_BUF);
    if (want == 0)
        return 0;
    ssize_t n = recv(fd, buf, want, MSG_DONTWAIT);
    if (n == 0)
        return -1;
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -2;
    *off = 0;
    *len = (size_t)n;
    *count += (uint64_t)n;
    if (g_netd.bandwidth > 0)
        *tokens -= (double)n;
    return 1;
}

/* After any progress: half-closes where one side ended and its bytes are through; ends c when
 * both have. Returns false when c is gone. */
static bool
settle(conn_t *c)
{
    if (c->cl_eof && c->up_off == c->up_len && !c->up_shut) {
        shutdown(c->up.fd, SHUT_WR);
        c->up_shut = true;
    }
    if (c->up_eof && c->cl_off == c->cl_len && !c->cl_shut) {
        shutdown(c->cl.fd, SHUT_WR);
        c->cl_shut = true;
    }
    if (c->up_shut && c->cl_shut) {
        conn_close(c, false);
        return false;
    }
    update_interest(c);
    return true;
}

static void
relay(conn_t *c, bool from_cl, uint32_t ev)
{
    netd_sb_t *sb = c->sb;
    if (from_cl) {
        if ((ev & EPOLLOUT) && flush(c->cl.fd, c->to_cl, &c->cl_off, c->cl_len) < 0) {
            conn_close(c, true);
            return;
        }
        if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && c->up_off == c->up_len && !c->cl_eof) {
            int r =
                fill(c->cl.fd, c->to_up, &c->up_off, &c->up_len, &sb->tokens_out, &sb->bytes_out);
            if (r == -2) {
                conn_close(c, true);
                return;
            }
            if (r == -1)
                c->cl_eof = true;
            if (r == 1 && flush(c->up.fd, c->to_up, &c->up_off, c->up_len) < 0) {
                conn_close(c, true);
                return;
            }
        }
    } else {
        if ((ev & EPOLLOUT) && flush(c->up.fd, c->to_up, &c->up_off, c->up_len) < 0) {
            conn_close(c, true);
            return;
        }
        if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && c->cl_off == c->cl_len && !c->up_eof) {
            int r = fill(c->up.fd, c->to_cl, &c->cl_off, &c->cl_len, &sb->tokens_in, &sb->bytes_in);
            if (r == -2) {
                conn_close(c, true);
                return;
            }
            if (r == -1)
                c->up_eof = true;
            if (r == 1 && flush(c->cl.fd, c->to_cl, &c->cl_off, c->cl_len) < 0) {
                conn_close(c, true);
                return;
            }
        }
    }
    settle(c);
}

static void on_up(loop_fd_t *h, uint32_t ev);

/* The policy said yes: connect to the destination, from the host. */
static void
connect_out(conn_t *c)
{
    if (!c->to_up)
        c->to_up = xmalloc(RELAY_BUF);
    c->to_cl = xmalloc(RELAY_BUF);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        conn_close(c, true);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->up.fd = fd;
    c->up.cb = on_up;
    c->up.data = c;
    loop_add(&c->up, 0);
    c->state = C_CONNECTING;
    c->deadline = netd_now() + CONNECT_TIMEOUT;
    c->sb->connections++;
    if (connect(fd, (struct sockaddr *)&c->dst, sizeof c->dst) < 0 && errno != EINPROGRESS) {
        conn_close(c, true);
        return;
    }
    update_interest(c);
}

/* Does buf begin as a TLS handshake record or an HTTP/1 request line would? */
static bool
looks_named(const unsigned char *buf, size_t len)
{
    if (len >= 2 && buf[0] == 22 && buf[1] == 3)
        return true;
    static const char *const methods[] = {"GET ",     "POST ",  "PUT ",     "HEAD ", "DELETE ",
                                          "OPTIONS ", "PATCH ", "CONNECT ", "TRACE "};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        size_t n = strlen(methods[i]);
        if (len >= n ? memcmp(buf, methods[i], n) == 0 : memcmp(buf, methods[i], len) == 0)
            return true;
    }
    return false;
}

/* Decides with what was read so far (final: nothing more will be waited for). */
static void
judge(conn_t *c, bool final)
{
    char name[SNIFF_NAME_MAX + 1] = "", why[160];
    const char *named = NULL;
    sniff_kind_t k = sniff_name(c->to_up, c->up_len, name, sizeof name);
    if (k == SNIFF_MORE && !final && c->up_len < SNIFF_PEEK_MAX)
        return;
    /* A name decides here. A start that is TLS or HTTP but whose name cannot be read (an
     * absolute-form request, two Host lines, a head split past the wait) is refused: read as
     * "names nothing" it would pass on the address alone. */
    if ((k == SNIFF_OTHER || k == SNIFF_MORE) && looks_named(c->to_up, c->up_len)) {
        refuse(c, NULL, "a TLS or HTTP start whose host name cannot be read");
        return;
    }
    named = k == SNIFF_TLS || k == SNIFF_HTTP ? name : "";
    int v = verdict_tcp(c->sb, c->dst, named, why, sizeof why);
    if (v <= 0) {
        refuse(c, named, why);
        return;
    }
    connect_out(c);
}

static void
on_cl(loop_fd_t *h, uint32_t ev)
{
    conn_t *c = h->data;
    if (ev & EPOLLERR) { /* reset, or worse: nothing more will move on it */
        conn_close(c, true);
        return;
    }
    if (c->state == C_RELAY) {
        relay(c, true, ev);
        return;
    }
    if (c->state != C_SNIFF)
        return;
    ssize_t n = recv(h->fd, c->to_up + c->up_len, SNIFF_PEEK_MAX - c->up_len, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        conn_close(c, false); /* it went away before saying where */
        return;
    }
    if (n > 0) {
        c->up_len += (size_t)n;
        c->sb->bytes_out += (uint64_t)n;
    }
    judge(c, false);
}

static void
on_up(loop_fd_t *h, uint32_t ev)
{
    conn_t *c = h->data;
    if ((ev & EPOLLERR) && c->state == C_RELAY) {
        conn_close(c, true);
        return;
    }
    if (c->state == C_RELAY) {
        relay(c, false, ev);
        return;
    }
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    if (soerr) {
        conn_close(c, true); /* refused or unreachable out there: the same to the sandbox */
        return;
    }
    c->state = C_RELAY;
    if (flush(c->up.fd, c->to_up, &c->up_off, c->up_len) < 0) {
        conn_close(c, true);
        return;
    }
    settle(c);
}

static void
on_accept(loop_fd_t *h, uint32_t events)
{
    (void)events;
    for (int i = 0; i < 64; i++) {
        if (nconns >= g_netd.max_total_conns) { /* the host's cap: the backlog waits */
            accept_paused = true;
            loop_set(&listener, 0);
            return;
        }
        struct sockaddr_in peer;
        socklen_t pl = sizeof peer;
        int fd = accept4(h->fd, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) { /* back at the tick */
                accept_paused = true;
                loop_set(&listener, 0);
            }
            return;
        }
        struct sockaddr_in dst;
        socklen_t dl = sizeof dst;
        netd_sb_t *sb = peer.sin_family == AF_INET ? sandboxes_by_addr(peer.sin_addr) : NULL;
        if (!sb || getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &dst, &dl) < 0) {
            close(fd); /* not a sandbox's (a host process connecting here): nothing to relay */
            continue;
        }
        conn_t *c = xcalloc(1, sizeof *c);
        c->sb = sb;
        c->dst = dst;
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &dst.sin_addr, ip, sizeof ip);
        snprintf(c->dest, sizeof c->dest, "%s:%u", ip, ntohs(dst.sin_port));
        c->cl.fd = fd;
        c->cl.cb = on_cl;
        c->cl.data = c;
        c->up.fd = -1;
        nconns++;
        c->next = conns;
        if (conns)
            conns->prev = c;
        conns = c;
        sb->open_conns++;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        loop_add(&c->cl, 0);
        char why[160];
        if (sb->open_conns > g_netd.max_conns) {
            snprintf(why, sizeof why, "connection cap (%d open)", g_netd.max_conns);
            refuse(c, NULL, why);
            continue;
        }
        int v = verdict_tcp(sb, dst, NULL, why, sizeof why);
        if (v == 0) {
            refuse(c, NULL, why);
        } else if (v == 1) {
            connect_out(c);
        } else { /* its first bytes decide */
            c->to_up = xmalloc(RELAY_BUF);
            c->state = C_SNIFF;
            c->deadline = netd_now() + SNIFF_WAIT;
            update_interest(c);
        }
    }
}

int
proxy_listen(err_t *err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(g_netd.proxy_port)};
    if (fd < 0)
        return err_set(err, errno, "socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    socklen_t al = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 1024) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
        int e = err_set(err, errno, "proxy port %u: %s", g_netd.proxy_port, strerror(errno));
        close(fd);
        return e;
    }
    g_netd.proxy_port = ntohs(a.sin_port);
    listener.fd = fd;
    listener.cb = on_accept;
    return loop_add(&listener, EPOLLIN);
}

void
proxy_tick(void)
{
    static double last;
    if (accept_paused && nconns < g_netd.max_total_conns) {
        accept_paused = false;
        loop_set(&listener, EPOLLIN);
    }
    double now = netd_now(), dt = last ? now - last : 0;
    last = now;
    if (g_netd.bandwidth > 0) /* refill: at most one second's worth waits */
        for (netd_sb_t *sb = sandboxes_first(); sb; sb = sb->next) {
            double cap = (double)g_netd.bandwidth, add = cap * dt;
            sb->tokens_out = sb->tokens_out + add > cap ? cap : sb->tokens_out + add;
            sb->tokens_in = sb->tokens_in + add > cap ? cap : sb->tokens_in + add;
        }
    for (conn_t *c = conns, *next; c; c = next) {
        next = c->next;
        if (c->state == C_SNIFF && now >= c->deadline)
            judge(c, true);
        else if (c->state == C_CONNECTING && now >= c->deadline)
            conn_close(c, true);
        else if (c->state == C_RELAY && g_netd.bandwidth > 0)
            update_interest(c);
    }
}

void
proxy_forget(netd_sb_t *sb)
{
    for (conn_t *c = conns, *next; c; c = next) {
        next = c->next;
        if (c->sb == sb)
            conn_close(c, true);
    }
}
