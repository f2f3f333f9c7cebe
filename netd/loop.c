/* loop.c — see loop.h. */
#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "netd.h"

static int ep = -1;
static volatile bool stopping;
static void **graveyard;
static size_t ngrave, cap_grave;

void
loop_free_later(void *p)
{
    if (ngrave == cap_grave) {
        cap_grave = cap_grave ? cap_grave * 2 : 64;
        graveyard = realloc(graveyard, cap_grave * sizeof *graveyard);
        if (!graveyard)
            abort();
    }
    graveyard[ngrave++] = p;
}

int
loop_init(void)
{
    ep = epoll_create1(EPOLL_CLOEXEC);
    return ep < 0 ? -errno : 0;
}

int
loop_add(loop_fd_t *h, uint32_t events)
{
    h->events = 0;
    h->in_epoll = 0;
    if (!events)
        return 0;
    struct epoll_event ev = {.events = events, .data.ptr = h};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, h->fd, &ev) < 0)
        return -errno;
    h->events = events;
    h->in_epoll = 1;
    return 0;
}

void
loop_set(loop_fd_t *h, uint32_t events)
{
    if (h->in_epoll && h->events == events)
        return;
    if (!events) {
        loop_del(h);
        return;
    }
    struct epoll_event ev = {.events = events, .data.ptr = h};
    epoll_ctl(ep, h->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, h->fd, &ev);
    h->events = events;
    h->in_epoll = 1;
}

void
loop_del(loop_fd_t *h)
{
    if (h->in_epoll)
        epoll_ctl(ep, EPOLL_CTL_DEL, h->fd, NULL);
    h->events = 0;
    h->in_epoll = 0;
}

void
loop_stop(void)
{
    stopping = true;
}

double
netd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double
netd_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
loop_run(void (*tick)(void), int tick_ms)
{
    struct epoll_event evs[64];
    double next = netd_now() + tick_ms / 1000.0;
    while (!stopping) {
        int wait = (int)((next - netd_now()) * 1000);
        int n = epoll_wait(ep, evs, 64, wait < 0 ? 0 : wait);
        for (int i = 0; i < n; i++) {
            loop_fd_t *h = evs[i].data.ptr;
            if (h->fd < 0) /* ended earlier in this batch (loop_free_later) */
                continue;
            h->cb(h, evs[i].events);
        }
        for (size_t i = 0; i < ngrave; i++)
            free(graveyard[i]);
        ngrave = 0;
        if (netd_now() >= next) {
            tick();
            for (size_t i = 0; i < ngrave; i++)
                free(graveyard[i]);
            ngrave = 0;
            next = netd_now() + tick_ms / 1000.0;
        }
    }
}
