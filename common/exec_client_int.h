/* exec_client_int.h — what the two halves of the executor protocol client share:
 * exec_client.c (the client, its channel table, everything it sends) and exec_client_feed.c
 * (parsing what the server sends and the callbacks). Not for other modules. */
#ifndef SP_EXEC_CLIENT_INT_H
#define SP_EXEC_CLIENT_INT_H

#include "exec_client.h"

#define CREDIT_MAX ((int64_t)1 << 62) /* saturation point of credit sums */

typedef struct {
    bool used;
    bool auto_grant;
    bool eof_sent;
    bool close_sent;
    bool eof_recv;
    int64_t send_credit; /* DATA bytes we may still send */
    int64_t recv_window; /* DATA bytes the server may still send us */
    int64_t ungranted;   /* delivered under auto-grant, not yet granted back */
    uint32_t next_free;  /* free list link (0 = end) */
    void *data;
} chan_t;

struct exec_client {
    exec_client_cbs_t cbs;
    void *ud;
    buf_t in;      /* partial frame carried over between feeds */
    buf_t out;     /* frames waiting to be written */
    uint32_t skip; /* payload bytes of an invalid frame still to discard */
    chan_t *chans;
    uint32_t nslots; /* slots in use or on the free list, including slot 0 */
    uint32_t cap;
    uint32_t free_head;
    uint32_t nopen;
    uint32_t max_frame;        /* receive limit */
    uint32_t server_max_frame; /* send limit, from HELLO */
    uint32_t window;           /* initial credit per channel and direction */
    json_object *hello;
    bool in_feed;
    bool free_pending;
    bool broken;
    err_t fatal;
};

/* Defined in exec_client.c, used by both halves. */
chan_t *ec_chan_get(const exec_client_t *c, uint32_t ch);
void ec_chan_release(exec_client_t *c, uint32_t ch);
int64_t ec_credit_add(int64_t a, int64_t b);
void ec_flush_ungranted(exec_client_t *c, chan_t *k, uint32_t ch, bool force);
void ec_client_destroy(exec_client_t *c);

#endif
