/* sandbox_uid.h — host uids per sandbox, a block of its own from a configured range, so that
 * sandboxes are different users outside their namespaces too (no signals, ptrace or file access
 * between two of them even if one escaped its namespaces). A block is the ids a sandbox's user
 * namespace maps (root inside = its first uid, the way rootless containers map a subuid range:
 * sandbox_userns.h), or its first uid alone where only one is mapped.
 *
 * A block is claimed by creating <state_dir>/uids/<first uid> (O_EXCL; it holds the sandbox id) and
 * released when the sandbox's directory is purged. <state_dir>/uids is 0700, the gateway's
 * user. Claims are per state directory: gateways sharing a host must use distinct ranges (or one
 * state directory). Synchronous, a few syscalls; not thread-safe (the gateway has one thread). */
#ifndef SP_SANDBOX_UID_H
#define SP_SANDBOX_UID_H

#include <stdint.h>
#include <sys/types.h>

#include "err.h"

#define SANDBOX_UID_DIR "uids"

/* Claims a free block of width uids in [base, base + count) for sandbox id under state_dir
 * (which exists): blocks start at base + k * width; the first free one from a hash of the id on.
 * *uid is its first uid. A claim whose sandbox directory is gone and that
 * is older than a minute (a gateway died between claim and start) is taken over. Returns 0 with
 * *uid set, or < 0 with err set (ERR_BUSY when the range is full). */
int sandbox_uid_claim(const char *state_dir, const char *id, uid_t base, uint32_t count,
                      uint32_t width, uid_t *uid, err_t *err);

/* Releases uid if sandbox id holds it (a claim of another id is left alone). */
void sandbox_uid_release(const char *state_dir, const char *id, uid_t uid);

#endif
