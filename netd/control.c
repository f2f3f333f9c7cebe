/* control.c — see control.h. */
#include "control.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "json_util.h"
#include "loop.h"
#include "netd.h"
#include "sandboxes.h"
#include "xalloc.h"

#define CONTROL_MSG_MAX 65536
#define CLIENTS_MAX     256

typedef struct client {
    loop_fd_t h;
    struct client *next;
    bool subscribed;
    uint64_t dropped; /* events it was too slow for */
} client_t;

static loop_fd_t listener;
static client_t *clients;
static int nclients;

static void
client_close(client_t *c)
{
    for (client_t **pp = &clients; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    nclients--;
    loop_del(&c->h);
    close(c->h.fd);
    c->h.fd = -1;
    loop_free_later(c);
}

static void
send_json(client_t *c, json_object *o)
{
    size_t len;
    const char *t = json_text(o, &len);
    if (send(c->h.fd, t, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && c->subscribed)
        c->dropped++;
}

static void
answer_error(client_t *c, int code, const char *msg)
{
    json_object *o = json_object_new_object(), *e = json_object_new_object();
    json_set_bool(o, "ok", false);
    json_set_str(e, "code", err_name(code));
    json_set_str(e, "message", msg);
    json_set(o, "error", e);
    send_json(c, o);
    json_object_put(o);
}

static void
handle(client_t *c, json_object *req, int fd)
{
    const char *op = json_get_str(req, "op", "");
    const char *id = json_get_str(req, "id", "");
    err_t err = {0};
    json_object *ans = json_object_new_object();
    json_set_bool(ans, "ok", true);
    if (strcmp(op, "attach") == 0) {
        netd_sb_t *sb = NULL;
        if (fd < 0)
            err_set(&err, ERR_BAD_REQ, "attach needs the sandbox's network namespace (an fd)");
        else
            sb = sandboxes_attach(id, json_get_str(req, "session", ""), json_get(req, "policy"), fd,
                                  &err);
        if (sb)
            json_set(ans, "info", sandboxes_info(sb));
    } else if (strcmp(op, "detach") == 0) {
        sandboxes_detach(id, &err);
    } else if (strcmp(op, "info") == 0) {
        netd_sb_t *sb = sandboxes_find(id);
        if (sb)
            json_set(ans, "info", sandboxes_info(sb));
        else
            err_set(&err, ERR_NOT_FOUND, "sandbox %.64s is not attached", id);
    } else if (strcmp(op, "subscribe") == 0) {
        c->subscribed = true;
    } else {
        err_set(&err, ERR_BAD_REQ, "unknown op \"%.64s\" (attach, detach, info, subscribe)", op);
    }
    if (err.code)
        answer_error(c, err.code, err.msg);
    else
        send_json(c, ans);
    json_object_put(ans);
}

static void
on_client(loop_fd_t *h, uint32_t events)
{
    client_t *c = h->data;
    (void)events;
    static char buf[CONTROL_MSG_MAX];
    union {
        struct cmsghdr align;
        char space[CMSG_SPACE(sizeof(int) * 4)];
    } cm;
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = cm.space,
                        .msg_controllen = sizeof cm.space};
    ssize_t n = recvmsg(h->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    /* Every fd that came along is closed after the request, whatever it was. */
    int fds[4], nfds = 0;
    for (struct cmsghdr *cmh = CMSG_FIRSTHDR(&mh); cmh; cmh = CMSG_NXTHDR(&mh, cmh))
        if (cmh->cmsg_level == SOL_SOCKET && cmh->cmsg_type == SCM_RIGHTS) {
            size_t k = (cmh->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k && nfds < 4; i++)
                memcpy(&fds[nfds++], CMSG_DATA(cmh) + i * sizeof(int), sizeof(int));
        }
    if (n <= 0) {
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        client_close(c);
        return;
    }
    err_t err = {0};
    json_object *req = (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
                           ? (err_set(&err, ERR_TOO_BIG, "request too large"), NULL)
                           : json_parse(buf, (size_t)n, &err);
    if (!req || !json_object_is_type(req, json_type_object))
        answer_error(c, ERR_BAD_REQ, req ? "a request is a JSON object" : err.msg);
    else
        handle(c, req, nfds == 1 ? fds[0] : -1);
    json_object_put(req);
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
}

static void
on_accept(loop_fd_t *h, uint32_t events)
{
    (void)events;
    int fd = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    if (nclients >= CLIENTS_MAX) {
        close(fd);
        return;
    }
    client_t *c = xcalloc(1, sizeof *c);
    c->h.fd = fd;
    c->h.cb = on_client;
    c->h.data = c;
    c->next = clients;
    clients = c;
    nclients++;
    loop_add(&c->h, EPOLLIN);
}

int
control_listen(err_t *err)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(g_netd.control_path) >= sizeof a.sun_path)
        return err_set(err, ENAMETOOLONG, "%s: path too long for a unix socket",
                       g_netd.control_path);
    snprintf(a.sun_path, sizeof a.sun_path, "%s", g_netd.control_path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return err_set(err, errno, "socket: %s", strerror(errno));
    unlink(a.sun_path);
    mode_t old = umask(0077);
    int r = bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (r < 0 || listen(fd, 64) < 0) {
        int e = err_set(err, errno, "%s: %s", a.sun_path, strerror(errno));
        close(fd);
        return e;
    }
    listener.fd = fd;
    listener.cb = on_accept;
    return loop_add(&listener, EPOLLIN);
}

void
control_broadcast(json_object *ev)
{
    for (client_t *c = clients; c; c = c->next) {
        if (!c->subscribed)
            continue;
        if (c->dropped)
            json_set_int(ev, "dropped", (int64_t)c->dropped);
        size_t len;
        const char *t = json_text(ev, &len);
        if (send(c->h.fd, t, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
            c->dropped++;
        else
            c->dropped = 0;
        json_object_object_del(ev, "dropped");
    }
}
