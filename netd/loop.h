/* loop.h — netd's event loop: level-triggered epoll over registered fds and one periodic tick.
 * Single-threaded; a handler may add, change or remove any registration, its own included. */
#ifndef SP_NETD_LOOP_H
#define SP_NETD_LOOP_H

#include <stdint.h>

typedef struct loop_fd loop_fd_t;
struct loop_fd {
    int fd;
    uint32_t events; /* what is waited for now (EPOLLIN, EPOLLOUT) */
    int in_epoll;    /* registered: a handle that waits for nothing is not (epoll would still
                      * report its EPOLLHUP and EPOLLERR, over and over) */
    void (*cb)(loop_fd_t *h, uint32_t events);
    void *data;
};

int loop_init(void);
/* Registers h->fd for events (0: known, not waited on until loop_set asks for something). */
int loop_add(loop_fd_t *h, uint32_t events);
/* Changes what h waits for; a no-op when unchanged. Nothing (0) takes h out of epoll. */
void loop_set(loop_fd_t *h, uint32_t events);
void loop_del(loop_fd_t *h);
/* Frees p (with free()) once the current batch of events is handled: a handler may end a
 * connection whose other fd has an event later in the same batch. Remove its fds first and set
 * their loop_fd_t's fd to -1: the loop skips events of such handles. */
void loop_free_later(void *p);
/* Runs until loop_stop; tick() every tick_ms. */
void loop_run(void (*tick)(void), int tick_ms);
void loop_stop(void);

#endif
