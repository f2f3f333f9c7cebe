/* sandbox_log.c — a sandbox's output pipe into the gateway's log (sandbox_log.h). */
#include "sandbox_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw.h"
#include "xalloc.h"

typedef struct {
    uv_poll_t poll;
    int fd;
    char id[64];
    char line[SANDBOX_LOG_LINE];
    size_t len;
    double tokens;              /* bytes it may still log now */
    uint64_t refilled;          /* loop time (ms) of the last refill */
    unsigned long long dropped; /* since the last line that said so */
} watch_t;

static unsigned long long dropped_total;

unsigned long long
sandbox_log_dropped(void)
{
    return dropped_total;
}

static void
refill(watch_t *w)
{
    uint64_t now = uv_now(g_gw.loop);
    w->tokens += (double)(now - w->refilled) * SANDBOX_LOG_RATE / 1000.0;
    if (w->tokens > SANDBOX_LOG_BURST)
        w->tokens = SANDBOX_LOG_BURST;
    w->refilled = now;
}

static void
emit(watch_t *w)
{
    if (!w->len)
        return;
    refill(w);
    if (w->tokens < (double)w->len) {
        w->dropped += w->len;
        dropped_total += w->len;
    } else {
        w->tokens -= (double)w->len;
        if (w->dropped)
            GW_LOG("sandbox %s: %llu bytes of its output dropped (over %d bytes/s)", w->id,
                   w->dropped, SANDBOX_LOG_RATE);
        w->dropped = 0;
        /* escaped: four bytes out for each one in at most */
        char out[SANDBOX_LOG_LINE * 4 + 1];
        size_t o = 0;
        for (size_t i = 0; i < w->len; i++) {
            unsigned char c = (unsigned char)w->line[i];
            if (c >= 0x20 && c < 0x7f && c != '\\')
                out[o++] = (char)c;
            else
                o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02x", c);
        }
        out[o] = '\0';
        GW_LOG("sandbox %s: %s", w->id, out);
    }
    w->len = 0;
}

static void
on_closed(uv_handle_t *h)
{
    free(h->data);
}

static void
on_readable(uv_poll_t *p, int status, int events)
{
    (void)events;
    watch_t *w = p->data;
    char buf[4096];
    ssize_t n = -1;
    /* at most 64 KiB a turn: one sandbox cannot hold the loop */
    for (int round = 0; status == 0 && round < 16; round++) {
        n = read(w->fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n' || w->len == sizeof w->line)
                emit(w);
            if (buf[i] != '\n')
                w->line[w->len++] = buf[i];
        }
    }
    if (status == 0 && (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))))
        return;
    emit(w); /* the end: every writer is gone (or the pipe failed) */
    if (w->dropped)
        GW_LOG("sandbox %s: %llu bytes of its output dropped (over %d bytes/s)", w->id, w->dropped,
               SANDBOX_LOG_RATE);
    uv_poll_stop(p);
    close(w->fd);
    uv_close((uv_handle_t *)p, on_closed);
}

void
sandbox_log_watch(const char *sandbox_id, int fd)
{
    watch_t *w = xcalloc(1, sizeof *w);
    w->fd = fd;
    snprintf(w->id, sizeof w->id, "%s", sandbox_id);
    w->tokens = SANDBOX_LOG_BURST;
    w->refilled = uv_now(g_gw.loop);
    if (uv_poll_init(g_gw.loop, &w->poll, fd) != 0) {
        close(fd);
        free(w);
        return;
    }
    w->poll.data = w;
    uv_poll_start(&w->poll, UV_READABLE, on_readable);
}
