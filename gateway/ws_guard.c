/* ws_guard.c — puts ws_frames (the frame-header watch) in front of libwebsockets' reads.
 *
 * Why: Debian's lws 4.1.6 accepts unmasked client frames (RFC 6455 5.1 wants 1002; upstream
 * only refuses them since 2026), drops the TCP connection without a close frame on a 64-bit
 * length with its top bit set and on a control frame with an extended length, and learns a
 * frame's length only to wait for its payload: a header announcing 2^62 bytes gets no answer
 * until the bytes come. Nothing in its API runs between reading bytes and parsing them.
 *
 * How: lws reads every connection with recv(2) (lws_ssl_capable_read_no_ssl) and nothing else
 * in the gateway calls recv (hiredis and libuv use read), so the gateway defines recv() itself;
 * the executable's definition takes precedence over libc's for lws' calls, as an LD_PRELOAD
 * library's would. For a socket attached here it scans what was read and gives lws only the
 * bytes before a refused frame; later bytes are dropped (RFC 6455 7.1.7: no more data is
 * processed from a failed connection), end-of-file and errors still reach lws, which closes
 * once the client does or its close handshake times out. Any other descriptor passes through.
 * Single-threaded, like lws on the gateway's loop. */
#include "ws_guard.h"

#include <errno.h>
#include <libwebsockets.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "ws_frames.h"
#include "xalloc.h"

typedef struct {
    struct lws *wsi;
    int fd;
    ws_frames_t frames;
} guard_t;

static guard_t **by_fd; /* indexed by socket descriptor */
static size_t by_fd_cap;

void
ws_guard_attach(struct lws *wsi, uint64_t max_message)
{
    int fd = lws_get_socket_fd(wsi);
    if (fd < 0)
        return;
    if ((size_t)fd >= by_fd_cap) {
        size_t cap = by_fd_cap ? by_fd_cap : 64;
        while (cap <= (size_t)fd)
            cap *= 2;
        by_fd = xrealloc(by_fd, cap * sizeof *by_fd);
        for (size_t i = by_fd_cap; i < cap; i++)
            by_fd[i] = NULL;
        by_fd_cap = cap;
    }
    guard_t *g = xmalloc(sizeof *g);
    g->wsi = wsi;
    g->fd = fd;
    ws_frames_init(&g->frames, max_message);
    /* Left by a wsi whose destroy we did not see (that wsi is gone: the descriptor is this
     * connection's now). */
    free(by_fd[fd]);
    by_fd[fd] = g;
    lws_set_opaque_user_data(wsi, g);
}

void
ws_guard_detach(struct lws *wsi)
{
    guard_t *g = lws_get_opaque_user_data(wsi);
    if (!g)
        return;
    lws_set_opaque_user_data(wsi, NULL);
    if ((size_t)g->fd < by_fd_cap && by_fd[g->fd] == g)
        by_fd[g->fd] = NULL;
    free(g);
}

uint16_t
ws_guard_failure(struct lws *wsi, const char **reason)
{
    guard_t *g = lws_get_opaque_user_data(wsi);
    if (!g || !ws_frames_failed(&g->frames))
        return 0;
    *reason = g->frames.reason;
    return g->frames.code;
}

bool
ws_guard_unwatched(struct lws *wsi)
{
    guard_t *g = lws_get_opaque_user_data(wsi);
    return g && g->frames.phase == WSF_PLAIN;
}

ssize_t
recv(int fd, void *buf, size_t len, int flags)
{
    ssize_t n = recvfrom(fd, buf, len, flags, NULL, NULL);
    guard_t *g = fd >= 0 && (size_t)fd < by_fd_cap ? by_fd[fd] : NULL;
    if (n <= 0 || !g || (flags & MSG_PEEK))
        return n;
    bool failed = ws_frames_failed(&g->frames);
    size_t ok = ws_frames_scan(&g->frames, buf, (size_t)n);
    if (!failed && ws_frames_failed(&g->frames))
        lws_callback_on_writable(g->wsi);
    if (ok == 0) {
        errno = EAGAIN; /* lws: nothing to parse this time */
        return -1;
    }
    return (ssize_t)ok;
}
