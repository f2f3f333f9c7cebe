/* resolver.c — see resolver.h. */
#include "resolver.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns_msg.h"
#include "loop.h"
#include "netd.h"
#include "sandboxes.h"
#include "verdict.h"
#include "xalloc.h"

#define PENDING_MAX      8192
#define PENDING_PER_SB   64
#define RESOLVER_TIMEOUT 2.0
#define TCP_QUERY_MAX    4096
#define TCP_IDLE         10.0
#define ANSWER_ADDRS_MAX 64
#define TCP_CONNS_PER_SB 16

typedef struct tcp_client {
    loop_fd_t h;
    struct tcp_client *next;
    netd_sb_t *sb;
    uint8_t in[TCP_QUERY_MAX + 2];
    size_t in_len;
    double idle_until;
    int npending; /* its queries in flight */
} tcp_client_t;

/* A query sent upstream: found by its id (by_id) and in the list of all of them. */
typedef struct pending {
    struct pending *next, *prev;
    uint16_t id;
    netd_sb_t *sb;
    struct sockaddr_in client; /* UDP: where the answer goes */
    tcp_client_t *tcp;         /* TCP: the connection it goes to instead */
    dns_query_t q;
    uint8_t *msg; /* the query as sent upstream (our id) */
    size_t len;
    int resolver;
    double deadline;
} pending_t;

static loop_fd_t udp, tcp_listener, upstream;
static pending_t *by_id[65536];
static pending_t *pending; /* every one, newest first */
static int npending;
static tcp_client_t *tcp_clients;

static void
pending_end(pending_t *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        pending = p->next;
    if (p->next)
        p->next->prev = p->prev;
    by_id[p->id] = NULL;
    if (p->sb)
        p->sb->dns_inflight--;
    if (p->tcp)
        p->tcp->npending--;
    free(p->msg);
    free(p);
    npending--;
}

static void
send_to_client(netd_sb_t *sb, const struct sockaddr_in *client, tcp_client_t *tcp,
               const uint8_t *msg, size_t len)
{
    (void)sb;
    if (tcp) {
        uint8_t hdr[2] = {(uint8_t)(len >> 8), (uint8_t)len};
        struct iovec iov[2] = {{hdr, 2}, {(void *)msg, len}};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
        sendmsg(tcp->h.fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        return;
    }
    sendto(udp.fd, msg, len, MSG_DONTWAIT, (const struct sockaddr *)client, sizeof *client);
}

static void
reply_rcode(netd_sb_t *sb, const struct sockaddr_in *client, tcp_client_t *tcp,
            const uint8_t *query, const dns_query_t *q, int rcode)
{
    uint8_t out[DNS_NAME_MAX + 64];
    size_t n = dns_build_reply(query, q, rcode, out, sizeof out);
    if (n)
        send_to_client(sb, client, tcp, out, n);
}

static void
send_upstream(pending_t *p)
{
    const struct sockaddr_in *r = &g_netd.resolvers[p->resolver];
    sendto(upstream.fd, p->msg, p->len, MSG_DONTWAIT, (const struct sockaddr *)r, sizeof *r);
    p->deadline = netd_now() + RESOLVER_TIMEOUT;
}

/* One query from sb (over UDP to client, or over tcp). */
static void
query(netd_sb_t *sb, const struct sockaddr_in *client, tcp_client_t *tcp, const uint8_t *msg,
      size_t len)
{
    dns_query_t q;
    if (dns_parse_query(msg, len, &q) < 0)
        return; /* not a query we can even answer: dropped */
    sb->dns_queries++;
    char why[160];
    if (q.qclass != DNS_CLASS_IN || verdict_name(sb, q.name, why, sizeof why) == 0) {
        if (q.qclass != DNS_CLASS_IN)
            snprintf(why, sizeof why, "not an Internet-class query");
        sandboxes_refused(sb, "dns", NULL, q.name, why);
        reply_rcode(sb, client, tcp, msg, &q, DNS_RCODE_REFUSED);
        return;
    }
    if (q.qtype == DNS_TYPE_AAAA) { /* no IPv6 in a sandbox: say there is none, at once */
        reply_rcode(sb, client, tcp, msg, &q, DNS_RCODE_NOERROR);
        return;
    }
    if (g_netd.nresolvers == 0 || npending >= PENDING_MAX || sb->dns_inflight >= PENDING_PER_SB) {
        reply_rcode(sb, client, tcp, msg, &q, DNS_RCODE_SERVFAIL);
        return;
    }
    uint16_t id;
    do {
        if (getrandom(&id, sizeof id, 0) != sizeof id)
            id = (uint16_t)rand();
    } while (by_id[id]);
    pending_t *p = xcalloc(1, sizeof *p);
    p->id = id;
    by_id[id] = p;
    p->next = pending;
    if (pending)
        pending->prev = p;
    pending = p;
    npending++;
    if (tcp)
        tcp->npending++;
    p->sb = sb;
    sb->dns_inflight++;
    if (client)
        p->client = *client;
    p->tcp = tcp;
    p->q = q;
    p->msg = xmalloc(len);
    memcpy(p->msg, msg, len);
    p->len = len;
    dns_set_id(p->msg, len, id);
    p->resolver = 0;
    send_upstream(p);
}

static void
on_udp(loop_fd_t *h, uint32_t events)
{
    (void)events;
    static uint8_t buf[DNS_MSG_MAX];
    for (int i = 0; i < 64; i++) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(h->fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0)
            return;
        netd_sb_t *sb = from.sin_family == AF_INET ? sandboxes_by_addr(from.sin_addr) : NULL;
        if (sb)
            query(sb, &from, NULL, buf, (size_t)n);
    }
}

