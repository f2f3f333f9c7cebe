/* listen_addr.c — --listen resolved, its lws options, the bound socket checked (listen_addr.h). */
#include "listen_addr.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <libwebsockets.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int
bad(err_t *err, const char *arg, const char *why)
{
    return err_set(err, ERR_BAD_REQ, "--listen %.100s: %s", arg, why);
}

int
listen_addr_parse(const char *arg, listen_addr_t *out, err_t *err)
{
    char host[256];
    const char *colon = strrchr(arg, ':');
    if (!colon)
        return bad(err, arg, "takes HOST:PORT");
    size_t n = (size_t)(colon - arg);
    if (n == 0)
        return bad(err, arg, "names no host (0.0.0.0 is every IPv4 address, [::] every IPv6 one)");
    if (n >= sizeof host)
        return bad(err, arg, "host name too long");
    memcpy(host, arg, n);
    host[n] = '\0';
    bool bracketed = host[0] == '[';
    if (bracketed) {
        if (n < 3 || host[n - 1] != ']')
            return bad(err, arg, "an IPv6 address goes in brackets: [ADDRESS]:PORT");
        memmove(host, host + 1, n - 2);
        host[n - 2] = '\0';
    }
    const char *p = colon + 1;
    char *end;
    long port = strtol(p, &end, 10);
    if (!*p || *end || port < 1 || port > 65535)
        return bad(err, arg, "the port is a number from 1 to 65535");

    struct addrinfo hints = {.ai_family = bracketed ? AF_INET6 : AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = bracketed ? AI_NUMERICHOST : 0};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0 || !res)
        return err_set(err, ERR_BAD_REQ, "--listen %.100s: %.60s does not resolve: %s", arg, host,
                       rc ? gai_strerror(rc) : "no address");
    out->family = res->ai_family;
    out->port = (int)port;
    const void *a = res->ai_family == AF_INET6
                        ? (const void *)&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr
                        : (const void *)&((struct sockaddr_in *)res->ai_addr)->sin_addr;
    bool scoped =
        res->ai_family == AF_INET6 && ((struct sockaddr_in6 *)res->ai_addr)->sin6_scope_id != 0;
    bool ok = (res->ai_family == AF_INET || res->ai_family == AF_INET6) &&
              inet_ntop(res->ai_family, a, out->addr, sizeof out->addr);
    freeaddrinfo(res);
    if (!ok)
        return bad(err, arg, "not an IPv4 or IPv6 address");
    if (scoped) /* lws binds no scope id of ours */
        return bad(err, arg, "a link-local address with a scope is not supported");
    return 0;
}

uint64_t
listen_addr_lws_options(const listen_addr_t *a)
{
    /* A vhost that cannot bind is an error, not a listener that silently is not there. */
    uint64_t o = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
    if (a->family == AF_INET)
        return o | LWS_SERVER_OPTION_DISABLE_IPV6;
    return o | LWS_SERVER_OPTION_IPV6_V6ONLY_MODIFY | LWS_SERVER_OPTION_IPV6_V6ONLY_VALUE;
}

/* fd's address when it is a listening TCP socket on port, else -1. */
static int
listening_on(int fd, int port, struct sockaddr_storage *ss)
{
    int v = 0;
    socklen_t len = sizeof v;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0 || !v)
        return -1;
    len = sizeof *ss;
    if (getsockname(fd, (struct sockaddr *)ss, &len) < 0)
        return -1;
    if (ss->ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)ss)->sin_port) == port ? 0 : -1;
    if (ss->ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)ss)->sin6_port) == port ? 0 : -1;
    return -1;
}

int
listen_addr_verify(const listen_addr_t *a, char *bound, size_t cap, err_t *err)
{
    snprintf(bound, cap, "nothing");
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return err_set(err, ERR_BAD_REQ, "cannot list /proc/self/fd to check the listener");
    struct sockaddr_storage ss;
    int fd = -1;
    for (struct dirent *e; (e = readdir(d));) {
        int n = atoi(e->d_name);
        if (e->d_name[0] != '.' && n != dirfd(d) && listening_on(n, a->port, &ss) == 0) {
            fd = n;
            break;
        }
    }
    closedir(d);
    if (fd < 0)
        return err_set(err, ERR_BAD_REQ, "nothing listens on port %d", a->port);
    char text[INET6_ADDRSTRLEN] = "?";
    bool v6only = false;
    if (ss.ss_family == AF_INET6) {
        int v = 0;
        socklen_t len = sizeof v;
        v6only = getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len) == 0 && v;
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, text, sizeof text);
        snprintf(bound, cap, "[%s]:%d%s", text, a->port, v6only ? "" : " (and IPv4)");
    } else {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, text, sizeof text);
        snprintf(bound, cap, "%s:%d", text, a->port);
    }
    bool same =
        ss.ss_family == a->family && !strcmp(text, a->addr) && (a->family == AF_INET || v6only);
    if (!same)
        return err_set(err, ERR_BAD_REQ, "asked to listen on %s, bound %s", a->addr, bound);
    return 0;
}
