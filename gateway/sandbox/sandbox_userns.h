/* sandbox_userns.h — a sandbox's user namespace mapping its whole block of host ids
 * (sandbox_uid.h): ids 0..count-1 inside are uid..uid+count-1 outside (gids likewise), so root
 * inside is the sandbox's own unprivileged host uid, and every id a package or `chown` uses
 * inside is one of the sandbox's, nobody's on the host. The way rootless containers map a
 * subuid range; writing a map wider than one id takes CAP_SETUID/CAP_SETGID, which the gateway
 * has and bwrap (unprivileged) has not: the gateway makes the namespace, bwrap joins it
 * (`--userns`).
 *
 * The namespace's owner is the block's first uid (a process of that uid has rights in it, and
 * in none of the host's), and no namespace can be made below it (max_user_namespaces 0 there:
 * what bwrap's --disable-userns does, which --userns cannot take). Nothing runs in it until
 * bwrap joins: the fd keeps it. */
#ifndef SP_SANDBOX_USERNS_H
#define SP_SANDBOX_USERNS_H

#include <stdint.h>
#include <sys/types.h>

#include "err.h"

/* Returns an fd of the new namespace (O_CLOEXEC), or < 0 with err set. Needs root. */
int sandbox_userns_open(uid_t uid, gid_t gid, uint32_t count, err_t *err);

#endif
