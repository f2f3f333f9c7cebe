/* port_target.c — the addresses port.connect tries. See port_target.h. */
#include "port_target.h"

#include <ifaddrs.h>
#include <string.h>

#include "port_table.h"
#include "port_scan.h"

static void
set_target(port_target_t *g, uint16_t port, int family, const void *addr)
{
    memset(g, 0, sizeof *g);
    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&g->sa;
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        memcpy(&in->sin_addr, addr, 4);
        g->len = sizeof *in;
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&g->sa;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        memcpy(&in6->sin6_addr, addr, 16);
        g->len = sizeof *in6;
    }
    inet_ntop(family, addr, g->text, sizeof g->text);
}

static const uint8_t ipv4_loopback[4] = {127, 0, 0, 1};

size_t
port_targets_loopback(uint16_t port, port_target_t out[2])
{
    set_target(&out[0], port, AF_INET, ipv4_loopback);
    set_target(&out[1], port, AF_INET6, &in6addr_loopback);
    return 2;
}

/* True when addr (family) is the sandbox's own: 127.0.0.0/8 (all of it is local), or an address
 * of one of its interfaces (ifs, getifaddrs). A v4-mapped IPv6 address is its IPv4 address. */
static bool
is_own_address(int family, const uint8_t *addr, const struct ifaddrs *ifs)
{
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (family == AF_INET6 && !memcmp(addr, v4_mapped, 12)) {
        family = AF_INET;
        addr += 12;
    }
    if (family == AF_INET && addr[0] == 127)
        return true;
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        const struct sockaddr *sa = i->ifa_addr;
        if (!sa || sa->sa_family != family)
            continue;
        const void *own = family == AF_INET
                              ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
                              : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (!memcmp(own, addr, family == AF_INET ? 4 : 16))
            return true;
    }
    return false;
}

size_t
port_targets_from_table(uint16_t port, port_target_t *out, size_t cap)
{
    port_table_t table = PORT_TABLE_INIT;
    struct ifaddrs *ifs = NULL;
    size_t n = 0;
    if (port_scan(&table) < 0 || getifaddrs(&ifs) < 0) {
        port_table_free(&table);
        return 0;
    }
    for (size_t i = 0; i < table.n && n < cap; i++) {
        const port_sock_t *s = &table.v[i];
        bool loopback = s->family == AF_INET ? !memcmp(s->addr, ipv4_loopback, 4)
                                             : !memcmp(s->addr, &in6addr_loopback, 16);
        if (s->port == port && !port_sock_is_wildcard(s) && !loopback &&
            is_own_address(s->family, s->addr, ifs))
            set_target(&out[n++], port, s->family, s->addr);
    }
    freeifaddrs(ifs);
    port_table_free(&table);
    return n;
}
