/* veth.c — see veth.h. */
#include "veth.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* MNL_SOCKET_BUFFER_SIZE is a run-time value (the page size): a fixed size, no VLA. */
#define NL_BUF 8192

static int host_ns = -1;
static struct stat host_ns_st;

int
veth_init(err_t *err)
{
    host_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (host_ns < 0 || fstat(host_ns, &host_ns_st) < 0)
        return err_set(err, errno, "/proc/self/ns/net: %s", strerror(errno));
    return 0;
}

bool
veth_is_host_netns(int netns_fd)
{
    struct stat st;
    return fstat(netns_fd, &st) < 0 ||
           (st.st_dev == host_ns_st.st_dev && st.st_ino == host_ns_st.st_ino);
}

/* One request, its ACK (or error) read back. */
static int
nl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh, const char *what, err_t *err)
{
    static uint32_t seq;
    char buf[NL_BUF];
    nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
    nlh->nlmsg_seq = ++seq ? seq : ++seq;
    uint32_t portid = mnl_socket_get_portid(nl);
    if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
        return err_set(err, errno, "netlink %s: %s", what, strerror(errno));
    for (;;) {
        ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof buf);
        if (n < 0)
            return err_set(err, errno, "netlink %s: %s", what, strerror(errno));
        int r = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, portid, NULL, NULL);
        if (r < 0)
            return err_set(err, errno, "netlink %s: %s", what, strerror(errno));
        if (r == MNL_CB_STOP)
            return 0;
    }
}

static struct mnl_socket *
nl_open(err_t *err)
{
    struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
    if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
        err_set(err, errno, "netlink socket: %s", strerror(errno));
        if (nl)
            mnl_socket_close(nl);
        return NULL;
    }
    return nl;
}

static int
link_set_up(struct mnl_socket *nl, int ifindex, err_t *err)
{
    char buf[NL_BUF];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_NEWLINK;
    struct ifinfomsg *ifm = mnl_nlmsg_put_extra_header(nlh, sizeof *ifm);
    ifm->ifi_family = AF_UNSPEC;
    ifm->ifi_index = ifindex;
    ifm->ifi_change = IFF_UP;
    ifm->ifi_flags = IFF_UP;
    return nl_talk(nl, nlh, "link up", err);
}

static int
addr_add(struct mnl_socket *nl, int ifindex, struct in_addr a, int prefix, err_t *err)
{
    char buf[NL_BUF];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_NEWADDR;
    nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
    struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof *ifa);
    ifa->ifa_family = AF_INET;
    ifa->ifa_prefixlen = (unsigned char)prefix;
    ifa->ifa_scope = RT_SCOPE_UNIVERSE;
    ifa->ifa_index = (unsigned)ifindex;
    mnl_attr_put_u32(nlh, IFA_LOCAL, a.s_addr);
    mnl_attr_put_u32(nlh, IFA_ADDRESS, a.s_addr);
    return nl_talk(nl, nlh, "address", err);
}

static int
route_default(struct mnl_socket *nl, int ifindex, struct in_addr gw, err_t *err)
{
    char buf[NL_BUF];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_NEWROUTE;
    nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
    struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof *rtm);
    rtm->rtm_family = AF_INET;
    rtm->rtm_dst_len = 0;
    rtm->rtm_table = RT_TABLE_MAIN;
    rtm->rtm_protocol = RTPROT_STATIC;
    rtm->rtm_scope = RT_SCOPE_UNIVERSE;
    rtm->rtm_type = RTN_UNICAST;
    mnl_attr_put_u32(nlh, RTA_GATEWAY, gw.s_addr);
    mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
    return nl_talk(nl, nlh, "default route", err);
}

/* The pair, its peer created straight inside the sandbox's namespace as eth0. */
static int
pair_create(struct mnl_socket *nl, const char *host_if, int netns_fd, err_t *err)
{
    char buf[NL_BUF];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_NEWLINK;
    nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
    struct ifinfomsg *ifm = mnl_nlmsg_put_extra_header(nlh, sizeof *ifm);
    ifm->ifi_family = AF_UNSPEC;
    mnl_attr_put_strz(nlh, IFLA_IFNAME, host_if);
    struct nlattr *info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
    mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
    struct nlattr *data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
    struct nlattr *peer = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
    struct ifinfomsg *pifm = mnl_nlmsg_put_extra_header(nlh, sizeof *pifm);
    memset(pifm, 0, sizeof *pifm);
    pifm->ifi_family = AF_UNSPEC;
    mnl_attr_put_strz(nlh, IFLA_IFNAME, VETH_SANDBOX_IF);
    mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)netns_fd);
    mnl_attr_nest_end(nlh, peer);
    mnl_attr_nest_end(nlh, data);
    mnl_attr_nest_end(nlh, info);
    return nl_talk(nl, nlh, "veth create", err);
}

