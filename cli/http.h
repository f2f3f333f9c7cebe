/* http.h — one plain HTTP/1.1 request for the CLI (the REST API behind nginx), on the WebSocket
 * client's lws context and loop (libwebsockets' HTTP client role). Streamed both ways: the
 * request body is pulled from a source as the socket takes it (Content-Length, or chunked when
 * the length is unknown), the response body is handed to a sink as it arrives. Nothing is held
 * whole. Blocking style like ws.h: http_run returns once the response is complete or failed. */
#ifndef SP_CLI_HTTP_H
#define SP_CLI_HTTP_H

#include <libwebsockets.h>
#include <stddef.h>

#include "err.h"
#include "ws.h"

#define HTTP_PROTOCOL_NAME "sandpipe-http" /* registered on ws.c's context */
#define HTTP_NO_BODY       (-1)            /* http_req_t.body_len: no request body */
#define HTTP_CHUNKED       (-2)            /* a body of unknown length (stdin) */
#define HTTP_IDLE_MS       120000          /* no byte either way for this long: give up */

typedef struct {
    const char *method; /* "GET", "PUT" */
    const char *path;   /* "/api/v1/...?..." (the url's own path is put before it) */
    long long body_len; /* HTTP_NO_BODY, HTTP_CHUNKED or the body's exact length */
    /* Request body: fills buf[0..cap), returns > 0 bytes, 0 at the end, < 0 with err set. */
    long (*body)(void *ud, char *buf, size_t cap, err_t *err);
    /* Response body bytes, with the response's status. Returns 0, or < 0 with err set to stop. */
    int (*sink)(void *ud, int status, const char *p, size_t n, err_t *err);
    void *ud;
} http_req_t;

/* Runs req against target's url (http:// or https://; ws:// and wss:// are taken as the same
 * server). Returns the HTTP status once the whole response was received (sink called for all
 * of it), or < 0 with err set: connection failed or cut short, source or sink failed, idle. */
int http_run(ws_ctx_t *ctx, const ws_target_t *target, const http_req_t *req, err_t *err);

/* The lws protocol callback (ws.c registers it under HTTP_PROTOCOL_NAME). */
int http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                  size_t len);

#endif
