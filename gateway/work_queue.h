/* work_queue.h — blocking jobs on libuv's thread pool, at most a queue's own number at once and
 * the rest waiting in order of arrival (sandbox_start.c, sandbox_destroy.c).
 *
 * libuv's pool is small (4 threads) and shared with the Sentinel lookups and zip uploads; a
 * queue that could take all of it would starve them, and a burst of starts or destroys (a pool
 * refilling, 5,000 sessions ending) would hold every thread for seconds. A queue bounds its own
 * share. Everything runs on the gateway's loop except work, which runs on a pool thread. */
#ifndef SP_WORK_QUEUE_H
#define SP_WORK_QUEUE_H

#include <stdbool.h>
#include <uv.h>

typedef struct work_item work_item_t;
typedef void (*work_fn)(work_item_t *it);

struct work_item {
    uv_work_t req;
    work_item_t *next; /* waiting for a free slot */
    bool urgent;       /* waits ahead of the others (someone waits for it) */
    struct work_queue *q;
    work_fn work; /* on a pool thread */
    work_fn done; /* on the loop, once work returned (it may free the item) */
};

typedef struct work_queue {
    int max;     /* at most this many on threads at once */
    int running; /* on threads now */
    int waiting; /* queued behind them */
    work_item_t *head, *tail;
    work_item_t *urgent_tail; /* the last urgent one waiting (they come first, in order) */
} work_queue_t;

#define WORK_QUEUE_INIT(n)                                                                         \
    {                                                                                              \
        .max = (n)                                                                                 \
    }

/* Runs work(it) on a pool thread as soon as the queue has a free slot, then done(it) on the
 * loop; never calls either from within this call. An urgent item waits ahead of those that
 * are not. */
void work_queue_push(work_queue_t *q, work_item_t *it, work_fn work, work_fn done, bool urgent);

/* The first item still waiting (not begun), taken off the queue; NULL if none. */
work_item_t *work_queue_take_waiting(work_queue_t *q);

#endif