static void
on_upstream(loop_fd_t *h, uint32_t events)
{
    (void)events;
    static uint8_t buf[DNS_MSG_MAX];
    for (int k = 0; k < 64; k++) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(h->fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0)
            return;
        if (n < 12)
            continue;
        uint16_t id = (uint16_t)(buf[0] << 8 | buf[1]);
        pending_t *p = by_id[id];
        const struct sockaddr_in *r = p ? &g_netd.resolvers[p->resolver] : NULL;
        if (!r || from.sin_addr.s_addr != r->sin_addr.s_addr || from.sin_port != r->sin_port)
            continue; /* not the answer we wait for (late, spoofed, another resolver's) */
        struct in_addr addrs[ANSWER_ADDRS_MAX];
        uint32_t ttls[ANSWER_ADDRS_MAX];
        int rcode = 0;
        dns_query_t q = p->q;
        q.id = id;
        int na = dns_answer_addrs(buf, (size_t)n, &q, addrs, ttls, ANSWER_ADDRS_MAX, &rcode);
        if (na < 0)
            continue; /* does not answer this question: the real answer may still come */
        for (int i = 0; i < na; i++)
            sandboxes_pin(p->sb, addrs[i], p->q.name, ttls[i]);
        dns_set_id(buf, (size_t)n, p->q.id);
        if (p->sb && (p->tcp || p->client.sin_family))
            send_to_client(p->sb, &p->client, p->tcp, buf, (size_t)n);
        pending_end(p);
    }
}

