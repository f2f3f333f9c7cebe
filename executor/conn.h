/* conn.h — one client connection to the executor and the channels multiplexed on it.
 *
 * A channel is opened by the client (OPEN) and handled by an op (ops.c). The op's code owns
 * whatever it starts (a command, a process attachment, an upload) and reacts to the client
 * through channel_ops_t. Ownership: the connection owns its channels; a channel is freed when
 * the server closes it (chan_close) or the connection goes away, in which case ops->detach is
 * called first so the owner drops its pointer. Flow control per docs/protocol.md: the server
 * sends DATA only within chan_credit(); ops->resume is called when the client grants more. */
#ifndef SP_CONN_H
#define SP_CONN_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct conn conn_t;
typedef struct channel channel_t;

typedef struct {
    void (*data)(channel_t *ch, const uint8_t *p, size_t n); /* client DATA (stdin, upload) */
    void (*eof)(channel_t *ch);                              /* client EOF */
    void (*json)(channel_t *ch, json_object *msg);           /* client JSON control */
    void (*resume)(channel_t *ch);                           /* client granted credit */
    void (*detach)(channel_t *ch); /* client CLOSE or connection lost; channel freed after */
    /* The connection went away (no CLOSE): called instead of detach when set, for ops that
     * outlive their client (a terminal with an id); channel freed after. */
    void (*lost)(channel_t *ch);
} channel_ops_t;

struct channel {
    conn_t *conn; /* NULL while orphaned (a durable channel whose connection went away) */
    uint32_t id;
    const channel_ops_t *ops;
    void *owner;         /* the op's state */
    int64_t send_credit; /* DATA bytes we may still send */
    int64_t recv_credit; /* DATA bytes the client may still send */
    struct durable *dur; /* set for durable actions (durable.h) */
    channel_t *next;
};

/* Starts serving a connected socket (takes ownership of fd). */
void conn_start(int fd, bool need_token, const char *token);
/* Closes every open connection (at exit; their memory goes at the next loop_run_deferred). */
void conn_close_all(void);

int64_t chan_credit(const channel_t *ch);
/* Sends DATA; n must not exceed chan_credit(). Splits into FRAME_DATA_CHUNK frames. */
void chan_send_data(channel_t *ch, uint8_t flags, const void *p, size_t n);
void chan_send_json(channel_t *ch, json_object *msg); /* borrows msg */
/* Sends EOF: no more DATA from the server on ch (the channel stays open until its CLOSE). */
void chan_send_eof(channel_t *ch);
/* Grants the client n more DATA bytes on ch. */
void chan_grant(channel_t *ch, size_t n);
/* Sends CLOSE with result (takes ownership; NULL means {}) and frees ch. ops->detach is not
 * called. */
void chan_close(channel_t *ch, json_object *result);
/* chan_close without the durable bookkeeping (durable.c sends its deferred CLOSE with it). */
void chan_send_close(channel_t *ch, json_object *result);
/* chan_close with {"error":{"code","message"}}. */
void chan_close_error(channel_t *ch, int code, const char *msg);
/* Durable channels (durable.c): `orphan` (no connection) takes the place of `fresh` (just
 * OPENed on a live connection, freed here) with fresh's id and credit. Returns orphan. */
channel_t *chan_adopt(channel_t *fresh, channel_t *orphan);
/* Takes a durable channel from its live connection (which gets CLOSE {"error"}: why). */
void chan_orphan(channel_t *ch, const char *why);
/* Sends DATA that was sent before (a replay): takes credit, records nothing. */
void chan_resend(channel_t *ch, const void *p, size_t n);
/* Writes what this loop turn queued, one write per connection (the loop's before-wait hook). */
void conn_flush_queued(void *unused);
/* Bytes queued for the socket: owners may use it to avoid piling up output. */
size_t conn_pending(const conn_t *c);

/* Op handlers: called for OPEN with the parsed request (borrowed). A handler either closes
 * the channel before returning (one-shot ops) or sets ch->ops/ch->owner and keeps it open. */
typedef void (*op_handler_t)(channel_t *ch, json_object *req);
op_handler_t ops_lookup(const char *name);

#endif
