/* sudo_broker.h — sudo inside a sandbox whose user namespace maps a block of ids (root inside
 * is the sandbox's own unprivileged host uid: gateway/sandbox/sandbox_userns.h).
 *
 * bwrap sets no_new_privs, so no setuid program (Debian's sudo) can raise a process's rights in
 * the sandbox. Instead the executor, started as root inside, leaves one process root before it
 * becomes the sandbox user: the broker, which runs what sandpipe's sudo (executor/sudo/) asks,
 * as the user it names, with the caller's stdin, stdout, stderr and directory, and returns the
 * exit status; the wire is executor/sudo/sudo_wire.h. Root inside holds Docker's default
 * capabilities in the sandbox's namespaces only (no CAP_SYS_ADMIN, CAP_SYS_PTRACE or
 * CAP_NET_ADMIN), under the sandbox's seccomp filter. */
#ifndef SP_SUDO_BROKER_H
#define SP_SUDO_BROKER_H

#include "err.h"

/* Starts the broker when we are root in a user namespace that maps a block of ids (nothing to
 * do otherwise: one uid, or root of the host, never a broker). Call before dropping privileges:
 * the broker keeps them. 0 started or not needed, < 0 with err set. */
int sudo_broker_start(err_t *err);

/* 1 if /proc/self/uid_map maps a block (root inside of a sandbox's own range), else 0. */
int sudo_block_mapped(void);

#endif
