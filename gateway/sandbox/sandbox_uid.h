/* sandbox_uid.h — one host uid per sandbox, from a configured range, so that sandboxes are
 * different users outside their namespaces too (no signals, ptrace or file access between two
 * of them even if one escaped its namespaces).
 *
 * A uid is claimed by creating <state_dir>/uids/<uid> (O_EXCL; it holds the sandbox id) and
 * released when the sandbox's directory is purged. <state_dir>/uids is 0700, the gateway's
 * user. Claims are per state directory: gateways sharing a host must use distinct ranges (or one
 * state directory). Synchronous, a few syscalls; not thread-safe (the gateway has one thread). */
#ifndef SP_SANDBOX_UID_H
#define SP_SANDBOX_UID_H

#include <stdint.h>
#include <sys/types.h>

#include "err.h"

#define SANDBOX_UID_DIR "uids"

/* Claims a free uid in [base, base + count) for sandbox id under state_dir (which exists):
 * the first free one from a hash of the id on. A claim whose sandbox directory is gone and that
 * is older than a minute (a gateway died between claim and start) is taken over. Returns 0 with
 * *uid set, or < 0 with err set (ERR_BUSY when the range is full). */
int sandbox_uid_claim(const char *state_dir, const char *id, uid_t base, uint32_t count, uid_t *uid,
                      err_t *err);

/* Releases uid if sandbox id holds it (a claim of another id is left alone). */
void sandbox_uid_release(const char *state_dir, const char *id, uid_t uid);

#endif