/* A sysctl of the namespace netd is in now. Best effort. */
static void
sysctl_write(const char *path, const char *value)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, value, strlen(value)) < 0) {
        }
        close(fd);
    }
}

/* The sandbox's side, from inside its namespace. Returns with netd back in the host's. */
static int
configure_inside(int netns_fd, struct in_addr host_addr, struct in_addr sb_addr, int prefix,
                 err_t *err)
{
    if (setns(netns_fd, CLONE_NEWNET) < 0)
        return err_set(err, errno, "setns into the sandbox: %s", strerror(errno));
    int e = 0;
    struct mnl_socket *nl = nl_open(err);
    int ifindex = (int)if_nametoindex(VETH_SANDBOX_IF);
    /* No IPv6 at all inside: not even a link-local address next to the host's end. */
    sysctl_write("/proc/sys/net/ipv6/conf/" VETH_SANDBOX_IF "/disable_ipv6", "1");
    if (!nl)
        e = -1;
    else if (ifindex == 0)
        e = err_set(err, ENODEV, "no %s in the sandbox", VETH_SANDBOX_IF);
    if (e == 0)
        e = addr_add(nl, ifindex, sb_addr, prefix, err);
    if (e == 0)
        e = link_set_up(nl, ifindex, err);
    if (e == 0)
        e = route_default(nl, ifindex, host_addr, err);
    if (nl)
        mnl_socket_close(nl);
    if (setns(host_ns, CLONE_NEWNET) < 0) {
        /* Everything after this would act on a sandbox's network: stop here. */
        fprintf(stderr, "netd: cannot return to the host's network namespace: %s\n",
                strerror(errno));
        abort();
    }
    return e;
}

int
veth_attach(int netns_fd, const char *host_if, struct in_addr host_addr, struct in_addr sb_addr,
            int prefix, err_t *err)
{
    if (veth_is_host_netns(netns_fd))
        return err_set(err, EPERM, "that is the host's network namespace");
    if (strlen(host_if) >= IFNAMSIZ)
        return err_set(err, EINVAL, "interface name %s too long", host_if);
    struct mnl_socket *nl = nl_open(err);
    if (!nl)
        return -1;
    int e = pair_create(nl, host_if, netns_fd, err);
    int ifindex = e == 0 ? (int)if_nametoindex(host_if) : 0;
    if (e == 0 && ifindex == 0)
        e = err_set(err, ENODEV, "%s vanished", host_if);
    if (e == 0) {
        char p[96];
        snprintf(p, sizeof p, "/proc/sys/net/ipv6/conf/%s/disable_ipv6", host_if);
        sysctl_write(p, "1");
        e = addr_add(nl, ifindex, host_addr, prefix, err);
    }
    if (e == 0)
        e = link_set_up(nl, ifindex, err);
    if (e == 0)
        e = configure_inside(netns_fd, host_addr, sb_addr, prefix, err);
    mnl_socket_close(nl);
    if (e < 0 && ifindex)
        veth_detach(host_if, NULL);
    return e < 0 ? e : 0;
}

int
veth_detach(const char *host_if, err_t *err)
{
    int ifindex = (int)if_nametoindex(host_if);
    if (ifindex == 0)
        return 0;
    struct mnl_socket *nl = nl_open(err);
    if (!nl)
        return -1;
    char buf[NL_BUF];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_DELLINK;
    struct ifinfomsg *ifm = mnl_nlmsg_put_extra_header(nlh, sizeof *ifm);
    ifm->ifi_family = AF_UNSPEC;
    ifm->ifi_index = ifindex;
    int e = nl_talk(nl, nlh, "veth delete", err);
    mnl_socket_close(nl);
    return e < 0 && errno != ENODEV ? e : 0;
}

bool
veth_exists(const char *host_if)
{
    return if_nametoindex(host_if) != 0;
}
