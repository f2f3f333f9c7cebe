/* sandbox_destroy.c — providers' destroys on libuv's thread pool (sandbox_destroy.h). */
#include "sandbox_destroy.h"

#include <stdlib.h>

#include "gw.h"
#include "work_queue.h"
#include "xalloc.h"

typedef struct destroy_job {
    work_item_t item; /* first: the queue's item is the job */
    const provider_t *p;
    sandbox_t sb;
    sandbox_destroyed_fn done;
    void *ud;
    err_t err; /* written by the worker */
    int result;
} destroy_job_t;

static work_queue_t destroys = WORK_QUEUE_INIT(SANDBOX_DESTROYS_MAX);
static int on_loop; /* Docker's, begun and not yet answered (an idle callback away) */

static void
on_work(work_item_t *it)
{
    destroy_job_t *j = (destroy_job_t *)it;
    j->result = j->p->destroy(&j->sb, true, &j->err);
}

static void
on_work_done(work_item_t *it)
{
    destroy_job_t *j = (destroy_job_t *)it;
    if (j->result < 0)
        GW_LOG("sandbox %s: destroy: %s", j->sb.id, j->err.msg);
    if (j->done)
        j->done(j->ud, j->result < 0 ? (j->err.code ? j->err.code : -1) : 0,
                j->result < 0 ? j->err.msg : NULL);
    free(j);
}

/* Docker's destroy only sends the removal: done follows on the next loop turn, as from a
 * thread, so that no caller is called back from within sandbox_destroy. */
static void
on_loop_done(uv_handle_t *h)
{
    destroy_job_t *j = h->data;
    free(h);
    on_loop--;
    on_work_done(&j->item);
}

static void
on_idle(uv_idle_t *h)
{
    uv_idle_stop(h);
    uv_close((uv_handle_t *)h, on_loop_done);
}

void
sandbox_destroy(const provider_t *p, const sandbox_t *sb, sandbox_destroyed_fn done, void *ud)
{
    destroy_job_t *j = xcalloc(1, sizeof *j);
    j->p = p;
    j->sb = *sb;
    j->done = done;
    j->ud = ud;
    if (!p->destroy_async) {
        work_queue_push(&destroys, &j->item, on_work, on_work_done);
        return;
    }
    on_work(&j->item);
    uv_idle_t *idle = xcalloc(1, sizeof *idle);
    uv_idle_init(g_gw.loop, idle);
    idle->data = j;
    on_loop++;
    uv_idle_start(idle, on_idle);
}

void
sandbox_discard(const sandbox_t *sb)
{
    const provider_t *p = sb ? provider_find(sb->provider) : NULL;
    if (p)
        sandbox_destroy(p, sb, NULL, NULL);
}

int
sandbox_destroy_pending(void)
{
    return destroys.running + destroys.waiting + on_loop;
}
