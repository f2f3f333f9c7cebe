/* bench_api.c — REST API benchmarks through nginx, with a keep-alive HTTP/1.1 client (httpc.c):
 *   bench_api latency    HOST PORT SESSION KEY N
 *       POST /runtime/SESSION/execute_action `echo hi`, one request after the other on one
 *       connection: p50/p90/p99 (20 warm-up rounds first).
 *   bench_api throughput HOST PORT KEY TOTAL SESSION...
 *       one thread and one keep-alive connection per session, each sending the next `echo hi`
 *       as soon as the previous one is answered, until TOTAL actions have been sent in all:
 *       actions/s, latency under load, and how many were not answered 200 (e.g. 429).
 *   bench_api get        HOST PORT PATH N
 *       GET PATH N times on one connection, any status below 500 (floors for the breakdown: a
 *       static file is nginx alone; an unknown /api/ route is nginx, a FastCGI worker and the
 *       one Redis command of its metrics): p50/p90/p99.
 *   bench_api lookup     HOST PORT URI KEY ROUTE_KEY N
 *       a gateway's route lookup (GET /_sp/route, X-SP-URI: URI, X-Session-API-Key: KEY,
 *       X-SP-Route-Key: ROUTE_KEY, `sandpipe token --route-key`), as nginx's auth_request asks
 *       it: p50/p90/p99.
 *   bench_api getauth    HOST PORT PATH TOKEN N
 *       GET PATH with a bearer token (the API's cheapest authenticated Redis read): p50/p90/p99.
 *   bench_api events     HOST PORT SESSION TOKEN LIMIT ROUNDS REDIS_SOCKET [USER PASSWORD_FILE]
 *       GET /api/v1/sessions/SESSION/events?since=0&limit=LIMIT to the full response, next to
 *       XRANGE of the same LIMIT events straight from Redis (hiredis, reply parsed; as USER when
 *       given, e.g. the API's), and the same GET with Accept-Encoding: gzip; rounds
 *       interleaved, medians reported.
 * KEY is the X-Session-API-Key (a token owning the sessions), TOKEN a bearer token. */
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"
#include "httpc.h"
#include "redis_auth.h"

static const char ECHO_HI[] =
    "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"echo hi\"}}}";

static void
die(const char *what)
{
    fprintf(stderr, "bench_api: %s\n", what);
    exit(1);
}

/* One execute_action of `echo hi`: 0 when answered 200 with a run observation of "hi". */
static int
execute_echo(httpc_t *c, const char *path, const char *headers)
{
    if (httpc_request(c, "POST", path, headers, ECHO_HI, sizeof ECHO_HI - 1) < 0)
        return -1;
    if (c->status != 200)
        return c->status;
    if (!strstr(c->body, "\"observation\":\"run\"") || !strstr(c->body, "\"content\":\"hi\""))
        return 1;
    return 0;
}

static void
rt_path(char *out, size_t cap, const char *sid)
{
    snprintf(out, cap, "/runtime/%s/execute_action", sid);
}

static void
key_headers(char *out, size_t cap, const char *key)
{
    snprintf(out, cap, "X-Session-API-Key: %s\r\nContent-Type: application/json\r\n", key);
}

