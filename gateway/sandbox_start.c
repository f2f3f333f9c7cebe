/* sandbox_start.c — providers' creates on libuv's thread pool (sandbox_start.h).
 *
 * Why the thread pool and not a vfork-like child waited for through a pidfd: the blocking part
 * is not the fork alone but the whole create (directories, uid claim, cgroup, disk mount, user
 * namespace holder, the two forks and the exec), all written as plain blocking calls; running
 * that code unchanged on a worker keeps every guarantee it makes (and its one error path) and
 * takes all of it off the loop. The loop hands a job over and gets it back; nothing else is
 * shared but the providers' caches, which guard themselves. */
#include "sandbox_start.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw.h"
#include "sandbox_log.h"
#include "work_queue.h"
#include "xalloc.h"

typedef struct start_job {
    work_item_t item; /* first: the queue's item is the job */
    const provider_t *p;
    sandbox_spec_t spec; /* its strings and env are the job's own copies */
    sandbox_started_fn done;
    void *ud;
    /* written by the worker, read on the loop after it */
    sandbox_t sb;
    err_t err;
    int result;
    int log_fd; /* the sandbox's output pipe, for sandbox_log_watch on the loop */
} start_job_t;

static work_queue_t starts = WORK_QUEUE_INIT(SANDBOX_STARTS_MAX);

/* The job whose create runs on this thread (provider_log_sink's caller), else NULL. */
static __thread start_job_t *current;

static char *
dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static void
job_free(start_job_t *j)
{
    free((char *)j->spec.id);
    free((char *)j->spec.profile);
    free((char *)j->spec.image);
    free((char *)j->spec.rootfs);
    free((char *)j->spec.state_dir);
    free((char *)j->spec.executor_path);
    json_object_put(j->spec.env);
    if (j->log_fd >= 0)
        close(j->log_fd);
    free(j);
}

void
sandbox_start_log_sink(const char *sandbox_id, int fd)
{
    if (!current) {
        sandbox_log_watch(sandbox_id, fd);
        return;
    }
    if (current->log_fd >= 0)
        close(current->log_fd);
    current->log_fd = fd;
}

static void
on_work(work_item_t *it)
{
    start_job_t *j = (start_job_t *)it;
    current = j;
    j->result = j->p->create(&j->spec, &j->sb, &j->err);
    current = NULL;
}

static void
on_work_done(work_item_t *it)
{
    start_job_t *j = (start_job_t *)it;
    if (j->result >= 0 && j->log_fd >= 0) {
        sandbox_log_watch(j->sb.id, j->log_fd);
        j->log_fd = -1;
    }
    if (j->result >= 0)
        j->done(j->ud, &j->sb, 0, NULL);
    else
        j->done(j->ud, NULL, j->err.code ? j->err.code : EIO,
                j->err.msg[0] ? j->err.msg : "the sandbox did not start");
    job_free(j);
}

int
sandbox_start(const provider_t *p, const sandbox_spec_t *spec, sandbox_started_fn done, void *ud,
              err_t *err)
{
    if (g_gw.stopping)
        return err_set(err, ERR_BUSY, "the gateway is stopping");
    json_object *env = NULL;
    if (spec->env && json_object_deep_copy(spec->env, &env, NULL) < 0)
        return err_set(err, ENOMEM, "sandbox start: cannot copy its env");
    start_job_t *j = xcalloc(1, sizeof *j);
    j->p = p;
    j->spec = *spec;
    j->spec.id = dup_or_null(spec->id);
    j->spec.profile = dup_or_null(spec->profile);
    j->spec.image = dup_or_null(spec->image);
    j->spec.rootfs = dup_or_null(spec->rootfs);
    j->spec.state_dir = dup_or_null(spec->state_dir);
    j->spec.executor_path = dup_or_null(spec->executor_path);
    j->spec.env = env;
    j->done = done;
    j->ud = ud;
    j->log_fd = -1;
    work_queue_push(&starts, &j->item, on_work, on_work_done, false);
    return 0;
}

void
sandbox_start_stop(void)
{
    for (work_item_t *it; (it = work_queue_take_waiting(&starts));) {
        start_job_t *j = (start_job_t *)it;
        j->done(j->ud, NULL, ERR_BUSY, "the gateway is stopping");
        job_free(j);
    }
}

int
sandbox_start_running(void)
{
    return starts.running;
}
