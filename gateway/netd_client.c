/* netd_client.c — see netd_client.h. */
#include "netd_client.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include "gw.h"
#include "json_util.h"
#include "xalloc.h"

#define NETD_MSG_MAX 65536

static int
connect_netd(err_t *err)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (!g_gw.cfg.netd)
        return err_set(err, ERR_UNAVAILABLE,
                       "this gateway has no network service (sandpipe-netd, --netd)");
    if (strlen(g_gw.cfg.netd) >= sizeof a.sun_path)
        return err_set(err, ENAMETOOLONG, "--netd: path too long");
    snprintf(a.sun_path, sizeof a.sun_path, "%s", g_gw.cfg.netd);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    /* bounds connect() too (a netd whose backlog is full) and sendmsg */
    struct timeval tv = {.tv_sec = NETD_TIMEOUT_MS / 1000,
                         .tv_usec = NETD_TIMEOUT_MS % 1000 * 1000};
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = err_set(err, ERR_UNAVAILABLE,
                        "the network service (sandpipe-netd) is not "
                        "running: %s",
                        strerror(errno));
        if (fd >= 0)
            close(fd);
        return e;
    }
    return fd;
}

json_object *
netd_request(json_object *req, int fd, err_t *err)
{
    int s = connect_netd(err);
    if (s < 0)
        return NULL;
    size_t len;
    const char *t = json_text(req, &len);
    struct iovec iov = {.iov_base = (void *)t, .iov_len = len};
    union {
        struct cmsghdr align;
        char space[CMSG_SPACE(sizeof(int))];
    } cm;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&cm, 0, sizeof cm);
        mh.msg_control = cm.space;
        mh.msg_controllen = sizeof cm.space;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    json_object *ans = NULL;
    char *buf = xmalloc(NETD_MSG_MAX);
    struct pollfd p = {.fd = s, .events = POLLIN};
    ssize_t n = -1;
    if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
        err_set(err, ERR_UNAVAILABLE, "the network service: %s", strerror(errno));
    else if (poll(&p, 1, NETD_TIMEOUT_MS) <= 0)
        err_set(err, ERR_TIMEOUT, "the network service did not answer in %d ms", NETD_TIMEOUT_MS);
    else if ((n = recv(s, buf, NETD_MSG_MAX, 0)) <= 0)
        err_set(err, ERR_UNAVAILABLE, "the network service closed the connection");
    else
        ans = json_parse_lossy(buf, (size_t)n, err);
    free(buf);
    close(s);
    if (!ans)
        return NULL;
    json_object *out = NULL;
    if (!json_get_bool(ans, "ok", false)) {
        json_object *e = json_get(ans, "error");
        const char *code = json_get_str(e, "code", "");
        int c = ERR_INTERNAL;
        for (int i = ERR_BASE + 1; i < ERR_LAST; i++)
            if (strcmp(err_name(i), code) == 0)
                c = i;
        err_set(err, c, "%s", json_get_str(e, "message", "the network service refused"));
    } else {
        out = json_get(ans, "info") ? json_object_get(json_get(ans, "info"))
                                    : json_object_new_object();
    }
    json_object_put(ans);
    return out;
}

/* ---- the subscription ---- */

static struct {
    uv_poll_t poll;
    uv_timer_t retry;
    bool polling, timer_init, stopped;
    int fd;
    void (*on_event)(json_object *ev);
} sub = {.fd = -1};

static void subscribe_now(void);

static void
on_retry(uv_timer_t *t)
{
    (void)t;
    subscribe_now();
}

static void
retry_later(void)
{
    if (sub.stopped)
        return;
    if (!sub.timer_init) {
        uv_timer_init(g_gw.loop, &sub.retry);
        sub.timer_init = true;
    }
    uv_timer_start(&sub.retry, on_retry, 1000, 0);
}

static void
on_poll_closed(uv_handle_t *h)
{
    (void)h;
    if (sub.fd >= 0)
        close(sub.fd);
    sub.fd = -1;
    retry_later();
}

static void
on_readable(uv_poll_t *p, int status, int events)
{
    (void)events;
    char *buf = xmalloc(NETD_MSG_MAX);
    ssize_t n = status < 0 ? -1 : recv(sub.fd, buf, NETD_MSG_MAX, MSG_DONTWAIT);
    if (n < 0 && status >= 0 && (errno == EAGAIN || errno == EINTR)) {
        free(buf);
        return;
    }
    if (n <= 0) { /* netd went away: subscribe again once it is back */
        free(buf);
        GW_LOG("the network service closed its events; subscribing again");
        uv_poll_stop(p);
        sub.polling = false; /* closing: netd_unsubscribe must not close it again */
        uv_close((uv_handle_t *)p, on_poll_closed);
        return;
    }
    err_t err = {0};
    json_object *ev = json_parse_lossy(buf, (size_t)n, &err);
    free(buf);
    if (ev && json_get(ev, "ev") && sub.on_event)
        sub.on_event(ev);
    json_object_put(ev);
}

static void
subscribe_now(void)
{
    err_t err = {0};
    int fd = connect_netd(&err);
    if (fd < 0) {
        retry_later();
        return;
    }
    const char *req = "{\"op\":\"subscribe\"}";
    char ans[256];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0 || poll(&p, 1, NETD_TIMEOUT_MS) <= 0 ||
        recv(fd, ans, sizeof ans, 0) <= 0) {
        close(fd);
        retry_later();
        return;
    }
    sub.fd = fd;
    uv_poll_init(g_gw.loop, &sub.poll, fd);
    sub.polling = true;
    uv_poll_start(&sub.poll, UV_READABLE, on_readable);
}

void
netd_subscribe(void (*on_event)(json_object *ev))
{
    sub.on_event = on_event;
    if (g_gw.cfg.netd)
        subscribe_now();
}

void
netd_unsubscribe(void)
{
    sub.stopped = true;
    if (sub.timer_init) {
        uv_timer_stop(&sub.retry);
        uv_close((uv_handle_t *)&sub.retry, NULL);
        sub.timer_init = false;
    }
    if (sub.polling) {
        uv_poll_stop(&sub.poll);
        sub.polling = false;
        uv_close((uv_handle_t *)&sub.poll, NULL);
        close(sub.fd);
        sub.fd = -1;
    }
}
