/* bench_ws.c — gateway benchmarks with a minimal blocking WebSocket client:
 *   bench_ws latency HOST PORT SESSION TOKEN N      `echo hi` action → observation, p50/p90/p99
 *   bench_ws stream  HOST PORT SESSION TOKEN CMD    bytes of output events per second for CMD
 *   bench_ws fanout  HOST PORT SESSION TOKEN N CMD  CMD alone, then with N viewers reading all
 * events bench_ws idle    HOST PORT SESSION TOKEN N      opens N idle session sockets, holds them
 *                                                   until stdin closes (memory is read by the
 * caller)
 *   bench_ws throughput HOST PORT S1,S2,... TOKEN TOTAL  one thread and socket per session, each
 *                                                   sending the next `echo hi` when the last is
 *                                                   answered, TOTAL actions in all: actions/s
 * Any WebSocket server (a terminal, websocketd), PATH as it is:
 *   bench_ws echo  HOST PORT PATH N text|binary     a keystroke ("a") → its echo, p50/p90/p99
 *     [PORT PATH text|binary]...                    more targets on HOST (12 in all), their
 *                                                   rounds alternating with the first's
 *   bench_ws drain HOST PORT PATH [SEND]            sends SEND (binary) if given, then counts
 *                                                   binary payload bytes until the server closes
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"

typedef struct {
    int fd;
    char *buf;
    size_t have, cap;
    size_t consumed; /* bytes of the last message returned by ws_recv, dropped on the next call */
} ws_t;

