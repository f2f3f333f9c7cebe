/* session_record.h — a session's record (sp:session:{sid}) as the API reads and shows it. */
#ifndef SP_API_SESSION_RECORD_H
#define SP_API_SESSION_RECORD_H

#include <hiredis/hiredis.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "errors.h"
#include "http.h"

/* Loads sp:session:{sid} into a new JSON session object (the WebSocket API's shape plus
 * "ended"), or NULL with e: ERR_NOT_FOUND "no session SID" when it does not exist or r may not
 * see it (reported the same way: no existence leak), ERR_UNAVAILABLE. */
json_object *api_session_load(api_req_t *r, const char *sid, api_err_t *e);
/* Turns an HGETALL reply into the session object (new ref). last_seq is filled by the caller. */
json_object *api_session_from_hash(const redisReply *h);
/* The seq of sid's last event (0: none, or Redis failing). */
int64_t api_session_last_seq(api_req_t *r, const char *sid);

#endif
