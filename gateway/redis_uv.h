/* redis_uv.h — hiredis async on libuv, in place of hiredis's adapters/libuv.h.
 *
 * That adapter calls uv_poll_start for every command (add write) and every reply written (add
 * read, delete write), and libuv's uv_poll_start re-registers the descriptor each time: three
 * epoll_ctl calls per change, about a dozen per stored event on this path. Here the poll is
 * changed only when the wanted events change, and the commands of one loop iteration are
 * written together just before the loop waits (a uv_prepare), straight to the socket; only a
 * write the socket cannot take whole waits for POLLOUT. */
#ifndef SP_REDIS_UV_H
#define SP_REDIS_UV_H

#include <hiredis/async.h>
#include <uv.h>

/* Attaches ac to loop (REDIS_OK, or REDIS_ERR: ac already attached, or libuv refused the fd).
 * Freed with ac (its cleanup hook). */
int redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop);
/* Writes now what this iteration queued for ac (else done just before the loop waits): for a
 * caller about to tell a client of a state whose write is queued, so that Redis has the bytes
 * first and a gateway killed right after loses nothing the client was told. */
void redis_uv_flush(redisAsyncContext *ac);

#endif
