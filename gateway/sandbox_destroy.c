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
    err_t err;  /* the daemon's refusal (remove), or the worker's */
    int result; /* < 0: failed; the host's part is not run after a failed remove */
} destroy_job_t;

static work_queue_t destroys = WORK_QUEUE_INIT(SANDBOX_DESTROYS_MAX);
static int removing; /* a daemon asked to remove a sandbox (provider_t.remove), not answered */

static void
on_work(work_item_t *it)
{
    destroy_job_t *j = (destroy_job_t *)it;
    if (j->result >= 0)
        j->result = j->p->destroy(&j->sb, true, &j->err);
}

static void
on_work_done(work_item_t *it)
{
    destroy_job_t *j = (destroy_job_t *)it;
    if (j->result < 0)
        GW_LOG("sandbox %s: destroy: %s", j->sb.id, j->err.msg);
    if (j->done)
        j->done(j->ud, j->result < 0 ? (j->err.code ? j->err.code : ERR_FAILED) : 0,
                j->result < 0 ? j->err.msg : NULL);
    free(j);
}

static void
on_removed(void *ud, int code, const char *error)
{
    destroy_job_t *j = ud;
    removing--;
    if (code)
        j->result = err_set(&j->err, code, "%s", error);
    work_queue_push(&destroys, &j->item, on_work, on_work_done, j->item.urgent);
}

void
sandbox_destroy(const provider_t *p, const sandbox_t *sb, sandbox_destroyed_fn done, void *ud,
                bool urgent)
{
    destroy_job_t *j = xcalloc(1, sizeof *j);
    j->p = p;
    j->sb = *sb;
    j->done = done;
    j->ud = ud;
    j->item.urgent = urgent;
    if (p->remove) {
        if (p->remove(&j->sb, on_removed, j, &j->err) == 0) {
            removing++;
            return;
        }
        j->result = -1; /* answered through the queue all the same: never from within */
    }
    work_queue_push(&destroys, &j->item, on_work, on_work_done, urgent);
}

void
sandbox_discard(const sandbox_t *sb)
{
    const provider_t *p = sb ? provider_find(sb->provider) : NULL;
    if (p)
        sandbox_destroy(p, sb, NULL, NULL, false);
}

void
sandbox_destroy_stop(void)
{
    work_item_t *keep = NULL, **kept = &keep;
    for (work_item_t *it; (it = work_queue_take_waiting(&destroys));) {
        destroy_job_t *j = (destroy_job_t *)it;
        if (!j->done) { /* a discard: nobody would carry it out later */
            *kept = it;
            kept = &it->next;
            continue;
        }
        j->done(j->ud, ERR_BUSY, "the gateway is stopping (its restart destroys the sandbox)");
        free(j);
    }
    for (work_item_t *it = keep, *next; it; it = next) {
        next = it->next;
        work_queue_push(&destroys, it, on_work, on_work_done, false);
    }
}

int
sandbox_destroy_pending(void)
{
    return destroys.running + destroys.waiting + removing;
}
