/* veth.h — a sandbox's link to the host: a veth pair whose host end (<prefix><n>) stays in the
 * host's namespace and whose other end is eth0 in the sandbox's own network namespace, with one
 * /30 between them and the host end as the sandbox's default route. Rtnetlink through libmnl;
 * the sandbox's side is configured from a netlink socket opened inside its namespace (setns
 * there and straight back: netd is single-threaded). Needs CAP_NET_ADMIN and CAP_SYS_ADMIN. */
#ifndef SP_VETH_H
#define SP_VETH_H

#include <netinet/in.h>
#include <stdbool.h>

#include "err.h"

#define VETH_SANDBOX_IF "eth0"

/* Once, at start: remembers the host's namespace (the one netd runs in). */
int veth_init(err_t *err);

/* Is netns_fd the host's own namespace (which a sandbox must never be given)? */
bool veth_is_host_netns(int netns_fd);

/* Creates the pair, addresses both ends (host_addr and sb_addr, in one /prefix), brings them up
 * and routes the sandbox's default through host_addr. Leaves nothing behind on failure. */
int veth_attach(int netns_fd, const char *host_if, struct in_addr host_addr, struct in_addr sb_addr,
                int prefix, err_t *err);

/* Deletes the pair by its host end (both ends go); 0 also when it is already gone. */
int veth_detach(const char *host_if, err_t *err);

/* Does the host end still exist (the pair dies with the sandbox's namespace)? */
bool veth_exists(const char *host_if);

#endif
