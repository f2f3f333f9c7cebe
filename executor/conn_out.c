/* conn_out.c — how a connection's frames leave. Small frames queue in `out` and leave together
 * at the end of the loop's turn (conn_flush_queued): a command's last output, its observation
 * and a credit grant reach the client in one write and one wake-up, not one each. A large frame
 * (streamed output) is written at once, after what is queued, without copying its payload;
 * whatever the socket does not take waits in `out` for EPOLLOUT. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "conn_int.h"
#include "executor.h"
#include "frame.h"
#include "json_util.h"

/* Frames with a payload up to this are copied into `out` and sent at the turn's end. */
#define QUEUE_MAX_PAYLOAD 4096

size_t
conn_pending(const conn_t *c)
{
    return c->out.len - c->out_off;
}

void
conn_flush_out(conn_t *c)
{
    while (conn_pending(c) > 0) {
        ssize_t n = write(c->w.fd, c->out.data + c->out_off, conn_pending(c));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                break;
            conn_close(c);
            return;
        }
        c->out_off += (size_t)n;
    }
    if (conn_pending(c) == 0) {
        buf_clear(&c->out);
        c->out_off = 0;
        loop_watch_set(g_exec.loop, &c->w, EPOLLIN);
    } else {
        if (c->out_off > (1u << 20)) {
            buf_consume(&c->out, c->out_off);
            c->out_off = 0;
        }
        loop_watch_set(g_exec.loop, &c->w, EPOLLIN | EPOLLOUT);
    }
}

void
conn_send_frame(conn_t *c, uint8_t type, uint8_t flags, uint32_t channel, const void *p, size_t n)
{
    if (c->closing)
        return;
    uint8_t hdr[FRAME_HEADER_LEN];
    frame_encode_header(hdr, type, flags, channel, (uint32_t)n);
    size_t queued = conn_pending(c), done = 0, total = queued + sizeof hdr + n;
    /* EPOLLOUT armed: the socket was full, everything waits in order behind it. */
    if (n > QUEUE_MAX_PAYLOAD && !(c->w.events & EPOLLOUT)) {
        struct iovec iov[3] = {
            {c->out.data + c->out_off, queued}, {hdr, sizeof hdr}, {(void *)p, n}};
        ssize_t w;
        do
            w = writev(c->w.fd, iov + (queued ? 0 : 1), queued ? 3 : 2);
        while (w < 0 && errno == EINTR);
        if (w > 0)
            done = (size_t)w;
        if (done == total) {
            buf_clear(&c->out);
            c->out_off = 0;
            return;
        }
    }
    if (done < queued) {
        c->out_off += done;
        buf_append(&c->out, hdr, sizeof hdr);
        buf_append(&c->out, p, n);
    } else {
        buf_clear(&c->out);
        c->out_off = 0;
        done -= queued;
        if (done < sizeof hdr) {
            buf_append(&c->out, hdr + done, sizeof hdr - done);
            buf_append(&c->out, p, n);
        } else {
            buf_append(&c->out, (const uint8_t *)p + (done - sizeof hdr), sizeof hdr + n - done);
        }
    }
    if (done > 0 || n > QUEUE_MAX_PAYLOAD) /* the socket took less than all: wait for room */
        loop_watch_set(g_exec.loop, &c->w, EPOLLIN | EPOLLOUT);
}

void
conn_flush_queued(void *unused)
{
    (void)unused;
    for (conn_t *c = g_open, *next; c; c = next) {
        next = c->next_open; /* flush_out may close c */
        if (conn_pending(c) > 0 && !(c->w.events & EPOLLOUT))
            conn_flush_out(c);
    }
}

/* Every JSON text we send is UTF-8 (docs/protocol.md): names are carried as json_set_name
 * writes them, and anything else that is not UTF-8 (a path in an error message, a working
 * directory) has its bad bytes written as U+FFFD here, the one way out. */
void
conn_send_json(conn_t *c, uint8_t type, uint32_t channel, json_object *obj)
{
    size_t len;
    char *fixed;
    const char *s = json_valid_text(json_text(obj, &len), &len, &fixed);
    if (len > FRAME_MAX_PAYLOAD) {
        /* Never send what a peer must refuse: say what was too big instead. */
        char msg[160];
        int n =
            snprintf(msg, sizeof msg,
                     "{\"error\":{\"code\":\"too_large\",\"message\":\"a %s of %zu bytes exceeds "
                     "max_frame (%u)\"}}",
                     frame_type_name(type), len, FRAME_MAX_PAYLOAD);
        conn_send_frame(c, type, 0, channel, msg, (size_t)n);
    } else {
        conn_send_frame(c, type, 0, channel, s, len);
    }
    free(fixed);
}

void
conn_send_error(conn_t *c, uint32_t channel, int code, const char *msg)
{
    json_object *e = json_error_new(code, msg);
    conn_send_json(c, FRAME_ERROR, channel, e);
    json_object_put(e);
}
