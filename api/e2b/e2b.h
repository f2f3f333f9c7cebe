/* e2b.h — E2B's control API under /e2b (docs/api.md "E2B API"; the wire: docs/e2b-wire.md).
 *
 * An E2B sandbox is a sandpipe session: its sandboxID is the session id, its template a runtime
 * image ("base" the default one), its timeout the session's max_lifetime (the gateway ends it
 * then; setTimeout moves it). What E2B has and sandpipe's session record has not (the template
 * name, metadata, envVars) is kept in sp:e2b:{SID}; sp:e2b:sandboxes lists the sandboxes made
 * here (score: creation time). Auth is X-API-Key holding a sandpipe token. Errors are E2B's
 * {"code": status, "message"} (the API_E2B flavour), which the SDK maps to its error classes. */
#ifndef SP_API_E2B_H
#define SP_API_E2B_H

#include <json-c/json.h>
#include <stdbool.h>

#include "api.h"

#define E2B_ENVD_VERSION           "0.6.13" /* plain semver >= 0.6.4, else the SDK refuses calls */
#define E2B_TIMEOUT_DEFAULT        300      /* seconds, E2B's own default */
#define E2B_TIMEOUT_MAX            86400    /* seconds: E2B's longest (24 h) */
#define E2B_DEFAULT_TEMPLATE       "base"
#define E2B_AUTO_RESUME_MIN        300 /* seconds an auto-resumed sandbox lives at least */
#define E2B_RESUME_TIMEOUT_DEFAULT 15  /* seconds: resume's and refreshes' default and least */

/* Verifies X-API-Key (a sandpipe token) into r->claims; write: refuses a viewer (403). Replies
 * and returns -1 when it cannot. */
int e2b_auth(api_req_t *r, bool write);

/* Sandbox sid as r may see it: its session record (api_session_load's object) with the E2B
 * fields added ("e2b_template", "e2b_metadata"), or NULL with e: ERR_NOT_FOUND also for a
 * session that has ended (an E2B sandbox that is gone), ERR_UNAVAILABLE. sandbox_record.c. */
json_object *e2b_sandbox_load(api_req_t *r, const char *sid, api_err_t *e);
/* Keeps sid's E2B fields (template, metadata and envVars: borrowed) and lists it. */
int e2b_sandbox_save(api_req_t *r, const char *sid, double created, const char *tmpl,
                     json_object *metadata, json_object *env_vars, api_err_t *e);
/* Forgets sid's E2B fields and its place in the listing (the sandbox is gone). */
void e2b_sandbox_forget(api_req_t *r, const char *sid);

/* E2B's "state" of a loaded sandbox: "running" or "paused". */
const char *e2b_state(json_object *s);
/* A loaded sandbox as E2B's SandboxDetail / ListedSandbox (new ref). */
json_object *e2b_detail(json_object *s);
/* t (epoch seconds) as RFC 3339 in UTC with milliseconds, as E2B writes it (new ref). */
json_object *e2b_rfc3339(double t);
/* "Sandbox <id> not found" (404 with code 404, what the SDK turns into NotFoundError). */
void e2b_not_found(api_req_t *r, const char *sid);

/* Loads sid for a change by r and asks its gateway op (with the fields of extra, taken; NULL:
 * none): the gateway's result (new ref), or NULL after the error reply. *s (may be NULL) gets
 * the sandbox as loaded. sandboxes.c. */
json_object *e2b_gateway_op(api_req_t *r, const char *sid, const char *op, json_object *extra,
                            json_object **s);

/* E2B's egress rules (rules: the object holding allowOut, denyOut, rules, egressProxy: create's
 * "network", the update's body; internet: allow_internet_access; both borrowed, may be NULL)
 * as a sandpipe session's "network" value (*out, new ref): allowOut given → allowlist (deny:
 * denyOut less "0.0.0.0/0"); else a denyOut holding "0.0.0.0/0" → none, another denyOut →
 * egress less it; else allow_internet_access false → none, true → egress; else NULL (the
 * operator's default), or for an update (which replaces every rule) egress. -code with e: a
 * malformed field (ERR_BAD_REQ), rules or egressProxy (ERR_NOT_IMPLEMENTED). network.c. */
int e2b_network_policy(json_object *rules, json_object *internet, bool update, json_object **out,
                       api_err_t *e);
/* Sets detail's allowInternetAccess (egress alone: true) and network {allowOut, denyOut} from a
 * session's normalised policy (borrowed; NULL: none). */
void e2b_network_describe(json_object *policy, json_object *detail);

/* The handlers (routes.c). */
void api_e2b_create(api_req_t *r, char **params);
void api_e2b_get(api_req_t *r, char **params);
void api_e2b_kill(api_req_t *r, char **params);
void api_e2b_set_timeout(api_req_t *r, char **params);
void api_e2b_pause(api_req_t *r, char **params);
void api_e2b_connect(api_req_t *r, char **params);
void api_e2b_resume(api_req_t *r, char **params);
void api_e2b_refresh(api_req_t *r, char **params);
void api_e2b_list(api_req_t *r, char **params);
void api_e2b_update_network(api_req_t *r, char **params);
void api_e2b_metrics(api_req_t *r, char **params); /* sandbox_metrics.c */
void api_e2b_logs(api_req_t *r, char **params);    /* sandbox_logs.c */
void api_e2b_logs_v2(api_req_t *r, char **params);
void api_e2b_snapshot_create(api_req_t *r, char **params); /* snapshots.c */
void api_e2b_snapshots(api_req_t *r, char **params);
void api_e2b_fork(api_req_t *r, char **params);
void api_e2b_templates(api_req_t *r, char **params); /* templates.c */
void api_e2b_template_alias(api_req_t *r, char **params);
void api_e2b_template_build(api_req_t *r, char **params);
void api_e2b_template_delete(api_req_t *r, char **params);

#endif
