/* sandbox_etc.h — the /etc of a host-profile bwrap sandbox: one read-only directory, bound once.
 *
 * A sandbox's /etc holds the host files provider_bwrap.c names (curated: no shadow, no keys) and
 * files generated for it (passwd, group, hosts, hostname; resolv.conf stays a data bind of its
 * own). They were a read-only bind each, and bwrap makes every bind then remounts it read-only:
 * with 34 of them, half of bwrap's start-up here (docs/benchmarks.md, issue 35). Now they are
 * copies in <state_dir>/.etc/etc-<signature>, made by the gateway, root's, directories 0755,
 * files with their host mode less set-id bits, symlinks as they are (a named entry that is a
 * symlink is followed, as a bind follows it), bound at /etc read-only. <state_dir>/.etc (a name
 * no sandbox id can have) is a tmpfs of its own, mounted by the gateway when it is not one yet,
 * so that a sandbox's mountinfo names the copy as "/etc-<signature>" on it, no host path (where
 * the gateway may not mount, the copies are plain directories and the path shows).
 *
 * The signature is SHA-256 of the named host entries' stat (device, inode, size, mode, mtime,
 * ctime: followed) and the generated texts, looked at again at most once a second: a host file
 * replaced or a directory's entries changed (ca-certificates updated) makes a new copy for the
 * sandboxes started after, while those running keep theirs; a file edited in place deep in a
 * named directory is seen only when its directory changes too.
 *
 * Old copies are removed (else every `ldconfig` leaves one, and after ~100 the tmpfs, which
 * outlives the gateway, is full and no sandbox starts): when a version is made, and at a
 * gateway's first call, each etc-* entry of the store but the current one is removed unless a
 * mount namespace binds it (a root field of some /proc/PID/mountinfo names it: each namespace
 * read once; a vanished or exiting pid skipped; a live one unreadable, or no /proc, and nothing
 * is removed this time) or its mtime is under a minute old. The gateway sets a copy's mtime
 * when it hands it out after its once-a-second look, and a .tmp- being built is written to, so
 * the minute covers a sandbox given a path and not yet bound, of this gateway or another one
 * sharing the store (takeover). This relies on the gateways of a store seeing every sandbox in
 * /proc: they share the host's pid namespace, as they must to find sandboxes by pid. Races that
 * remain: a bwrap that binds its /etc more than a minute after it was handed the path (a
 * frozen gateway) finds it gone and fails to start; two gateways pruning at once only remove
 * the same unused copies. At most 256 old copies are looked at per pass.
 * Loop-thread only; blocking file system calls (a copy, a walk of /proc: once per version). */
#ifndef SP_SANDBOX_ETC_H
#define SP_SANDBOX_ETC_H

#include <stddef.h>

#include "err.h"

typedef struct {
    const char *name; /* a file directly in /etc */
    const char *text;
} sandbox_etc_file_t;

#define SANDBOX_ETC_STORE       ".etc" /* <state_dir>/.etc: the copies' tmpfs */
#define SANDBOX_ETC_PREFIX      "etc-" /* a copy: <state_dir>/.etc/etc-<signature> */
#define SANDBOX_ETC_TMPFS       "mode=0755,size=64m,nr_inodes=65536"
#define SANDBOX_ETC_ENTRIES_MAX 20000 /* files, links and directories copied in all */

/* The directory (in out) to bind at /etc: host_paths (absolute, under /etc, NULL-terminated;
 * those missing left out) copied with their parents, and the n generated files. Made when no
 * copy of the current version exists. 0, or < 0 with err set. */
int sandbox_etc_dir(const char *state_dir, const char *const host_paths[],
                    const sandbox_etc_file_t *generated, size_t n, char *out, size_t cap,
                    err_t *err);

#endif
