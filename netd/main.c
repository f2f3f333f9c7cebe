/* main.c — sandpipe-netd: options, start-up, the loop. See netd.h for what it is. */
#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"
#include "loop.h"
#include "netd.h"
#include "nflog.h"
#include "nft_rules.h"
#include "proxy.h"
#include "resolver.h"
#include "sandboxes.h"
#include "verdict.h"
#include "veth.h"

netd_cfg_t g_netd;

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: sandpipe-netd --control PATH --state-dir DIR [options]\n"
            "  The sandboxes' network (docs/operations.md, \"Network\"). Runs as root.\n"
            "  --control PATH        the gateways' unix socket (made 0600)\n"
            "  --state-dir DIR       attached sandboxes, restored after a restart\n"
            "  --table NAME          nftables table (inet family; default sandpipe)\n"
            "  --ifprefix P          host ends of the sandboxes' veth pairs: P<n> (default spn)\n"
            "  --pool CIDR           the sandboxes' addresses, a /30 each (default 10.88.0.0/16)\n"
            "  --resolver IP[:PORT]  where DNS goes (repeatable, at most %d; default: the\n"
            "                        nameservers of /etc/resolv.conf)\n"
            "  --deny CIDR           never reachable from any sandbox (repeatable)\n"
            "  --allow-private CIDR  open a built-in denied range, or part of one (repeatable)\n"
            "  --max-conns N         open TCP connections per sandbox (default 256)\n"
            "  --bandwidth BYTES     per sandbox and direction, a second (default 0: unlimited)\n"
            "  --proxy-port N, --dns-port N   where the redirected traffic arrives (default: free\n"
            "                        ports)\n"
            "  --log-group N         NFLOG group of the refusals at the handshake (default: one\n"
            "                        derived from the table's name)\n",
            NETD_RESOLVERS_MAX);
}

static int
add_resolver(const char *s)
{
    if (g_netd.nresolvers >= NETD_RESOLVERS_MAX)
        return -1;
    char ip[64];
    unsigned port = 53;
    const char *colon = strchr(s, ':');
    snprintf(ip, sizeof ip, "%.*s", colon ? (int)(colon - s) : (int)strlen(s), s);
    if (colon && (sscanf(colon + 1, "%u", &port) != 1 || port == 0 || port > 65535))
        return -1;
    struct sockaddr_in *a = &g_netd.resolvers[g_netd.nresolvers];
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, ip, &a->sin_addr) != 1)
        return -1;
    g_netd.nresolvers++;
    return 0;
}

static void
resolvers_from_resolv_conf(void)
{
    FILE *f = fopen("/etc/resolv.conf", "re");
    char line[256], ip[64];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, " nameserver %63s", ip) == 1 && !strchr(ip, ':'))
            add_resolver(ip);
    if (f)
        fclose(f);
}

static int
add_cidr(net_list_t *l, const char *s)
{
    net_cidr_t c;
    if (net_cidr_parse(s, &c) < 0)
        return -1;
    l->cidr = realloc(l->cidr, (size_t)(l->ncidr + 1) * sizeof *l->cidr);
    if (!l->cidr)
        abort();
    l->cidr[l->ncidr++] = c;
    return 0;
}

/* A TCP port that is bound and never listened on: a SYN redirected there is answered with a
 * reset by the kernel, which the sandbox sees as "connection refused". Kept open for life. */
static int
closed_port(err_t *err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t al = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) < 0)
        return err_set(err, errno, "closed port: %s", strerror(errno));
    g_netd.closed_port = ntohs(a.sin_port);
    return 0;
}

void
netd_sandbox_gone(struct netd_sb *sb)
{
    proxy_forget(sb);
    resolver_forget(sb);
}

static void
tick(void)
{
    static double last_sweep;
    proxy_tick();
    resolver_tick();
    if (netd_now() - last_sweep >= 1.0) {
        last_sweep = netd_now();
        verdict_refresh_local();
        sandboxes_sweep();
    }
}

