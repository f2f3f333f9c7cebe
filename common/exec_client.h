/* exec_client.h — the client side of the executor protocol (docs/protocol.md), with no I/O.
 *
 * Like hiredis' read.c, this module never touches a socket: the caller feeds the bytes it
 * received (exec_client_feed), the client parses frames and calls back, and every request the
 * caller makes (open, data, credit, ...) is appended as frames to an output buffer that the
 * caller writes out whenever its socket is writable (exec_client_out + buf_consume). So the
 * libuv gateway and the poll() debug CLI drive the same code, and tests drive it with arrays.
 *
 * Channels: exec_client_open picks a free non-zero id and queues OPEN. The id stays allocated
 * until the server's CLOSE for it has been delivered (on_close returns); only then may it be
 * reused by a later open. A client-side CLOSE (exec_client_send_close, "detach") does not free
 * the id: the server still answers with its own CLOSE.
 *
 * Flow control (credit in DATA payload bytes, per channel and direction):
 *  - sending: exec_client_send_data queues at most exec_client_credit_avail() bytes and returns
 *    how many it took; the caller keeps the rest and retries from on_writable, which is called
 *    when a CREDIT frame from the server raised the channel's credit.
 *  - receiving: with auto-grant (the default for every channel) the client grants back what
 *    on_data delivered once the callback has returned, coalesced so the server always keeps at
 *    least half a window. Switch it off per channel (exec_client_set_auto_grant) to apply
 *    backpressure, and grant explicitly with exec_client_grant as the data is consumed.
 *  - both directions start at the window the server announced in HELLO (FRAME_DEFAULT_WINDOW
 *    until HELLO arrives; channels opened before HELLO are adjusted when it does).
 *
 * Callbacks: every pointer handed to a callback (JSON objects, byte ranges) is borrowed until
 * the callback returns; copy (or json_object_get) what you keep. Callbacks may call any
 * exec_client_* function except exec_client_feed; exec_client_free from a callback is allowed
 * and takes effect when the current exec_client_feed returns (no further callbacks are made).
 *
 * Bounds: received frames are limited to exec_client_set_max_frame bytes (FRAME_MAX_PAYLOAD by
 * default); a bigger one is a fatal error (the stream cannot be trusted). At most
 * EXEC_CLIENT_MAX_CHANNELS channels are open at once. DATA queued for sending is bounded by the
 * server's credit; control frames are not, so a caller that queues requests without writing must
 * watch exec_client_out()->len itself. */
#ifndef SP_EXEC_CLIENT_H
#define SP_EXEC_CLIENT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "err.h"
#include "frame.h"

#define EXEC_CLIENT_MAX_CHANNELS 65536
#define EXEC_CLIENT_PING_MAX     64

typedef struct exec_client exec_client_t;

/* All optional (NULL = ignore). ud is the pointer given to exec_client_new. */
typedef struct {
    /* The server's HELLO {"protocol","version","max_frame","window","pid"}. */
    void (*on_hello)(void *ud, json_object *hello);
    /* Raw bytes on a channel; is_stderr for DATA flagged STDERR. */
    void (*on_data)(void *ud, uint32_t ch, bool is_stderr, const uint8_t *p, size_t n);
    /* A JSON event on a channel (ch 0: a connection-level message). */
    void (*on_json)(void *ud, uint32_t ch, json_object *msg);
    /* The server will send no more DATA on the channel. */
    void (*on_eof)(void *ud, uint32_t ch);
    /* The channel is finished; result is the op's result or {"error":{"code","message"}}.
     * The id is freed when this returns. */
    void (*on_close)(void *ud, uint32_t ch, json_object *result);
    /* An ERROR frame {"error":{...}} about a frame the server could not accept (ch may be 0 or a
     * channel that is not open). The channel, if open, stays open. */
    void (*on_error)(void *ud, uint32_t ch, json_object *error);
    /* PONG with the PING's bytes. */
    void (*on_pong)(void *ud, const uint8_t *p, size_t n);
    /* The server granted credit; avail is what exec_client_send_data would now accept. */
    void (*on_writable)(void *ud, uint32_t ch, size_t avail);
    /* The output buffer went from empty to non-empty: start watching the socket for writes. */
    void (*on_output)(void *ud);
    /* The server broke the protocol in a way the client survives (frame skipped, data over
     * credit, frame for an unknown channel, ...). Informational: for logs and debugging. */
    void (*on_violation)(void *ud, uint32_t ch, const char *what);
} exec_client_cbs_t;

