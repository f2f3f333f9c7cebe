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
 * named directory is seen only when its directory changes too. A copy is never removed while
 * the gateway runs (a running sandbox may have it bound; there is one per version of the host's
 * files). Loop-thread only; blocking file system calls (a copy: once per version). */
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
