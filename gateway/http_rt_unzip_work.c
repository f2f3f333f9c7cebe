/* http_rt_unzip_work.c — upload_file's disk and zlib work off the gateway's event loop: writing
 * a zip part to its spool, checking the spooled zip whole (zip_reader_open: every central
 * directory entry read and checked), opening an entry and inflating its next UL_ZCHUNK bytes.
 * Each runs as one uv_queue_work job on libuv's threadpool, one job per upload at a time; the
 * loop gets the result in the after-work callback and hands the bytes to the executor under
 * its credit as before. So a large, highly compressed or hostile zip (runs of empty deflate
 * blocks) costs the loop only the channel writes, and every other session goes on.
 *
 * Sharing (http_rt_upload_int.h, ul_job_t): while a job is in flight the worker alone touches
 * the job, u->z and u->spool; the loop touches only job.cancel (atomic), which the worker reads
 * between steps of at most UL_FEED bytes out or ZIP_READ_IDLE_MAX bytes in. An upload that
 * ends meanwhile (answered, client gone, executor gone, gateway stopping) sets cancel; one
 * whose request is gone is freed in the after-work callback (ul_release). */
#include "http_rt_upload_int.h"

#include <errno.h>
#include <string.h>

#include "gw.h"
#include "io.h"

/* Inflate jobs that found nothing but empty blocks for this many rounds hand the thread back
 * (the loop queues the next one): one hostile entry does not hold a pool thread for long. */
#define IDLE_ROUNDS_MAX 8

static ul_t *
job_owner(uv_work_t *req)
{
    return req->data;
}

static bool
stopped(ul_job_t *j)
{
    return atomic_load_explicit(&j->cancel, memory_order_relaxed);
}

/* ---- on a pool thread ---- */

static void
do_spool(ul_t *u, ul_job_t *j)
{
    j->rc = io_write_all(u->spool, j->data.data, j->data.len);
    if (j->rc < 0)
        err_set(&j->err, -j->rc, "cannot spool the upload: %s", strerror(-j->rc));
}

static void
do_check(ul_t *u, ul_job_t *j)
{
    j->rc = zip_reader_open_fd(&j->z, u->spool, &j->lim, &j->err);
}

static void
do_inflate(ul_t *u, ul_job_t *j)
{
    j->rc = 0;
    if (j->open_entry && (j->rc = zip_entry_open(u->z, j->entry, &j->err)) < 0)
        return;
    for (int idle = 0; j->data.len < UL_ZCHUNK && !stopped(j);) {
        char *p = buf_reserve(&j->data, UL_FEED);
        ssize_t k = zip_entry_read(u->z, p, UL_FEED, &j->err);
        if (k == -EAGAIN) { /* empty deflate blocks so far */
            if (++idle >= IDLE_ROUNDS_MAX)
                return;
            continue;
        }
        if (k < 0) {
            j->rc = (int)k;
            return;
        }
        if (k == 0) {
            j->eof = true;
            return;
        }
        buf_advance(&j->data, (size_t)k);
    }
}

static void
on_work(uv_work_t *req)
{
    ul_t *u = job_owner(req);
    ul_job_t *j = &u->job;
    if (stopped(j))
        return;
    switch (j->kind) {
    case JOB_SPOOL: do_spool(u, j); break;
    case JOB_CHECK: do_check(u, j); break;
    case JOB_INFLATE: do_inflate(u, j); break;
    }
}

/* ---- on the loop ---- */

static void
on_work_done(uv_work_t *req, int status)
{
    ul_t *u = job_owner(req);
    ul_job_t *j = &u->job;
    j->busy = false;
    if (u->gone) {
        ul_release(u);
        return;
    }
    if (status < 0 || stopped(j) || u->phase == DONE) {
        zip_reader_free(j->z); /* a check whose upload ended meanwhile */
        j->z = NULL;
        return;
    }
    switch (j->kind) {
    case JOB_SPOOL: ul_spooled(u); break;
    case JOB_CHECK: ul_checked(u); break;
    case JOB_INFLATE: ul_inflated(u); break;
    }
}

static void
queue(ul_t *u, int kind)
{
    ul_job_t *j = &u->job;
    j->kind = kind;
    j->rc = 0;
    j->err = (err_t){0};
    j->busy = true;
    j->req.data = u;
    /* uv_queue_work fails only for a NULL callback */
    uv_queue_work(g_gw.loop, &j->req, on_work, on_work_done);
}

void
ul_job_spool(ul_t *u)
{
    buf_t t = u->job.data; /* the loop's bytes go; the job's (emptied) buffer comes back */
    buf_clear(&t);
    u->job.data = u->out;
    u->out = t;
    queue(u, JOB_SPOOL);
}

void
ul_job_check(ul_t *u)
{
    u->job.lim = (zip_limits_t){ZIP_ENTRIES_MAX, g_gw.cfg.upload_max, ZIP_EXPAND_MAX};
    u->job.z = NULL;
    queue(u, JOB_CHECK);
}

void
ul_job_inflate(ul_t *u)
{
    buf_clear(&u->job.data);
    u->job.entry = u->cur;
    u->job.open_entry = !u->entry_open;
    u->job.eof = false;
    u->entry_open = true;
    queue(u, JOB_INFLATE);
}

void
ul_job_stop(ul_t *u)
{
    atomic_store_explicit(&u->job.cancel, true, memory_order_relaxed);
}

void
ul_job_free(ul_t *u)
{
    buf_free(&u->job.data);
    zip_reader_free(u->job.z);
    u->job.z = NULL;
}
