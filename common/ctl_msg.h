/* ctl_msg.h — the bodies of the API's control requests to a gateway (POST /_sp/op,
 * docs/protocol.md "Control requests"), both ways. Pure: JSON in, JSON out (fuzzed:
 * tests/fuzz/fuzz_ctl_msg.c).
 *
 * Request: a JSON object {"op":"session.create", "owner":"alice", "role":"user",
 * "viewer_session":"", ...the op's own fields}: who asks is the API's copy of the token it
 * verified (the gateway checks the rights again, ops.c). Answer: {"ok":true,"result":{...}} or
 * {"ok":false,"error":{"code":"not_found","message":"..."}}. */
#ifndef SP_CTL_MSG_H
#define SP_CTL_MSG_H

#include <json-c/json.h>
#include <stddef.h>

#include "err.h"

#define CTL_OP_MAX 64 /* longest op name */

/* A decoded request: pointers into the object ctl_request_decode returned. */
typedef struct {
    const char *op, *owner, *role, *viewer_session;
} ctl_request_t;

/* Decodes a request body: the object (new ref) with *out pointing into it, or NULL with err
 * (-ERR_BAD_REQ: not a JSON object; "op" not a string of 1..CTL_OP_MAX bytes; owner, role or
 * viewer_session present and not a string; role absent or not "admin", "user" or
 * "viewer"). */
json_object *ctl_request_decode(const char *body, size_t len, ctl_request_t *out, err_t *err);

/* Decodes an answer: 1 with *result (new ref; {} when absent), 0 (refused) with *error (new
 * ref, {"code","message"} as sent, a string message at least), or -ERR_PROTO with err. */
int ctl_answer_decode(const char *body, size_t len, json_object **result, json_object **error,
                      err_t *err);

/* The answers' texts (new strings, caller frees with free()): takes result / error. */
char *ctl_answer_ok(json_object *result, size_t *len);
char *ctl_answer_fail(json_object *error, size_t *len);

#endif
