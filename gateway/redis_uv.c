/* redis_uv.c — hiredis async on libuv with few epoll changes (redis_uv.h). */
#include "redis_uv.h"

#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "xalloc.h"

typedef struct {
    redisAsyncContext *ac; /* NULL once hiredis let go of it */
    uv_poll_t poll;
    uv_prepare_t flush;
    int armed;         /* the events the poll watches now */
    bool want_read;    /* hiredis wants replies read */
    bool want_pollout; /* a write the socket could not take whole: wait for POLLOUT */
    bool flushing;     /* inside the flush's redisAsyncHandleWrite */
    int open_handles;  /* freed when both handles are closed */
} redis_uv_t;

static void
on_poll(uv_poll_t *h, int status, int events)
{
    redis_uv_t *p = h->data;
    if (status < 0)
        events = p->armed; /* an error: let hiredis find it on the socket */
    if (p->ac && (events & UV_READABLE))
        redisAsyncHandleRead(p->ac);
    if (p->ac && (events & UV_WRITABLE))
        redisAsyncHandleWrite(p->ac);
}

/* The poll watches what is wanted; uv_poll_start only when that changed. */
static void
arm(redis_uv_t *p)
{
    int ev = (p->want_read ? UV_READABLE : 0) | (p->want_pollout ? UV_WRITABLE : 0);
    if (ev == p->armed || !p->ac)
        return;
    p->armed = ev;
    if (ev)
        uv_poll_start(&p->poll, ev, on_poll);
    else
        uv_poll_stop(&p->poll);
}

/* Before the loop waits: everything queued in this iteration goes out in one write. */
static void
on_flush(uv_prepare_t *h)
{
    redis_uv_t *p = h->data;
    uv_prepare_stop(h);
    if (!p->ac)
        return;
    p->flushing = true;
    redisAsyncHandleWrite(p->ac); /* may free the context (a failed write): cleanup runs */
    p->flushing = false;
}

void
redis_uv_flush(redisAsyncContext *ac)
{
    redis_uv_t *p = ac ? ac->ev.data : NULL;
    if (p && p->ac && uv_is_active((uv_handle_t *)&p->flush))
        on_flush(&p->flush);
}

static void
add_read(void *ud)
{
    redis_uv_t *p = ud;
    p->want_read = true;
    arm(p);
}

static void
del_read(void *ud)
{
    redis_uv_t *p = ud;
    p->want_read = false;
    arm(p);
}

static void
add_write(void *ud)
{
    redis_uv_t *p = ud;
    /* Still connecting, or the flush left bytes the socket would not take: wait for POLLOUT.
     * Otherwise write at the end of this iteration. */
    if (!(p->ac->c.flags & REDIS_CONNECTED) || p->flushing) {
        p->want_pollout = true;
        arm(p);
        return;
    }
    if (!p->want_pollout)
        uv_prepare_start(&p->flush, on_flush);
}

static void
del_write(void *ud)
{
    redis_uv_t *p = ud;
    p->want_pollout = false;
    uv_prepare_stop(&p->flush);
    arm(p);
}

static void
on_close(uv_handle_t *h)
{
    redis_uv_t *p = h->data;
    if (--p->open_handles == 0)
        free(p);
}

static void
cleanup(void *ud)
{
    redis_uv_t *p = ud;
    p->ac = NULL;
    uv_close((uv_handle_t *)&p->poll, on_close);
    uv_close((uv_handle_t *)&p->flush, on_close);
}

/* Streamed output reaches Redis as XADDs of up to a few hundred KiB each; a write the socket
 * takes only in part makes hiredis move all the rest of its buffer down (sdsrange), once per
 * write: a send buffer that takes them whole spares those copies. The kernel caps it at
 * net.core.wmem_max. */
#define REDIS_UV_SNDBUF (2 << 20)

int
redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop)
{
    if (ac->ev.data)
        return REDIS_ERR;
    redis_uv_t *p = xcalloc(1, sizeof *p);
    if (uv_poll_init(loop, &p->poll, ac->c.fd) != 0) {
        free(p);
        return REDIS_ERR;
    }
    int sndbuf = REDIS_UV_SNDBUF;
    (void)setsockopt(ac->c.fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf); /* best effort */
    uv_prepare_init(loop, &p->flush);
    p->poll.data = p->flush.data = p;
    p->open_handles = 2;
    p->ac = ac;
    ac->ev.data = p;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    return REDIS_OK;
}
