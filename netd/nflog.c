/* nflog.c — see nflog.h. */
#include "nflog.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "loop.h"
#include "netd.h"
#include "sandboxes.h"
#include "verdict.h"

#define NL_BUF 65536

static struct mnl_socket *nl;
static loop_fd_t h;

static int
config(uint8_t cmd_or_0, int mode, err_t *err)
{
    char buf[256];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
    nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof *g);
    g->nfgen_family = AF_UNSPEC;
    g->version = NFNETLINK_V0;
    g->res_id = htons(g_netd.log_group);
    if (mode) {
        struct nfulnl_msg_config_mode m = {.copy_range = htonl(64),
                                           .copy_mode = NFULNL_COPY_PACKET};
        mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof m, &m);
        /* each refusal at once, not batched for up to a second (the kernel's default) */
        mnl_attr_put_u32(nlh, NFULA_CFG_QTHRESH, htonl(1));
    } else {
        struct nfulnl_msg_config_cmd c = {.command = cmd_or_0};
        mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof c, &c);
    }
    if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
        return err_set(err, errno, "nflog config: %s", strerror(errno));
    ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof buf);
    if (n < 0 || mnl_cb_run(buf, (size_t)n, 0, mnl_socket_get_portid(nl), NULL, NULL) < 0)
        return err_set(err, errno, "nflog group %u: %s", g_netd.log_group, strerror(errno));
    return 0;
}

static int
on_attr(const struct nlattr *a, void *data)
{
    const struct nlattr **tb = data;
    int type = mnl_attr_get_type(a);
    if (type <= NFULA_MAX)
        tb[type] = a;
    return MNL_CB_OK;
}

/* One logged packet: the first of a TCP connection a sandbox was refused at the handshake. */
static int
on_packet(const struct nlmsghdr *nlh, void *data)
{
    (void)data;
    const struct nlattr *tb[NFULA_MAX + 1] = {0};
    mnl_attr_parse(nlh, sizeof(struct nfgenmsg), on_attr, tb);
    if (!tb[NFULA_PAYLOAD])
        return MNL_CB_OK;
    const uint8_t *p = mnl_attr_get_payload(tb[NFULA_PAYLOAD]);
    size_t len = mnl_attr_get_payload_len(tb[NFULA_PAYLOAD]);
    struct iphdr ip;
    if (len < sizeof ip)
        return MNL_CB_OK;
    memcpy(&ip, p, sizeof ip);
    size_t ihl = (size_t)ip.ihl * 4;
    if (ip.version != 4 || ip.protocol != IPPROTO_TCP || ihl < sizeof ip || len < ihl + 4)
        return MNL_CB_OK;
    uint16_t port;
    memcpy(&port, p + ihl + 2, 2);
    struct in_addr src = {.s_addr = ip.saddr};
    netd_sb_t *sb = sandboxes_by_addr(src);
    if (!sb)
        return MNL_CB_OK;
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = port, .sin_addr.s_addr = ip.daddr};
    char why[160], dest[32], a[INET_ADDRSTRLEN];
    if (verdict_tcp(sb, dst, "", why, sizeof why) != 0)
        snprintf(why, sizeof why, "refused at the handshake"); /* the rules were ahead of us */
    inet_ntop(AF_INET, &dst.sin_addr, a, sizeof a);
    snprintf(dest, sizeof dest, "%s:%u", a, ntohs(port));
    sandboxes_refused(sb, "tcp", dest, NULL, why);
    return MNL_CB_OK;
}

static void
on_readable(loop_fd_t *lh, uint32_t events)
{
    (void)lh;
    (void)events;
    static char buf[NL_BUF];
    for (int i = 0; i < 64; i++) {
        ssize_t n = recv(mnl_socket_get_fd(nl), buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0) /* ENOBUFS: a burst overflowed the socket; those refusals are lost */
            return;
        mnl_cb_run(buf, (size_t)n, 0, 0, on_packet, NULL);
    }
}

int
nflog_listen(err_t *err)
{
    nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
        return err_set(err, errno, "netlink (netfilter): %s", strerror(errno));
    int size = 1 << 20;
    setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    /* a group left bound by an earlier life of netd: unbind first (an error if none) */
    config(NFULNL_CFG_CMD_UNBIND, 0, NULL);
    int e = config(NFULNL_CFG_CMD_BIND, 0, err);
    if (e == 0)
        e = config(0, 1, err);
    if (e < 0)
        return e;
    h.fd = mnl_socket_get_fd(nl);
    h.cb = on_readable;
    return loop_add(&h, EPOLLIN);
}