/* cbs is copied. Never NULL (aborts on OOM). */
exec_client_t *exec_client_new(const exec_client_cbs_t *cbs, void *ud);
/* Frees the client and any per-channel state (not the channels' user pointers). NULL: no-op.
 * Called from a callback, takes effect when exec_client_feed returns. */
void exec_client_free(exec_client_t *c);

/* Largest frame payload accepted from the server (default FRAME_MAX_PAYLOAD). */
void exec_client_set_max_frame(exec_client_t *c, uint32_t max_payload);

/* Parses p[0..n) (any split: partial frames are kept until completed) and dispatches callbacks.
 * Returns 0, or < 0 with err set on a fatal protocol error (oversized frame), after which the
 * connection must be dropped: every later call returns the same error. Invalid frames of a
 * sane size (unknown type, reserved bits set, bad CREDIT size) are skipped (on_violation). */
int exec_client_feed(exec_client_t *c, const void *p, size_t n, err_t *err);

/* Bytes waiting to be written to the server. Write a prefix, then buf_consume(out, written). */
buf_t *exec_client_out(exec_client_t *c);

/* Lets go of the input and output buffers while they are empty (an idle connection): they
 * grow again with the next partial frame or request. Returns the bytes let go. */
size_t exec_client_shrink(exec_client_t *c);

/* The server's HELLO (borrowed, NULL before it arrived). */
json_object *exec_client_hello(const exec_client_t *c);

/* Queues a client HELLO (e.g. {"token":"..."} on TCP). req is borrowed. Returns 0 or < 0. */
int exec_client_send_hello(exec_client_t *c, json_object *req, err_t *err);

/* Allocates a free channel id and queues OPEN with req (borrowed, serialised at once).
 * Returns the id (> 0), or 0 with err set (too many channels, request over max_frame). */
uint32_t exec_client_open(exec_client_t *c, json_object *req, err_t *err);

/* True while ch is allocated (opened and not yet closed by the server). */
bool exec_client_is_open(const exec_client_t *c, uint32_t ch);

/* A caller pointer kept with the channel (NULL by default). Get returns NULL for unknown ids. */
void exec_client_set_chan_data(exec_client_t *c, uint32_t ch, void *data);
void *exec_client_get_chan_data(const exec_client_t *c, uint32_t ch);

/* DATA credit the server has granted us on ch and we have not used (0 for unknown ids). */
size_t exec_client_credit_avail(const exec_client_t *c, uint32_t ch);

/* Queues up to min(n, credit) bytes as DATA frames of at most FRAME_DATA_CHUNK bytes.
 * Returns how many bytes were queued (0 when out of credit: wait for on_writable), or < 0:
 * -ERR_NOT_FOUND (channel not open), -EPIPE (EOF or CLOSE already sent). */
ssize_t exec_client_send_data(exec_client_t *c, uint32_t ch, const void *p, size_t n);

/* Queues EOF (no more DATA from us). Returns 0, or < 0 as send_data. */
int exec_client_send_eof(exec_client_t *c, uint32_t ch);

/* Queues a JSON control message (borrowed). Returns 0, -ERR_NOT_FOUND, -EPIPE (after CLOSE)
 * or -ERR_TOO_BIG (over the server's max_frame). */
int exec_client_send_json(exec_client_t *c, uint32_t ch, json_object *msg);

/* Queues CLOSE (detach, or cancel where the op says so); payload may be NULL (empty frame).
 * The id stays allocated until the server's CLOSE. Returns 0 or < 0 as send_json. */
int exec_client_send_close(exec_client_t *c, uint32_t ch, json_object *payload);

/* Grants the server n more DATA bytes on ch (CREDIT frame). Returns 0 or -ERR_NOT_FOUND. */
int exec_client_grant(exec_client_t *c, uint32_t ch, uint32_t n);

/* Auto-grant on/off for ch (default on). Taken into account after on_data returns, so on_data
 * may switch it off for the bytes it is handling. Switching it back on tops the server's
 * credit up to a full window at once. Returns 0 or -ERR_NOT_FOUND. */
int exec_client_set_auto_grant(exec_client_t *c, uint32_t ch, bool on);

/* Credit the server still has on ch (what it may send before we grant more). */
size_t exec_client_recv_window(const exec_client_t *c, uint32_t ch);

/* Queues PING with up to EXEC_CLIENT_PING_MAX bytes (answered by on_pong). Returns 0 or
 * -ERR_TOO_BIG. */
int exec_client_ping(exec_client_t *c, const void *p, size_t n);

#endif
