/* ws_frames.h — a watch over the frame headers a WebSocket client sends (RFC 6455 section 5.2),
 * fed the bytes of the connection as they are read, before libwebsockets parses them: the HTTP
 * upgrade request, then frames. It catches what lws 4.1.6 lets through or drops without a close
 * frame (see ws_guard.c); the rest (reserved bits, opcodes, fragmented control frames,
 * continuations) lws answers itself with close code 1002. Pure: no I/O, no allocation. */
#ifndef SP_WS_FRAMES_H
#define SP_WS_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WS_CLOSE_PROTOCOL_ERROR 1002
#define WS_CLOSE_INVALID_DATA   1007
#define WS_CLOSE_POLICY         1008
#define WS_CLOSE_TOO_BIG        1009

typedef struct {
    uint64_t max_message; /* most payload bytes one data message (all its fragments) may carry */
    /* WSF_PLAIN: the first request was plain HTTP (no Upgrade header: nginx's route lookups
     * and the routes it sends a gateway, on kept connections): not watched any more. */
    enum { WSF_HANDSHAKE, WSF_HEADER, WSF_PAYLOAD, WSF_FAILED, WSF_PLAIN } phase;
    uint8_t crlf;       /* bytes of "\r\n\r\n" matched at the end of the request so far */
    uint8_t upg;        /* bytes of "\nupgrade:" matched (any case) */
    bool upgrade;       /* the request has an Upgrade header */
    uint8_t hdr[14];    /* the frame header being read */
    uint8_t hdr_len;    /* bytes of it read so far */
    uint64_t left;      /* payload bytes of the current frame still to come */
    uint64_t msg_len;   /* payload bytes of the data message in progress */
    uint16_t code;      /* once failed: the close code the connection deserves */
    const char *reason; /* once failed: a short static reason for the close frame */
} ws_frames_t;

/* A watch for a connection accepted by a server, starting at its upgrade request. */
void ws_frames_init(ws_frames_t *f, uint64_t max_message);

/* Scans the next n bytes the client sent. Returns how many of them come before the first
 * frame that breaks the rules (n when none does); that frame and everything after it are not
 * for the parser: f->code and f->reason then say why, and every later call returns 0. A header
 * split across calls is judged when its deciding byte arrives: the bytes of it passed earlier
 * leave a parser waiting for the rest, which never comes. */
size_t ws_frames_scan(ws_frames_t *f, const uint8_t *p, size_t n);

static inline bool
ws_frames_failed(const ws_frames_t *f)
{
    return f->phase == WSF_FAILED;
}

#endif
