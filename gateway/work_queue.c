/* work_queue.c — blocking jobs on libuv's thread pool, a bounded number at once (work_queue.h). */
#include "work_queue.h"

#include <stddef.h>

#include "gw.h"

static void run_next(work_queue_t *q);

static void
on_work(uv_work_t *req)
{
    work_item_t *it = req->data;
    it->work(it);
}

static void
on_done(uv_work_t *req, int status)
{
    (void)status; /* never cancelled: uv_cancel is not used */
    work_item_t *it = req->data;
    work_queue_t *q = it->q;
    q->running--;
    it->done(it); /* may free it */
    run_next(q);
}

static void
run_next(work_queue_t *q)
{
    while (q->running < q->max && q->head) {
        work_item_t *it = work_queue_take_waiting(q);
        q->running++;
        it->req.data = it;
        uv_queue_work(g_gw.loop, &it->req, on_work, on_done); /* fails for NULL work only */
    }
}

void
work_queue_push(work_queue_t *q, work_item_t *it, work_fn work, work_fn done, bool urgent)
{
    it->q = q;
    it->work = work;
    it->done = done;
    it->urgent = urgent;
    work_item_t **at = urgent ? (q->urgent_tail ? &q->urgent_tail->next : &q->head)
                              : (q->tail ? &q->tail->next : &q->head);
    it->next = *at;
    *at = it;
    if (!it->next)
        q->tail = it;
    if (urgent)
        q->urgent_tail = it;
    q->waiting++;
    run_next(q);
}

work_item_t *
work_queue_take_waiting(work_queue_t *q)
{
    work_item_t *it = q->head;
    if (!it)
        return NULL;
    q->head = it->next;
    if (!q->head)
        q->tail = NULL;
    if (q->urgent_tail == it)
        q->urgent_tail = NULL;
    q->waiting--;
    it->next = NULL;
    return it;
}
