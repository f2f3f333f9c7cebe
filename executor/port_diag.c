/* port_diag.c — listening sockets from sock_diag. See port_diag.h. */
#include "port_diag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xalloc.h"

#define TCP_LISTEN_STATE 10 /* the kernel's TCP_LISTEN */
#define DIAG_RECV_BYTES  (32 * 1024)

static void
append(port_table_t *t, const port_sock_t *s)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    t->v[t->n++] = *s;
}

int
port_diag_parse(port_table_t *t, const void *msgs, size_t len, int family)
{
    const unsigned char *p = msgs, *end = p + len;
    while ((size_t)(end - p) >= sizeof(struct nlmsghdr)) {
        struct nlmsghdr h;
        memcpy(&h, p, sizeof h); /* p need not be aligned: bytes from anywhere */
        if (h.nlmsg_len < sizeof h || h.nlmsg_len > (size_t)(end - p))
            return -EBADMSG;
        const unsigned char *body = p + NLMSG_HDRLEN;
        size_t body_len = h.nlmsg_len > NLMSG_HDRLEN ? h.nlmsg_len - NLMSG_HDRLEN : 0;
        if (h.nlmsg_type == NLMSG_DONE)
            return 1;
        if (h.nlmsg_type == NLMSG_ERROR) {
            struct nlmsgerr e;
            if (body_len < sizeof e)
                return -EBADMSG;
            memcpy(&e, body, sizeof e);
            return e.error < 0 ? e.error : -EPROTO;
        }
        struct inet_diag_msg m;
        if (h.nlmsg_type == SOCK_DIAG_BY_FAMILY && body_len >= sizeof m) {
            memcpy(&m, body, sizeof m);
            if (m.idiag_family == family && m.idiag_state == TCP_LISTEN_STATE) {
                port_sock_t s = {
                    .family = family, .port = ntohs(m.id.idiag_sport), .inode = m.idiag_inode};
                /* idiag_src is in network order already, as port_sock_t keeps addresses */
                memcpy(s.addr, m.id.idiag_src, family == AF_INET ? 4 : 16);
                append(t, &s);
            }
        }
        size_t step = NLMSG_ALIGN(h.nlmsg_len);
        if (step >= (size_t)(end - p))
            break;
        p += step;
    }
    return 0;
}

int
port_diag_scan(port_table_t *t, int family)
{
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return -errno;
    struct {
        struct nlmsghdr h;
        struct inet_diag_req_v2 r;
    } req = {
        .h = {.nlmsg_len = sizeof req,
              .nlmsg_type = SOCK_DIAG_BY_FAMILY,
              .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
              .nlmsg_seq = 1},
        .r = {.sdiag_family = (unsigned char)family,
              .sdiag_protocol = IPPROTO_TCP,
              .idiag_states = 1u << TCP_LISTEN_STATE},
    };
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    size_t before = t->n;
    int rc =
        sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0 ? -errno : 0;
    char *in = rc == 0 ? xmalloc(DIAG_RECV_BYTES) : NULL;
    while (rc == 0) {
        ssize_t n = recv(fd, in, DIAG_RECV_BYTES, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : -EPROTO;
            break;
        }
        rc = port_diag_parse(t, in, (size_t)n, family);
    }
    free(in);
    close(fd);
    if (rc < 0) { /* none of a half-read dump: the caller reads /proc for this family */
        for (size_t i = before; i < t->n; i++)
            free(t->v[i].command);
        t->n = before;
        return rc;
    }
    return 0;
}
