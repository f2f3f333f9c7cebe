/* http_rt_unzip.c — upload_file's .zip part (http_rt_upload.c spooled it to an unlinked temp
 * file): checked whole by the zip reader (names, sizes, bombs) before anything is written, then
 * unpacked entry by entry, a directory made, a file streamed into its own file.upload channel
 * under the executor's credit. The checking and inflating run on libuv's threadpool
 * (http_rt_unzip_work.c); this file moves the upload on when their results are back. */
#include "http_rt_upload_int.h"

#include <stdint.h>

#include "gw.h"
#include "json_util.h"

static void
zip_fail(ul_t *u, const char *why)
{
    ul_fail(u, ERR_INTERNAL, "%s is not a valid zip file: %s", u->filename, why);
}

static void
on_dir_made(void *ud, json_object *res)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    ul_t *u = h ? h->ud : NULL;
    if (!u || u->phase != UNPACK)
        return;
    json_object *err = json_get(res, "error");
    if (err)
        ul_fail(u, ERR_INTERNAL, "%s", json_get_str(err, "message", "mkdir failed"));
    else
        ul_next_entry(u);
}

/* Unpacks the next entry: a directory is made, a file's channel opened and its bytes read
 * (by a job: ul_pump_entry). Runs with no job in flight (at the start or an entry's end). */
void
ul_next_entry(ul_t *u)
{
    http_req_t *h = ul_request(u);
    if (!h || u->job.busy)
        return;
    if (u->entry >= zip_reader_count(u->z)) {
        ul_succeed(u);
        return;
    }
    size_t i = u->entry++;
    const zip_entry_t *e = zip_reader_entry(u->z, i);
    char target[RT_PATH_MAX];
    if (http_rt_join(target, sizeof target, u->dest, e->path) < 0) {
        ul_fail(u, ERR_INTERNAL, "zip entry path too long: %.200s", e->path);
        return;
    }
    if (e->is_dir) {
        gw_session_t *s = session_find(u->sid);
        json_object *op = json_object_new_object();
        json_set_str(op, "op", "file.mkdir");
        json_set_name(op, "path", target);
        json_set_bool(op, "parents", true);
        err_t err = {0};
        if (!s || session_exec_op(s, op, on_dir_made, (void *)(uintptr_t)h->id, &err) < 0)
            ul_fail(u, ERR_INTERNAL, "%s", s ? err.msg : "Runtime disconnected");
        json_object_put(op);
        return;
    }
    u->cur = i;
    u->entry_open = false;
    u->entry_eof = false;
    /* The channel first, so an executor that goes away meanwhile ends the inflating too (a
     * bad local header cancels it, and the executor drops its empty temp file). */
    if (ul_open_upload(u, target, e->size ? e->size : 1, e->mode) == 0)
        ul_pump(u);
}

/* The part is spooled whole: checked (a job), then unpacked. */
void
ul_unpack(ul_t *u)
{
    u->phase = CHECK;
    ul_job_check(u);
}

void
ul_checked(ul_t *u)
{
    if (u->job.rc < 0) {
        zip_fail(u, u->job.err.msg);
        return;
    }
    u->z = u->job.z;
    u->job.z = NULL;
    u->phase = UNPACK;
    ul_next_entry(u);
}

/* An inflate job is back: its bytes join what the channel has not taken yet. */
void
ul_inflated(ul_t *u)
{
    if (u->job.rc < 0) {
        zip_fail(u, u->job.err.msg);
        return;
    }
    if (!u->out.len) { /* swap rather than copy */
        buf_t t = u->out;
        u->out = u->job.data;
        u->job.data = t;
    } else {
        buf_append(&u->out, u->job.data.data, u->job.data.len);
    }
    u->entry_eof = u->job.eof;
    ul_pump(u);
}

/* The entry's bytes into the channel within its credit; the next ones asked of a job while
 * less than one job's worth waits (so inflating and sending overlap, and the gateway holds at
 * most two chunks per upload); EOF once the entry ended and all of it went. */
void
ul_pump_entry(ul_t *u)
{
    if (!u->st || u->eof_sent)
        return;
    bool all_sent = ul_drain(u);
    if (u->phase != UNPACK || !u->st)
        return; /* failed */
    if (u->job.busy)
        return; /* ul_inflated goes on */
    if (u->entry_eof) {
        if (!all_sent)
            return; /* on_writable goes on */
        u->eof_sent = true;
        if (session_stream_eof(u->st) < 0)
            ul_fail(u, ERR_INTERNAL, "the executor stopped taking the upload");
        return; /* on_close goes on */
    }
    if (u->out.len < UL_ZCHUNK)
        ul_job_inflate(u);
}
