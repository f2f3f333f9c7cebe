/* wire.h — the Jupyter messaging protocol's wire format (v5.3), without I/O: a message is the
 * frames "<IDS|MSG>", an HMAC-SHA256 hex signature over the next four, then header,
 * parent_header, metadata and content (JSON), then binary buffers. jw_build makes the frames of a
 * request; jw_parse checks and decodes a received message (any bytes: it is fuzzed). */
#ifndef SP_JUPYTER_WIRE_H
#define SP_JUPYTER_WIRE_H

#include <json-c/json.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"

#define JW_DELIM  "<IDS|MSG>"
#define JW_ID_LEN 32 /* msg_id: 32 hex digits */

typedef struct {
    const void *p;
    size_t n;
} jw_frame_t;

/* A decoded message; every json_object is owned by the message. */
typedef struct {
    json_object *header, *parent, *content;
    const char *msg_type;  /* header.msg_type ("" if absent) */
    const char *parent_id; /* parent_header.msg_id ("" if absent) */
} jw_msg_t;

/* The signature of the four JSON frames with key (hex, NUL-terminated into out[65]); an empty
 * key gives "" (unsigned sessions). */
void jw_sign(const char *key, const jw_frame_t parts[4], char out[65]);

/* The six frames of a request (delimiter, signature, header, parent, metadata, content) into
 * out[0..5]; msg_id_out gets the new message's id. content is borrowed. */
void jw_build(const char *key, const char *session, const char *msg_type, json_object *content,
              buf_t out[6], char msg_id_out[JW_ID_LEN + 1]);

/* Decodes frames[0..n): identities up to the delimiter are skipped; the signature must match.
 * Returns 0 with m filled (free with jw_msg_free) or < 0 with err set. */
int jw_parse(const char *key, const jw_frame_t *frames, size_t n, jw_msg_t *m, err_t *err);
void jw_msg_free(jw_msg_t *m);

#endif
