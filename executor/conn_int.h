/* conn_int.h — what conn.c (frames in, channels, dispatch) and conn_out.c (frames out) share:
 * the connection itself and the ways a frame leaves. */
#ifndef SP_EXECUTOR_CONN_INT_H
#define SP_EXECUTOR_CONN_INT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "conn.h"
#include "loop.h"

struct conn {
    watch_t w;
    buf_t in;
    buf_t out;
    size_t out_off; /* bytes of out already written */
    uint64_t skip;  /* payload bytes of a refused frame still to discard */
    channel_t *channels;
    int nchannels;
    bool need_token;
    char *token;
    bool closing;
    conn_t *next_open, *prev_open; /* the open connections (conn_close_all) */
};

extern conn_t *g_open; /* the open connections (conn_close_all) */

void conn_close(conn_t *c);

/* Writes what is queued; arms EPOLLOUT for what the socket does not take (may close c). */
void conn_flush_out(conn_t *c);
/* Queues one frame for the turn's end, or writes it now with what is queued before it. */
void conn_send_frame(conn_t *c, uint8_t type, uint8_t flags, uint32_t channel, const void *p,
                     size_t n);
/* A JSON frame; text that is not UTF-8 made so, one too large replaced by a too_large error. */
void conn_send_json(conn_t *c, uint8_t type, uint32_t channel, json_object *obj);
void conn_send_error(conn_t *c, uint32_t channel, int code, const char *msg);

#endif
