/* httpc.c — see httpc.h. */
#include "httpc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

int
httpc_open(httpc_t *c, const char *host, int port)
{
    memset(c, 0, sizeof *c);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
        connect(c->fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->cap = 1 << 16;
    c->buf = malloc(c->cap);
    c->body_cap = 1 << 16;
    c->body = malloc(c->body_cap);
    return c->buf && c->body ? 0 : -1;
}

void
httpc_close(httpc_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->buf);
    free(c->body);
    c->buf = c->body = NULL;
}

/* Makes sure at least n unconsumed bytes are buffered. 0 or -1 (closed, error). */
static int
fill(httpc_t *c, size_t n)
{
    while (c->have - c->off < n) {
        if (c->off && c->off == c->have)
            c->off = c->have = 0;
        if (c->cap - c->have < 65536) {
            if (c->off) {
                memmove(c->buf, c->buf + c->off, c->have - c->off);
                c->have -= c->off;
                c->off = 0;
            } else {
                c->cap *= 2;
                char *nb = realloc(c->buf, c->cap);
                if (!nb)
                    return -1;
                c->buf = nb;
            }
            continue;
        }
        ssize_t r = read(c->fd, c->buf + c->have, c->cap - c->have);
        if (r <= 0)
            return -1;
        c->have += (size_t)r;
    }
    return 0;
}

/* Index of the end of a line ("\r\n") at or after c->off, filling as needed; -1 on error. */
static long
line_end(httpc_t *c)
{
    for (size_t scanned = 0;;) {
        char *p = memmem(c->buf + c->off + scanned, c->have - c->off - scanned, "\r\n", 2);
        if (p)
            return (long)(p - c->buf);
        size_t avail = c->have - c->off;
        scanned = avail ? avail - 1 : 0;
        if (fill(c, avail + 1) < 0)
            return -1;
    }
}

static int
body_append(httpc_t *c, const char *p, size_t n)
{
    if (c->body_len + n + 1 > c->body_cap) {
        while (c->body_len + n + 1 > c->body_cap)
            c->body_cap *= 2;
        char *nb = realloc(c->body, c->body_cap);
        if (!nb)
            return -1;
        c->body = nb;
    }
    memcpy(c->body + c->body_len, p, n);
    c->body_len += n;
    c->body[c->body_len] = '\0';
    return 0;
}

/* Moves n body bytes from the connection buffer to the body. */
static int
take_body(httpc_t *c, size_t n)
{
    while (n) {
        if (fill(c, 1) < 0)
            return -1;
        size_t k = c->have - c->off < n ? c->have - c->off : n;
        if (body_append(c, c->buf + c->off, k) < 0)
            return -1;
        c->off += k;
        n -= k;
    }
    return 0;
}

static int
read_chunked(httpc_t *c)
{
    for (;;) {
        long e = line_end(c);
        if (e < 0)
            return -1;
        size_t n = strtoul(c->buf + c->off, NULL, 16);
        c->off = (size_t)e + 2;
        if (n == 0) { /* trailers end with an empty line */
            for (;;) {
                e = line_end(c);
                if (e < 0)
                    return -1;
                size_t len = (size_t)e - c->off;
                c->off = (size_t)e + 2;
                if (len == 0)
                    return 0;
            }
        }
        if (take_body(c, n) < 0 || fill(c, 2) < 0)
            return -1;
        c->off += 2;
    }
}

int
httpc_request(httpc_t *c, const char *method, const char *path, const char *headers,
              const char *body, size_t body_len)
{
    size_t cap = strlen(path) + strlen(headers) + body_len + 256;
    char *req = malloc(cap);
    if (!req)
        return -1;
    int n = snprintf(req, cap, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Length: %zu\r\n\r\n",
                     method, path, headers, body_len);
    memcpy(req + n, body, body_len);
    size_t total = (size_t)n + body_len, done = 0;
    while (done < total) {
        ssize_t w = write(c->fd, req + done, total - done);
        if (w <= 0) {
            free(req);
            return -1;
        }
        done += (size_t)w;
    }
    free(req);
    c->body_len = 0;
    c->body[0] = '\0';
    c->status = 0;
    c->server_closes = 0;
    long clen = -1;
    int chunked = 0;
    for (int first = 1;; first = 0) {
        long e = line_end(c);
        if (e < 0)
            return -1;
        char *l = c->buf + c->off;
        size_t len = (size_t)e - c->off;
        c->off = (size_t)e + 2;
        if (first) {
            if (len < 12 || strncmp(l, "HTTP/1.", 7) != 0)
                return -1;
            c->status = atoi(l + 9);
            continue;
        }
        if (len == 0)
            break;
        if (len > 15 && !strncasecmp(l, "content-length:", 15))
            clen = strtol(l + 15, NULL, 10);
        else if (len > 18 && !strncasecmp(l, "transfer-encoding:", 18) &&
                 memmem(l, len, "chunked", 7))
            chunked = 1;
        else if (len > 11 && !strncasecmp(l, "connection:", 11) && memmem(l, len, "close", 5))
            c->server_closes = 1;
    }
    if (chunked)
        return read_chunked(c);
    if (clen > 0)
        return take_body(c, (size_t)clen);
    return 0;
}
