/* envd_entry.h — E2B's envd's filesystem messages from what the executor says of a file
 * (docs/e2b-wire.md 3.3, 3.8; the executor's "details": docs/protocol.md "file.stat"): an
 * EntryInfo from a file.stat or file.list entry, and a FilesystemEvent from a file.watch event.
 * Pure, over JSON a sandbox wrote: a field missing or of the wrong type reads as its zero value,
 * never as a crash (tests/fuzz/fuzz_envd_entry.c). */
#ifndef SP_ENVD_ENTRY_H
#define SP_ENVD_ENTRY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#define ENVD_PERMISSIONS_MAX 24 /* "dLDpSugct" and "rwxrwxrwx", and the NUL */
#define ENVD_TIMESTAMP_MAX   40

/* Go's FileMode.String() of a file of kind (the executor's: "file", "directory", "symlink",
 * "fifo", "socket", "char_device", "block_device") with mode's 07777 bits: "-rw-r--r--",
 * "drwxr-xr-x", "Lrwxrwxrwx", "dtrwxrwxrwx", "Dcrw-rw-rw-". */
void envd_permissions(const char *kind, unsigned mode, char out[ENVD_PERMISSIONS_MAX]);
/* A protobuf Timestamp's JSON of ns since the epoch: RFC 3339 in UTC, with 0, 3, 6 or 9
 * fractional digits as protobuf writes them ("2026-01-01T00:00:00.500Z"). */
void envd_timestamp(int64_t ns, char out[ENVD_TIMESTAMP_MAX]);
/* The EntryInfo (new) of st, a file.stat reply or file.list entry with details, for path, the
 * clean absolute path the client named (envd answers with it, not with the resolved one): name
 * its last element, a symlink typed as its target (none when dangling), mode the permission
 * bits (a symlink's target's), permissions those of the link itself. */
json_object *envd_entry_info(json_object *st, const char *path);

/* What the executor's file.watch event ev (borrowed) is to a client watching client_root, which
 * the executor resolved to root: the FilesystemEvent (new; name relative to the watched
 * directory, type EVENT_TYPE_*, entry when include_entry for a create, write or chmod), or NULL
 * for an event envd does not report (closed_write, a subdirectory's own deletion, a path
 * outside root). */
json_object *envd_watch_event(json_object *ev, const char *root, const char *client_root,
                              bool include_entry);

#endif