static int
latency(const char *host, int port, const char *sid, const char *key, int n)
{
    httpc_t c;
    if (httpc_open(&c, host, port) < 0)
        die("cannot connect");
    char path[512], hdr[9000];
    rt_path(path, sizeof path, sid);
    key_headers(hdr, sizeof hdr, key);
    double *v = calloc((size_t)n, sizeof *v);
    for (int i = -20; i < n; i++) {
        double t0 = now_us();
        int rc = execute_echo(&c, path, hdr);
        if (rc != 0) {
            fprintf(stderr, "bench_api: request %d: status %d: %.300s\n", i, c.status, c.body);
            return 1;
        }
        if (i >= 0)
            v[i] = now_us() - t0;
        if (c.server_closes) { /* nginx's keepalive_requests (1000): open the next one */
            httpc_close(&c);
            if (httpc_open(&c, host, port) < 0)
                die("cannot reconnect");
        }
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    printf("REST execute_action via nginx n=%d p50=%.0fus p90=%.0fus p99=%.0fus\n", n,
           pct(v, (size_t)n, 50), pct(v, (size_t)n, 90), pct(v, (size_t)n, 99));
    httpc_close(&c);
    free(v);
    return 0;
}

static int
get_latency(const char *host, int port, const char *path, const char *headers, const char *label,
            int n)
{
    httpc_t c;
    if (httpc_open(&c, host, port) < 0)
        die("cannot connect");
    double *v = calloc((size_t)n, sizeof *v);
    for (int i = -20; i < n; i++) {
        double t0 = now_us();
        if (httpc_request(&c, "GET", path, headers, "", 0) < 0 || c.status == 0 ||
            c.status >= 500) {
            fprintf(stderr, "bench_api: GET %s: status %d: %.300s\n", path, c.status, c.body);
            return 1;
        }
        if (i >= 0)
            v[i] = now_us() - t0;
        if (c.server_closes) {
            httpc_close(&c);
            if (httpc_open(&c, host, port) < 0)
                die("cannot reconnect");
        }
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    printf("GET %s %s (%d) n=%d p50=%.0fus p90=%.0fus p99=%.0fus\n", path, label, c.status, n,
           pct(v, (size_t)n, 50), pct(v, (size_t)n, 90), pct(v, (size_t)n, 99));
    httpc_close(&c);
    free(v);
    return 0;
}

/* ---- throughput ---- */

typedef struct {
    const char *host, *sid, *key;
    int port;
    sample_t lat; /* latencies of this thread's requests */
    long ok, not_ok, status_429;
} driver_t;

static atomic_long remaining;
static pthread_barrier_t start_line;

static void *
drive(void *arg)
{
    driver_t *d = arg;
    httpc_t c;
    if (httpc_open(&c, d->host, d->port) < 0)
        die("cannot connect");
    char path[512], hdr[9000];
    rt_path(path, sizeof path, d->sid);
    key_headers(hdr, sizeof hdr, d->key);
    pthread_barrier_wait(&start_line);
    while (atomic_fetch_sub(&remaining, 1) > 0) {
        double t0 = now_us();
        int rc = execute_echo(&c, path, hdr);
        if (rc < 0)
            die("connection lost during the throughput run");
        if (rc == 0)
            d->ok++;
        else
            d->not_ok++;
        if (rc == 429)
            d->status_429++;
        if (c.server_closes) { /* keepalive_requests reached, or an error: reconnect */
            httpc_close(&c);
            if (httpc_open(&c, d->host, d->port) < 0)
                die("cannot reconnect");
        }
        sample_add(&d->lat, now_us() - t0);
    }
    httpc_close(&c);
    return NULL;
}

static int
throughput(const char *host, int port, const char *key, long total, int nsess, char **sids)
{
    driver_t *ds = calloc((size_t)nsess, sizeof *ds);
    pthread_t *th = calloc((size_t)nsess, sizeof *th);
    atomic_store(&remaining, total);
    pthread_barrier_init(&start_line, NULL, (unsigned)nsess + 1);
    for (int i = 0; i < nsess; i++) {
        ds[i] = (driver_t){.host = host, .port = port, .sid = sids[i], .key = key};
        pthread_create(&th[i], NULL, drive, &ds[i]);
    }
    pthread_barrier_wait(&start_line);
    double t0 = now_us();
    long ok = 0, bad = 0, n429 = 0;
    for (int i = 0; i < nsess; i++) {
        pthread_join(th[i], NULL);
        ok += ds[i].ok, bad += ds[i].not_ok, n429 += ds[i].status_429;
    }
    double secs = (now_us() - t0) / 1e6;
    sample_t all = {0};
    for (int i = 0; i < nsess; i++)
        sample_take(&all, &ds[i].lat);
    sample_sort(&all);
    printf("REST execute_action throughput: %d sessions, %ld actions in %.2f s = %.0f actions/s "
           "answered 200 (%ld other: %ld of them 429); latency under load p50=%.0fus p99=%.0fus\n",
           nsess, ok + bad, secs, (double)ok / secs, bad, n429, pct(all.v, all.n, 50),
           pct(all.v, all.n, 99));
    free(all.v);
    free(ds);
    free(th);
    return bad ? 1 : 0;
}

/* ---- events ---- */

static double
median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static int
events(const char *host, int port, const char *sid, const char *token, long limit, int rounds,
       const char *redis_sock, const redis_auth_t *auth)
{
    redisContext *rc = redisConnectUnix(redis_sock);
    if (!rc || rc->err)
        die("cannot connect to Redis");
    err_t err = {0};
    if (redis_auth_sync(rc, auth, &err) < 0)
        die(err.msg);
    httpc_t c;
    if (httpc_open(&c, host, port) < 0)
        die("cannot connect");
    char path[512], hdr[9000], hdr_gz[9100], key[256], count[32];
    snprintf(path, sizeof path, "/api/v1/sessions/%s/events?since=0&limit=%ld", sid, limit);
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", token);
    snprintf(hdr_gz, sizeof hdr_gz, "%sAccept-Encoding: gzip\r\n", hdr);
    snprintf(key, sizeof key, "sp:session:{%s}:events", sid);
    snprintf(count, sizeof count, "%ld", limit);
    double *tr = calloc((size_t)rounds, sizeof *tr), *th = calloc((size_t)rounds, sizeof *th),
           *tg = calloc((size_t)rounds, sizeof *tg);
    size_t redis_bytes = 0, http_bytes = 0, gz_bytes = 0, nev = 0;
    for (int i = -2; i < rounds; i++) { /* two warm-up rounds */
        double t0 = now_us();
        const char *argv[] = {"XRANGE", key, "-", "+", "COUNT", count};
        redisReply *x = redisCommandArgv(rc, 6, argv, NULL);
        double t1 = now_us();
        if (!x || x->type != REDIS_REPLY_ARRAY)
            die("XRANGE failed");
        nev = x->elements;
        redis_bytes = 0;
        for (size_t e = 0; e < x->elements; e++) {
            redisReply *f = x->element[e]->element[1];
            for (size_t k = 0; k < f->elements; k++)
                redis_bytes += f->element[k]->len;
        }
        freeReplyObject(x);
        if (httpc_request(&c, "GET", path, hdr, "", 0) < 0 || c.status != 200)
            die("GET events failed");
        double t2 = now_us();
        http_bytes = c.body_len;
        if (httpc_request(&c, "GET", path, hdr_gz, "", 0) < 0 || c.status != 200)
            die("GET events (gzip) failed");
        double t3 = now_us();
        gz_bytes = c.body_len;
        if (i >= 0) {
            tr[i] = t1 - t0;
            th[i] = t2 - t1;
            tg[i] = t3 - t2;
        }
    }
    if ((long)nev != limit)
        fprintf(stderr, "bench_api: the stream holds only %zu events\n", nev);
    double mr = median(tr, rounds), mh = median(th, rounds), mg = median(tg, rounds);
    printf("events: %zu events; Redis XRANGE (hiredis, %zu bytes of fields) median %.1f ms "
           "(min %.1f); GET events via nginx (%zu bytes) median %.1f ms (min %.1f) = %.1fx "
           "XRANGE; same with gzip (%zu bytes) median %.1f ms\n",
           nev, redis_bytes, mr / 1000, tr[0] / 1000, http_bytes, mh / 1000, th[0] / 1000, mh / mr,
           gz_bytes, mg / 1000);
    redisFree(rc);
    httpc_close(&c);
    free(tr);
    free(th);
    free(tg);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc >= 7 && !strcmp(argv[1], "latency"))
        return latency(argv[2], atoi(argv[3]), argv[4], argv[5], atoi(argv[6]));
    if (argc >= 7 && !strcmp(argv[1], "throughput"))
        return throughput(argv[2], atoi(argv[3]), argv[4], atol(argv[5]), argc - 6, argv + 6);
    if (argc >= 6 && !strcmp(argv[1], "get"))
        return get_latency(argv[2], atoi(argv[3]), argv[4], "", "via nginx", atoi(argv[5]));
    char hdr[9000];
    if (argc >= 8 && !strcmp(argv[1], "lookup")) {
        snprintf(hdr, sizeof hdr, "X-SP-URI: %s\r\nX-Session-API-Key: %s\r\nX-SP-Route-Key: %s\r\n",
                 argv[4], argv[5], argv[6]);
        return get_latency(argv[2], atoi(argv[3]), "/_sp/route", hdr,
                           "(a gateway's route lookup, as nginx asks it)", atoi(argv[7]));
    }
    if (argc >= 7 && !strcmp(argv[1], "getauth")) {
        snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", argv[5]);
        return get_latency(argv[2], atoi(argv[3]), argv[4], hdr, "via nginx, authenticated",
                           atoi(argv[6]));
    }
    if (argc >= 9 && !strcmp(argv[1], "events")) {
        redis_auth_t auth = {argc >= 11 ? argv[9] : NULL, argc >= 11 ? argv[10] : NULL};
        return events(argv[2], atoi(argv[3]), argv[4], argv[5], atol(argv[6]), atoi(argv[7]),
                      argv[8], &auth);
    }
    fprintf(stderr, "usage: bench_api latency HOST PORT SESSION KEY N\n"
                    "       bench_api throughput HOST PORT KEY TOTAL SESSION...\n"
                    "       bench_api get HOST PORT PATH N\n"
                    "       bench_api lookup HOST PORT URI KEY ROUTE_KEY N\n"
                    "       bench_api getauth HOST PORT PATH TOKEN N\n"
                    "       bench_api events HOST PORT SESSION TOKEN LIMIT ROUNDS REDIS_SOCKET"
                    " [USER PASSWORD_FILE]\n");
    return 2;
}
