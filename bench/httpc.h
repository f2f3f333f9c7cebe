/* httpc.h — a minimal blocking HTTP/1.1 keep-alive client for the benchmarks: one TCP
 * connection to a loopback address, requests sent one after another on it, responses read
 * whole (Content-Length or chunked). Plain HTTP only (no TLS). */
#ifndef SP_BENCH_HTTPC_H
#define SP_BENCH_HTTPC_H

#include <stddef.h>

typedef struct {
    int fd;
    char *buf; /* bytes read and not yet consumed: buf[off..have) */
    size_t off, have, cap;
    char *body; /* the last response's body (dechunked), NUL-terminated */
    size_t body_len, body_cap;
    int status;
    int server_closes; /* the last response said Connection: close */
} httpc_t;

/* Connects to host:port (IPv4 literal) with TCP_NODELAY. 0 or -1. */
int httpc_open(httpc_t *c, const char *host, int port);
void httpc_close(httpc_t *c);

/* Sends one request; headers is "" or lines each ending in "\r\n". Reads the whole response:
 * c->status, c->body, c->body_len. Returns 0, or -1 when the connection failed (then the
 * caller may reopen). The request is written with one write(). */
int httpc_request(httpc_t *c, const char *method, const char *path, const char *headers,
                  const char *body, size_t body_len);

#endif
