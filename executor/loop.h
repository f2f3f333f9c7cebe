/* loop.h — the executor's event loop: epoll for fds, a sorted list of timers, signalfd for
 * SIGCHLD/SIGTERM, and deferred frees so an object closed while an epoll batch is being
 * dispatched stays valid until the batch ends. Single-threaded; no allocation per event. */
#ifndef SP_LOOP_H
#define SP_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

typedef struct loop loop_t;
typedef struct watch watch_t;
typedef struct ltimer ltimer_t;

typedef void (*watch_cb)(watch_t *w, uint32_t events);
typedef void (*timer_cb)(ltimer_t *t);
typedef void (*signal_cb)(int signo, void *data);

struct watch {
    int fd;          /* -1 once removed */
    uint32_t events; /* EPOLLIN/EPOLLOUT currently requested */
    watch_cb cb;
    void *data;
};

struct ltimer {
    uint64_t due_ms;
    timer_cb cb;
    void *data;
    ltimer_t *next, *prev;
    bool active;
};

loop_t *loop_new(signal_cb on_signal, void *data);

/* Registers fd; events may be 0 (registered but paused). Returns 0 or -errno. */
int loop_watch_add(loop_t *l, watch_t *w, int fd, uint32_t events, watch_cb cb, void *data);
void loop_watch_set(loop_t *l, watch_t *w, uint32_t events);
/* Unregisters (does not close the fd). Safe to call twice. */
void loop_watch_del(loop_t *l, watch_t *w);

void loop_timer_start(loop_t *l, ltimer_t *t, uint64_t after_ms, timer_cb cb, void *data);
void loop_timer_stop(loop_t *l, ltimer_t *t);

/* Frees p with fn after the current dispatch batch (p stays valid until then). */
void loop_defer_free(loop_t *l, void *p, void (*fn)(void *));
/* Runs the deferred frees now (after loop_run returned). */
void loop_run_deferred(loop_t *l);

/* Calls fn(data) once per turn, after the turn's handlers and timers and before the loop
 * waits again: conn.c writes what a turn queued then, one write per connection. One hook. */
void loop_before_wait(loop_t *l, void (*fn)(void *), void *data);

/* Runs until loop_stop(). */
void loop_run(loop_t *l);
void loop_stop(loop_t *l);

uint64_t loop_now_ms(void);
double loop_now(void); /* monotonic seconds */

#endif
