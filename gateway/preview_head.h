/* preview_head.h — the request head nginx hands a gateway's preview listener (preview_conn.c),
 * read and rewritten for the sandbox's app. Pure: bytes in, a result and the app's head out.
 *
 * nginx adds X-SP-Route-Key (its credential: only nginx may say which session and port) and
 * X-SP-Preview "path|host SESSION PORT" (what the URL named: /preview/S/P/… or P-S.<domain>).
 * The parser takes the preview credential from the path (/preview/S/P/~TOKEN/…, path mode),
 * the query (sp_token=), the X-SP-Preview-Token header (or E2B's e2b-traffic-access-token, which
 * carries the same token: the trafficAccessToken of E2B's create) or the sp_pv cookie, and builds
 * the head the app gets: the target without the preview prefix and without sp_token, and none of
 * sandpipe's headers or cookies (the app is the sandbox's: it never sees a sandpipe credential).
 * Everything else passes as it came. */
#ifndef SP_PREVIEW_HEAD_H
#define SP_PREVIEW_HEAD_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"
#include "preview_token.h"
#include "route_key.h"

#define PREVIEW_HEAD_MAX   (32 * 1024) /* the whole head (nginx's large buffers: 4 x 8k) */
#define PREVIEW_TARGET_MAX 8192
#define PREVIEW_TOKENS_MAX 4
#define PREVIEW_COOKIE     "sp_pv"
#define PREVIEW_QUERY_ARG  "sp_token"
#define PREVIEW_TOKEN_HDR  "X-SP-Preview-Token"
#define PREVIEW_E2B_HDR    "e2b-traffic-access-token"

typedef enum { PREVIEW_PATH, PREVIEW_HOST } preview_mode_t;
typedef enum {
    PREVIEW_FROM_PATH,
    PREVIEW_FROM_QUERY,
    PREVIEW_FROM_HEADER,
    PREVIEW_FROM_COOKIE
} preview_from_t;

typedef struct {
    char method[16];
    preview_mode_t mode;
    char sid[129];
    unsigned port;
    char route_key[80];
    bool upgrade;     /* Upgrade: asked (a WebSocket) */
    bool https;       /* X-Forwarded-Proto: https (nginx's): cookies are Secure */
    bool needs_slash; /* path mode, nothing after the port: /preview/S/P must become …/P/ */
    struct {
        char tok[PREVIEW_TOKEN_MAX];
        preview_from_t from;
    } tokens[PREVIEW_TOKENS_MAX];
    int ntokens;
    char prefix[256];                /* path mode: /preview/S/P; host mode: "" */
    char target[PREVIEW_TARGET_MAX]; /* what the app is asked for: /…?query, no sp_token */
} preview_head_t;

/* Parses in[0..len) (a whole head, its blank line included) into h and appends the app's head
 * to app. 0, or -1 with err (ERR_BAD_REQ: not a head this listener serves; ERR_TOO_BIG). */
int preview_head_parse(const char *in, size_t len, preview_head_t *h, buf_t *app, err_t *err);

#endif