static void
tcp_close(tcp_client_t *c)
{
    for (tcp_client_t **pp = &tcp_clients; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    for (pending_t *p = pending, *next; p && c->npending; p = next) {
        next = p->next;
        if (p->tcp == c)
            pending_end(p);
    }
    loop_del(&c->h);
    close(c->h.fd);
    c->h.fd = -1;
    loop_free_later(c);
}

static void
on_tcp_client(loop_fd_t *h, uint32_t events)
{
    (void)events;
    tcp_client_t *c = h->data;
    ssize_t n = recv(h->fd, c->in + c->in_len, sizeof c->in - c->in_len, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        tcp_close(c);
        return;
    }
    if (n < 0)
        return;
    c->in_len += (size_t)n;
    c->idle_until = netd_now() + TCP_IDLE;
    while (c->in_len >= 2) {
        size_t len = (size_t)c->in[0] << 8 | c->in[1];
        if (len > TCP_QUERY_MAX || len < 12) {
            tcp_close(c);
            return;
        }
        if (c->in_len < 2 + len)
            break;
        query(c->sb, NULL, c, c->in + 2, len);
        memmove(c->in, c->in + 2 + len, c->in_len - 2 - len);
        c->in_len -= 2 + len;
    }
}

static void
on_tcp_accept(loop_fd_t *h, uint32_t events)
{
    (void)events;
    struct sockaddr_in peer;
    socklen_t pl = sizeof peer;
    int fd = accept4(h->fd, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    netd_sb_t *sb = peer.sin_family == AF_INET ? sandboxes_by_addr(peer.sin_addr) : NULL;
    int n = 0;
    for (tcp_client_t *c = tcp_clients; c; c = c->next)
        n += c->sb == sb;
    if (!sb || n >= TCP_CONNS_PER_SB) {
        close(fd);
        return;
    }
    tcp_client_t *c = xcalloc(1, sizeof *c);
    c->h.fd = fd;
    c->h.cb = on_tcp_client;
    c->h.data = c;
    c->sb = sb;
    c->idle_until = netd_now() + TCP_IDLE;
    c->next = tcp_clients;
    tcp_clients = c;
    loop_add(&c->h, EPOLLIN);
}

static int
bind_port(int type, uint16_t port, err_t *err)
{
    int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (fd < 0)
        return err_set(err, errno, "socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        (type == SOCK_STREAM && listen(fd, 256) < 0)) {
        int e = err_set(err, errno, "dns port %u: %s", port, strerror(errno));
        close(fd);
        return e;
    }
    return fd;
}

int
resolver_listen(err_t *err)
{
    int u = -1, t = -1;
    /* The same port number for UDP and TCP: with port 0 pick one where both are free. */
    for (int attempt = 0; attempt < 20 && t < 0; attempt++) {
        u = bind_port(SOCK_DGRAM, g_netd.dns_port, err);
        if (u < 0)
            return u;
        struct sockaddr_in a;
        socklen_t al = sizeof a;
        getsockname(u, (struct sockaddr *)&a, &al);
        t = bind_port(SOCK_STREAM, ntohs(a.sin_port), err);
        if (t < 0) {
            close(u);
            if (g_netd.dns_port)
                return t;
        } else {
            g_netd.dns_port = ntohs(a.sin_port);
        }
    }
    if (t < 0)
        return t;
    int up = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (up < 0)
        return err_set(err, errno, "socket: %s", strerror(errno));
    udp.fd = u;
    udp.cb = on_udp;
    tcp_listener.fd = t;
    tcp_listener.cb = on_tcp_accept;
    upstream.fd = up;
    upstream.cb = on_upstream;
    loop_add(&udp, EPOLLIN);
    loop_add(&tcp_listener, EPOLLIN);
    loop_add(&upstream, EPOLLIN);
    return 0;
}

void
resolver_tick(void)
{
    double now = netd_now();
    for (pending_t *p = pending, *next; p; p = next) {
        next = p->next;
        if (p->deadline > now)
            continue;
        if (p->resolver + 1 < g_netd.nresolvers) {
            p->resolver++;
            send_upstream(p);
            continue;
        }
        /* no resolver answered: say so rather than leave the sandbox waiting (the reply is
         * built in place over the query's copy: its question is the sandbox's) */
        dns_set_id(p->msg, p->len, p->q.id);
        if (p->sb)
            reply_rcode(p->sb, p->tcp ? NULL : &p->client, p->tcp, p->msg, &p->q,
                        DNS_RCODE_SERVFAIL);
        pending_end(p);
    }
    for (tcp_client_t *c = tcp_clients, *next; c; c = next) {
        next = c->next;
        if (c->idle_until < now)
            tcp_close(c);
    }
}

void
resolver_forget(netd_sb_t *sb)
{
    for (pending_t *p = pending, *next; p && sb->dns_inflight; p = next) {
        next = p->next;
        if (p->sb == sb)
            pending_end(p);
    }
    for (tcp_client_t *c = tcp_clients, *next; c; c = next) {
        next = c->next;
        if (c->sb == sb)
            tcp_close(c);
    }
}
