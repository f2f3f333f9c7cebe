/* sandbox_host.h — what the host knows of a sandbox, kept where only the gateway writes.
 *
 * A sandbox's host facts (its directory, workspace, top pid and its start time, cgroup, uid,
 * disk) decide which paths a root gateway removes, which processes it kills and which socket its
 * actions go to. Redis cannot be trusted with them: whatever gets Redis' password could point a
 * session at another sandbox's directory or at any host directory. So the gateway keeps them in
 * <state_dir>/<id>/ctl/sandbox.json (ctl/ is 0700, the gateway's user: no sandbox sees or writes
 * it), with the session the sandbox serves, and a record in Redis only names the sandbox (its id,
 * checked by the safe-id rules): everything else is read back from that file, opened under the
 * gateway's own state directory without following a link. The facts are also written to Redis,
 * for operators and dashboards to read; the gateway never reads them from there.
 *
 * Peers on one host that take each other's sessions over share one --state-dir. */
#ifndef SP_SANDBOX_HOST_H
#define SP_SANDBOX_HOST_H

#include <json-c/json.h>

#include "err.h"
#include "provider.h"

#define SANDBOX_HOST_FILE "sandbox.json" /* in <dir>/ctl */

/* Writes sb's facts and the session it serves ("" for a warm sandbox nobody claimed yet) to its
 * ctl directory, replacing what was there (a new file renamed over the old: never half
 * written). 0, or < 0 with err set. */
int sandbox_host_save(const sandbox_t *sb, const char *session, err_t *err);

/* The sandbox a Redis record names (ref: its JSON, of which only "id" is read) as this host
 * keeps it under state_dir. session: the session that claims it; the host's record must say that
 * session or none (then it is bound to session now); NULL: a warm sandbox, whose record must say
 * none. 0, or < 0 with err set (-ERR_BAD_REQ for a malformed ref, -ENOENT for a sandbox this host
 * does not have, -EACCES for one another session holds). */
int sandbox_from_record(json_object *ref, const char *state_dir, const char *session, sandbox_t *sb,
                        err_t *err);

/* The facts as JSON (a new object: every field of sb) and back (validated: types, ranges,
 * lengths; 0 or -ERR_BAD_REQ with err set). from_json derives socket_path from dir. */
json_object *sandbox_to_json(const sandbox_t *sb);
int sandbox_from_json(json_object *o, sandbox_t *sb, err_t *err);

#endif