static int
ws_open(ws_t *w, const char *host, int port, const char *path)
{
    w->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &sa.sin_addr);
    if (connect(w->fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        return -1;
    int one = 1;
    setsockopt(w->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char req[4096];
    int n =
        snprintf(req, sizeof req,
                 "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                 path, host, port);
    if (write(w->fd, req, (size_t)n) != n)
        return -1;
    w->cap = 1 << 22;
    w->buf = malloc(w->cap);
    w->have = w->consumed = 0;
    for (;;) {
        ssize_t r = read(w->fd, w->buf + w->have, w->cap - w->have);
        if (r <= 0)
            return -1;
        w->have += (size_t)r;
        char *end = memmem(w->buf, w->have, "\r\n\r\n", 4);
        if (end) {
            size_t hl = (size_t)(end - w->buf) + 4;
            if (strncmp(w->buf, "HTTP/1.1 101", 12) != 0)
                return -1;
            memmove(w->buf, w->buf + hl, w->have - hl);
            w->have -= hl;
            return 0;
        }
    }
}

static void ws_send_op(ws_t *w, const char *s, int opcode);

static void
ws_send(ws_t *w, const char *s)
{
    ws_send_op(w, s, 1);
}

static void
ws_send_op(ws_t *w, const char *s, int opcode)
{
    size_t n = strlen(s);
    unsigned char hdr[14];
    size_t h = 0;
    hdr[h++] = (unsigned char)(0x80 | opcode);
    if (n < 126) {
        hdr[h++] = (unsigned char)(0x80 | n);
    } else {
        hdr[h++] = 0x80 | 126;
        hdr[h++] = (unsigned char)(n >> 8);
        hdr[h++] = (unsigned char)n;
    }
    memset(hdr + h, 0, 4); /* zero mask: valid, and XOR is a no-op */
    h += 4;
    char *msg = malloc(h + n);
    memcpy(msg, hdr, h);
    memcpy(msg + h, s, n);
    if (write(w->fd, msg, h + n) != (ssize_t)(h + n)) {
        perror("write");
        exit(1);
    }
    free(msg);
}

/* Next message payload (NUL-terminated in place until the next call); *len set. */
static char *
ws_recv(ws_t *w, size_t *len)
{
    if (w->consumed) {
        memmove(w->buf, w->buf + w->consumed, w->have - w->consumed);
        w->have -= w->consumed;
        w->consumed = 0;
    }
    for (;;) {
        if (w->have >= 2) {
            size_t n = w->buf[1] & 0x7f, h = 2;
            if (n == 126 && w->have >= 4) {
                n = ((size_t)(unsigned char)w->buf[2] << 8) | (unsigned char)w->buf[3];
                h = 4;
            } else if (n == 127 && w->have >= 10) {
                n = 0;
                for (int i = 0; i < 8; i++)
                    n = (n << 8) | (unsigned char)w->buf[2 + i];
                h = 10;
            } else if (n >= 126) {
                n = (size_t)-1;
            }
            if (n != (size_t)-1 && w->have >= h + n) {
                w->consumed = h + n;
                *len = n;
                return w->buf + h;
            }
        }
        if (w->cap - w->have < 65536) {
            w->cap *= 2;
            w->buf = realloc(w->buf, w->cap);
        }
        ssize_t r = read(w->fd, w->buf + w->have, w->cap - w->have);
        if (r <= 0) {
            fprintf(stderr, "connection closed\n");
            exit(1);
        }
        w->have += (size_t)r;
    }
}

/* Counts observation events in a byte stream that may split them across reads. */
typedef struct {
    int fd;
    char tail[32];
    size_t tail_len;
    int seen;
} viewer_t;

static int
scan_observations(viewer_t *v, const char *buf, size_t n)
{
    static const char pat[] = "\"type\":\"observation\"";
    char tmp[65536 + 32];
    memcpy(tmp, v->tail, v->tail_len);
    memcpy(tmp + v->tail_len, buf, n);
    size_t len = v->tail_len + n, off = 0;
    int found = 0;
    const char *p;
    while ((p = memmem(tmp + off, len - off, pat, sizeof pat - 1))) {
        found++;
        off = (size_t)(p - tmp) + sizeof pat - 1;
    }
    size_t keep = len - off < sizeof v->tail ? len - off : sizeof v->tail;
    memcpy(v->tail, tmp + len - keep, keep);
    v->tail_len = keep;
    return found;
}

/* Runs CMD on the producer socket while N viewers (since = live) read everything; returns the
 * producer's time to its observation, in ms. */
static double
fanout_round(const char *host, int port, const char *path, const char *act, int n, bool stalled)
{
    viewer_t *vs = calloc((size_t)n + 1, sizeof *vs);
    ws_t w;
    for (int i = 0; i <= n; i++) {
        if (ws_open(&w, host, port, path) < 0) {
            fprintf(stderr, "cannot connect viewer %d\n", i);
            exit(1);
        }
        vs[i].fd = w.fd;
        free(w.buf);
        fcntl(vs[i].fd, F_SETFL, O_NONBLOCK);
    }
    int ep = epoll_create1(0);
    for (int i = stalled ? n : 0; i <= n; i++) { /* stalled viewers are never read */
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(ep, EPOLL_CTL_ADD, vs[i].fd, &ev);
    }
    ws_t prod = {.fd = vs[n].fd};
    fcntl(prod.fd, F_SETFL, 0);
    ws_send(&prod, act);
    fcntl(prod.fd, F_SETFL, O_NONBLOCK);
    double t0 = now_us(), producer_ms = -1;
    int done = stalled ? n : 0;
    char buf[65536];
    while (done < n + 1 && now_us() - t0 < 300e6) {
        struct epoll_event evs[64];
        int k = epoll_wait(ep, evs, 64, 1000);
        for (int j = 0; j < k; j++) {
            viewer_t *v = &vs[evs[j].data.u32];
            ssize_t r;
            while ((r = read(v->fd, buf, sizeof buf)) > 0) {
                int f = scan_observations(v, buf, (size_t)r);
                if (f && !v->seen) {
                    done++;
                    if (v == &vs[n])
                        producer_ms = (now_us() - t0) / 1000;
                }
                v->seen += f;
            }
        }
    }
    for (int i = 0; i <= n; i++)
        close(vs[i].fd);
    close(ep);
    if (done < n + 1)
        fprintf(stderr, "only %d of %d clients saw the observation\n", done, n + 1);
    free(vs);
    return producer_ms;
}

static void
wait_observation(ws_t *w, size_t *out_bytes)
{
    for (;;) {
        size_t len;
        char *m = ws_recv(w, &len);
        if (out_bytes && len > 30 && memmem(m, len, "\"type\":\"output\"", 15)) {
            char *d = memmem(m, len, "\"data\":\"", 8);
            if (d)
                *out_bytes += len - (size_t)(d - m);
        }
        if (memmem(m, len, "\"type\":\"observation\"", 20))
            return;
    }
}

static const char ECHO_HI[] = "{\"type\":\"action\",\"action\":{\"action\":\"run\",\"args\":{"
                              "\"command\":\"echo hi\"}}}";

/* ---- throughput: one thread per session socket ---- */

typedef struct {
    const char *host;
    int port;
    char path[2048];
    sample_t lat;
} driver_t;

static atomic_long remaining;
static pthread_barrier_t start_line;

static void *
drive(void *arg)
{
    driver_t *d = arg;
    ws_t w;
    if (ws_open(&w, d->host, d->port, d->path) < 0) {
        fprintf(stderr, "cannot connect\n");
        exit(1);
    }
    pthread_barrier_wait(&start_line);
    while (atomic_fetch_sub(&remaining, 1) > 0) {
        double t0 = now_us();
        ws_send(&w, ECHO_HI);
        wait_observation(&w, NULL);
        sample_add(&d->lat, now_us() - t0);
    }
    close(w.fd);
    free(w.buf);
    return NULL;
}

static int
throughput(const char *host, int port, char *sids, const char *tok, long total)
{
    driver_t ds[64];
    pthread_t th[64];
    int n = 0;
    for (char *sv, *sid = strtok_r(sids, ",", &sv); sid && n < 64; sid = strtok_r(NULL, ",", &sv)) {
        ds[n] = (driver_t){.host = host, .port = port};
        snprintf(ds[n].path, sizeof ds[n].path, "/ws/sessions/%s?token=%s", sid, tok);
        n++;
    }
    atomic_store(&remaining, total);
    pthread_barrier_init(&start_line, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, drive, &ds[i]);
    pthread_barrier_wait(&start_line);
    double t0 = now_us();
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    double secs = (now_us() - t0) / 1e6;
    sample_t all = {0};
    for (int i = 0; i < n; i++)
        sample_take(&all, &ds[i].lat);
    sample_sort(&all);
    printf("gateway WebSocket throughput: %d sessions, %zu actions in %.2f s = %.0f actions/s; "
           "latency under load p50=%.0fus p99=%.0fus\n",
           n, all.n, secs, (double)all.n / secs, pct(all.v, all.n, 50), pct(all.v, all.n, 99));
    free(all.v);
    return 0;
}

/* Next message without exiting at the end: its payload, or NULL once the server closed (a close
 * frame or end of file); *opcode set. */
static char *
ws_recv_or_end(ws_t *w, size_t *len, int *opcode)
{
    if (w->consumed) {
        memmove(w->buf, w->buf + w->consumed, w->have - w->consumed);
        w->have -= w->consumed;
        w->consumed = 0;
    }
    while (w->have < 2 || (w->have < 4 && (w->buf[1] & 0x7f) == 126) ||
           (w->have < 10 && (w->buf[1] & 0x7f) == 127)) {
        ssize_t r = read(w->fd, w->buf + w->have, w->cap - w->have);
        if (r <= 0)
            return NULL;
        w->have += (size_t)r;
    }
    *opcode = w->buf[0] & 0x0f;
    if (*opcode == 8)
        return NULL;
    return ws_recv(w, len);
}

/* Waits us microseconds, then throws away whatever arrived (read or buffered): the next echo
 * is measured on a quiet socket. */
static void
discard_after(ws_t *w, useconds_t us)
{
    usleep(us);
    fcntl(w->fd, F_SETFL, O_NONBLOCK);
    char junk[65536];
    while (read(w->fd, junk, sizeof junk) > 0)
        ;
    fcntl(w->fd, F_SETFL, 0);
    w->have = w->consumed = 0;
}

/* One target of echo mode: a WebSocket, whether it is a terminal (binary), its round trips. */
#define ECHO_TARGETS_MAX 12
typedef struct {
    const char *path;
    int port;
    bool binary;
    ws_t w;
    double *v;
} echo_target_t;

/* One keystroke ("a") to t and the time until its echo; a fresh line now and then. */
static double
echo_round(echo_target_t *t, int i)
{
    size_t len;
    int op;
    double t0 = now_us();
    ws_send_op(&t->w, "a", t->binary ? 2 : 1);
    for (;;) {
        char *m = ws_recv_or_end(&t->w, &len, &op);
        if (!m) {
            fprintf(stderr, "%s closed\n", t->path);
            exit(1);
        }
        if (memchr(m, 'a', len))
            break;
    }
    double us = now_us() - t0;
    if (t->binary && i % 64 == 63) { /* readline stays simple */
        ws_send_op(&t->w, "\x15", 2);
        discard_after(&t->w, 20000);
    }
    return us;
}

/* echo: keystroke round trips on each target (after the first output, e.g. a prompt,
 * settled), their rounds alternating so that a busy moment falls on all alike. */
static int
echo_mode(const char *host, echo_target_t *ts, int nt, int n)
{
    for (int k = 0; k < nt; k++) {
        echo_target_t *t = &ts[k];
        if (ws_open(&t->w, host, t->port, t->path) < 0) {
            fprintf(stderr, "cannot connect to %s\n", t->path);
            return 1;
        }
        t->v = calloc((size_t)n, sizeof *t->v);
        if (t->binary) { /* a terminal: its prompt comes first */
            size_t len;
            int op;
            ws_recv_or_end(&t->w, &len, &op);
            discard_after(&t->w, 300000);
        }
    }
    int order[ECHO_TARGETS_MAX]; /* each round in its own order (shuffle, bench_stats.h) */
    unsigned seed = 35;
    for (int k = 0; k < nt; k++)
        order[k] = k;
    for (int i = -20; i < n; i++) {
        shuffle(order, nt, &seed);
        for (int k = 0; k < nt; k++) {
            double us = echo_round(&ts[order[k]], i);
            if (i >= 0)
                ts[order[k]].v[i] = us;
        }
    }
    for (int k = 0; k < nt; k++) {
        double *v = ts[k].v;
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        printf("keystroke echo %s n=%d p50=%.0fus p90=%.0fus p99=%.0fus\n", ts[k].path, n,
               pct(v, (size_t)n, 50), pct(v, (size_t)n, 90), pct(v, (size_t)n, 99));
        free(v);
    }
    return 0;
}

static int
drain_mode(const char *host, int port, const char *path, const char *send)
{
    ws_t w;
    double t0 = now_us();
    if (ws_open(&w, host, port, path) < 0) {
        fprintf(stderr, "cannot connect to %s\n", path);
        return 1;
    }
    if (send)
        ws_send_op(&w, send, 2);
    size_t len, bytes = 0;
    int op;
    for (;;) {
        char *m = ws_recv_or_end(&w, &len, &op);
        if (!m)
            break;
        if (op == 2 || op == 0)
            bytes += len;
    }
    double dt = (now_us() - t0) / 1e6;
    printf("drain: %zu bytes in %.3f s = %.1f MB/s\n", bytes, dt, (double)bytes / dt / 1e6);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc >= 7 && !strcmp(argv[1], "echo")) {
        /* echo HOST PORT PATH N MODE [PORT PATH MODE]...: targets alternate round by round */
        echo_target_t ts[ECHO_TARGETS_MAX] = {
            {.port = atoi(argv[3]), .path = argv[4], .binary = !strcmp(argv[6], "binary")}};
        int nt = 1;
        for (int a = 7; a + 2 < argc && nt < ECHO_TARGETS_MAX; a += 3)
            ts[nt++] = (echo_target_t){.port = atoi(argv[a]),
                                       .path = argv[a + 1],
                                       .binary = !strcmp(argv[a + 2], "binary")};
        return echo_mode(argv[2], ts, nt, atoi(argv[5]));
    }
    if (argc >= 5 && !strcmp(argv[1], "drain"))
        return drain_mode(argv[2], atoi(argv[3]), argv[4], argc > 5 ? argv[5] : NULL);
    if (argc < 7) {
        fprintf(
            stderr,
            "usage: bench_ws latency|stream|fanout|idle|throughput HOST PORT SESSION TOKEN ARG\n");
        return 2;
    }
    const char *mode = argv[1], *host = argv[2], *sid = argv[4], *tok = argv[5];
    int port = atoi(argv[3]);
    char path[2048];
    snprintf(path, sizeof path, "/ws/sessions/%s?token=%s", sid, tok);
    if (!strcmp(mode, "throughput"))
        return throughput(host, port, argv[4], tok, atol(argv[6]));
    if (!strcmp(mode, "idle")) {
        int n = atoi(argv[6]);
        struct rlimit rl = {(rlim_t)n + 100, (rlim_t)n + 100};
        setrlimit(RLIMIT_NOFILE, &rl);
        for (int i = 0; i < n; i++) {
            ws_t w;
            if (ws_open(&w, host, port, path) < 0) {
                fprintf(stderr, "connection %d failed\n", i);
                return 1;
            }
            free(w.buf);
        }
        printf("%d idle connections open\n", n);
        fflush(stdout);
        char c;
        while (read(0, &c, 1) > 0)
            ;
        return 0;
    }
    if (!strcmp(mode, "fanout")) {
        int n = atoi(argv[6]);
        struct rlimit rl = {(rlim_t)n + 100, (rlim_t)n + 100};
        setrlimit(RLIMIT_NOFILE, &rl);
        char act[4096];
        snprintf(act, sizeof act,
                 "{\"type\":\"action\",\"action\":{\"action\":\"run\",\"args\":{\"command\":\"%s\","
                 "\"blocking\":true},\"timeout\":600}}",
                 argc > 7 ? argv[7] : "seq 1 300000");
        double alone = fanout_round(host, port, path, act, 0, false);
        double with = fanout_round(host, port, path, act, n, false);
        double stalled = fanout_round(host, port, path, act, n, true);
        printf(
            "fan-out: producer alone %.0f ms; with %d viewers reading everything %.0f ms (%+.0f%%);"
            " with %d viewers that never read %.0f ms (%+.0f%%)\n",
            alone, n, with, 100 * (with / alone - 1), n, stalled, 100 * (stalled / alone - 1));
        return 0;
    }
    ws_t w;
    if (ws_open(&w, host, port, path) < 0) {
        fprintf(stderr, "cannot connect\n");
        return 1;
    }
    if (!strcmp(mode, "latency")) {
        int n = atoi(argv[6]);
        double *v = calloc((size_t)n, sizeof *v);
        const char *act = ECHO_HI;
        for (int i = -20; i < n; i++) {
            double t0 = now_us();
            ws_send(&w, act);
            wait_observation(&w, NULL);
            if (i >= 0)
                v[i] = now_us() - t0;
        }
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        printf("gateway echo hi (WebSocket)   n=%d p50=%.0fus p90=%.0fus p99=%.0fus\n", n, v[n / 2],
               v[n * 9 / 10], v[n * 99 / 100]);
        return 0;
    }
    char act[4096];
    snprintf(act, sizeof act,
             "{\"type\":\"action\",\"action\":{\"action\":\"run\",\"args\":{\"command\":\"%s\","
             "\"blocking\":true},\"timeout\":600}}",
             argv[6]);
    size_t bytes = 0;
    double t0 = now_us();
    ws_send(&w, act);
    wait_observation(&w, &bytes);
    double dt = (now_us() - t0) / 1e6;
    printf("gateway stream: ~%zu bytes of output events in %.3f s = %.1f MB/s\n", bytes, dt,
           (double)bytes / dt / 1e6);
    return 0;
}
