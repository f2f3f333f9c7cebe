/* http_rt_unzip.c — upload_file's .zip part (http_rt_upload.c spooled it to an unlinked temp
 * file): checked whole by the zip reader (names, sizes, bombs) before anything is written, then
 * unpacked entry by entry, a directory made, a file streamed into its own file.upload channel
 * under the executor's credit. */
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

/* Unpacks the next entry: a directory is made, a file streamed from the zip reader. */
void
ul_next_entry(ul_t *u)
{
    http_req_t *h = ul_request(u);
    if (!h)
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
        json_set_str(op, "path", target);
        json_set_bool(op, "parents", true);
        err_t err = {0};
        if (!s || session_exec_op(s, op, on_dir_made, (void *)(uintptr_t)h->id, &err) < 0)
            ul_fail(u, ERR_INTERNAL, "%s", s ? err.msg : "Runtime disconnected");
        json_object_put(op);
        return;
    }
    if (zip_entry_open(u->z, i, &u->zerr) < 0) {
        zip_fail(u, u->zerr.msg);
        return;
    }
    u->entry_eof = false;
    if (ul_open_upload(u, target, e->size ? e->size : 1, e->mode) == 0)
        ul_pump(u);
}

/* The part is spooled whole: checked, then unpacked. */
void
ul_unpack(ul_t *u)
{
    zip_limits_t lim = {ZIP_ENTRIES_MAX, g_gw.cfg.upload_max, ZIP_EXPAND_MAX};
    err_t zerr = {0};
    if (zip_reader_open_fd(&u->z, u->spool, &lim, &zerr) < 0) {
        zip_fail(u, zerr.msg);
        return;
    }
    u->phase = UNPACK;
    ul_next_entry(u);
}

/* An entry's next bytes into u->out, EOF to the channel at its end. */
void
ul_pump_entry(ul_t *u)
{
    while (u->st && !u->eof_sent) {
        if (!ul_drain(u))
            return;
        if (u->entry_eof) {
            u->eof_sent = true;
            if (session_stream_eof(u->st) < 0)
                ul_fail(u, ERR_INTERNAL, "the executor stopped taking the upload");
            return; /* on_close goes on */
        }
        char *p = buf_reserve(&u->out, UL_FEED);
        ssize_t k = zip_entry_read(u->z, p, UL_FEED, &u->zerr);
        if (k < 0) {
            zip_fail(u, u->zerr.msg);
            return;
        }
        buf_advance(&u->out, (size_t)k);
        if (k == 0)
            u->entry_eof = true;
    }
}