static void
on_signal(int sig)
{
    (void)sig;
    loop_stop();
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"control", required_argument, 0, 'c'},
        {"state-dir", required_argument, 0, 's'},
        {"table", required_argument, 0, 't'},
        {"ifprefix", required_argument, 0, 'i'},
        {"pool", required_argument, 0, 'p'},
        {"resolver", required_argument, 0, 'r'},
        {"deny", required_argument, 0, 'd'},
        {"allow-private", required_argument, 0, 'a'},
        {"max-conns", required_argument, 0, 'm'},
        {"bandwidth", required_argument, 0, 'b'},
        {"proxy-port", required_argument, 0, 'P'},
        {"log-group", required_argument, 0, 'L'},
        {"dns-port", required_argument, 0, 'D'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    g_netd.table = "sandpipe";
    g_netd.ifprefix = "spn";
    g_netd.max_conns = 256;
    net_cidr_parse("10.88.0.0/16", &g_netd.pool);
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (o) {
        case 'c': g_netd.control_path = optarg; break;
        case 's': g_netd.state_dir = optarg; break;
        case 't': g_netd.table = optarg; break;
        case 'i': g_netd.ifprefix = optarg; break;
        case 'p': bad = net_cidr_parse(optarg, &g_netd.pool); break;
        case 'r': bad = add_resolver(optarg); break;
        case 'd': bad = add_cidr(&g_netd.deny, optarg); break;
        case 'a': bad = add_cidr(&g_netd.allow_private, optarg); break;
        case 'm':
            g_netd.max_conns = atoi(optarg);
            bad = g_netd.max_conns < 1;
            break;
        case 'b':
            g_netd.bandwidth = atoll(optarg);
            bad = g_netd.bandwidth < 0;
            break;
        case 'P': g_netd.proxy_port = (uint16_t)atoi(optarg); break;
        case 'D': g_netd.dns_port = (uint16_t)atoi(optarg); break;
        case 'L':
            g_netd.log_group = (uint16_t)atoi(optarg);
            bad = g_netd.log_group == 0;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (bad) {
            fprintf(stderr, "sandpipe-netd: bad value for --%s: %s\n",
                    opts[optind > 0 ? 0 : 0].name, optarg);
            return 2;
        }
    }
    if (!g_netd.control_path || !g_netd.state_dir) {
        usage(stderr);
        return 2;
    }
    if (strlen(g_netd.ifprefix) < 1 || strlen(g_netd.ifprefix) > 8 || strlen(g_netd.table) < 1 ||
        strlen(g_netd.table) > 32 ||
        strspn(g_netd.ifprefix, "abcdefghijklmnopqrstuvwxyz0123456789") !=
            strlen(g_netd.ifprefix) ||
        strspn(g_netd.table, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(g_netd.table)) {
        fprintf(stderr,
                "sandpipe-netd: --ifprefix is 1 to 8 of [a-z0-9], --table 1 to 32 of [a-z0-9_]\n");
        return 2;
    }
    if (g_netd.log_group == 0) { /* one of its own per table: several netds on one host */
        uint32_t hsh = 2166136261u;
        for (const char *c = g_netd.table; *c; c++)
            hsh = (hsh ^ (uint8_t)*c) * 16777619u;
        g_netd.log_group = (uint16_t)(1000 + hsh % 60000);
    }
    if (g_netd.nresolvers == 0)
        resolvers_from_resolv_conf();
    if (geteuid() != 0) {
        fprintf(stderr, "sandpipe-netd: needs root (veth pairs, nftables, other namespaces)\n");
        return 1;
    }
    struct rlimit rl = {65536, 65536};
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        getrlimit(RLIMIT_NOFILE, &rl);
    /* two fds a connection, and room kept for the resolver, control and netlink */
    g_netd.max_total_conns = rl.rlim_cur > 2048 ? (int)(rl.rlim_cur - 1024) / 2 : 256;
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    mkdir(g_netd.state_dir, 0700);
    err_t err = {0};
    if (loop_init() < 0 || veth_init(&err) < 0 || sandboxes_init(&err) < 0 ||
        verdict_init(&err) < 0 || proxy_listen(&err) < 0 || resolver_listen(&err) < 0 ||
        closed_port(&err) < 0 || nflog_listen(&err) < 0 || nft_rules_setup(&err) < 0 ||
        control_listen(&err) < 0) {
        fprintf(stderr, "sandpipe-netd: %s\n", err.msg[0] ? err.msg : strerror(errno));
        return 1;
    }
    verdict_push_hard();
    sandboxes_restore();
    char pool[32];
    net_cidr_format(&g_netd.pool, pool, sizeof pool);
    fprintf(stderr,
            "sandpipe-netd: ready on %s (table inet %s, interfaces %s*, pool %s, proxy :%u, dns "
            ":%u, %d resolver(s))\n",
            g_netd.control_path, g_netd.table, g_netd.ifprefix, pool, g_netd.proxy_port,
            g_netd.dns_port, g_netd.nresolvers);
    loop_run(tick, 50);
    /* The rules stay while any sandbox's veth does: without them its host end would admit it
     * to the host. A restarted netd makes them anew and takes the sandboxes back. */
    sandboxes_sweep();
    if (!sandboxes_first())
        nft_rules_teardown();
    else
        nft_rules_park();
    unlink(g_netd.control_path);
    fprintf(stderr, "sandpipe-netd: stopped\n");
    return 0;
}
