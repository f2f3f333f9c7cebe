/* loop.c — epoll + timers + signalfd. See loop.h. */
#include "loop.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "xalloc.h"

#define MAX_EVENTS 64

typedef struct deferred {
    void *p;
    void (*fn)(void *);
    struct deferred *next;
} deferred_t;

struct loop {
    int epfd;
    bool stop;
    ltimer_t *timers; /* sorted by due_ms */
    deferred_t *deferred;
    watch_t sigw;
    signal_cb on_signal;
    void *sigdata;
    void (*before_wait)(void *);
    void *before_wait_data;
};

uint64_t
loop_now_ms(void)
{
    return (uint64_t)clock_mono_ms();
}

double
loop_now(void)
{
    return clock_mono();
}

static void
on_signalfd(watch_t *w, uint32_t events)
{
    (void)events;
    loop_t *l = w->data;
    struct signalfd_siginfo si;
    while (read(w->fd, &si, sizeof si) == (ssize_t)sizeof si)
        if (l->on_signal)
            l->on_signal((int)si.ssi_signo, l->sigdata);
}

loop_t *
loop_new(signal_cb on_signal, void *data)
{
    loop_t *l = xcalloc(1, sizeof *l);
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        free(l);
        return NULL;
    }
    l->on_signal = on_signal;
    l->sigdata = data;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd >= 0)
        loop_watch_add(l, &l->sigw, sfd, EPOLLIN, on_signalfd, l);
    signal(SIGPIPE, SIG_IGN);
    return l;
}

/* A paused watch (events == 0) is taken out of the epoll set: epoll reports EPOLLERR and
 * EPOLLHUP even for an empty mask, which would spin on a dead pipe nobody wants to read. */
int
loop_watch_add(loop_t *l, watch_t *w, int fd, uint32_t events, watch_cb cb, void *data)
{
    w->fd = fd;
    w->events = events;
    w->cb = cb;
    w->data = data;
    if (!events)
        return 0;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        w->fd = -1;
        return -errno;
    }
    return 0;
}

void
loop_watch_set(loop_t *l, watch_t *w, uint32_t events)
{
    if (w->fd < 0 || w->events == events)
        return;
    int op = !w->events ? EPOLL_CTL_ADD : !events ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
    w->events = events;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    epoll_ctl(l->epfd, op, w->fd, &ev);
}

void
loop_watch_del(loop_t *l, watch_t *w)
{
    if (w->fd < 0)
        return;
    if (w->events)
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
    w->fd = -1;
    w->events = 0;
}

void
loop_timer_stop(loop_t *l, ltimer_t *t)
{
    if (!t->active)
        return;
    if (t->prev)
        t->prev->next = t->next;
    else
        l->timers = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->next = t->prev = NULL;
    t->active = false;
}

void
loop_timer_start(loop_t *l, ltimer_t *t, uint64_t after_ms, timer_cb cb, void *data)
{
    loop_timer_stop(l, t);
    t->due_ms = loop_now_ms() + after_ms;
    t->cb = cb;
    t->data = data;
    t->active = true;
    ltimer_t **pp = &l->timers, *prev = NULL;
    while (*pp && (*pp)->due_ms <= t->due_ms) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    t->next = *pp;
    t->prev = prev;
    if (*pp)
        (*pp)->prev = t;
    *pp = t;
}

void
loop_defer_free(loop_t *l, void *p, void (*fn)(void *))
{
    deferred_t *d = xmalloc(sizeof *d);
    d->p = p;
    d->fn = fn;
    d->next = l->deferred;
    l->deferred = d;
}

void
loop_run_deferred(loop_t *l)
{
    while (l->deferred) {
        deferred_t *d = l->deferred;
        l->deferred = d->next;
        d->fn(d->p);
        free(d);
    }
}

static void
run_timers(loop_t *l)
{
    uint64_t now = loop_now_ms();
    while (l->timers && l->timers->due_ms <= now) {
        ltimer_t *t = l->timers;
        loop_timer_stop(l, t);
        t->cb(t);
    }
}

void
loop_stop(loop_t *l)
{
    l->stop = true;
}

void
loop_before_wait(loop_t *l, void (*fn)(void *), void *data)
{
    l->before_wait = fn;
    l->before_wait_data = data;
}

void
loop_run(loop_t *l)
{
    struct epoll_event evs[MAX_EVENTS];
    while (!l->stop) {
        if (l->before_wait) {
            l->before_wait(l->before_wait_data);
            loop_run_deferred(l);
        }
        int timeout = -1;
        if (l->timers) {
            uint64_t now = loop_now_ms();
            timeout = l->timers->due_ms <= now ? 0 : (int)(l->timers->due_ms - now);
        }
        int n = epoll_wait(l->epfd, evs, MAX_EVENTS, timeout);
        for (int i = 0; i < n; i++) {
            watch_t *w = evs[i].data.ptr;
            if (w->fd >= 0 && w->events) /* may have been paused or removed in this batch */
                w->cb(w, evs[i].events);
        }
        loop_run_deferred(l);
        run_timers(l);
        loop_run_deferred(l);
    }
}
