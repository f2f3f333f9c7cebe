/* bench_evlog.c — how many events per second one gateway's event log writes to Redis: appends
 * N small events (an output line each, ~120 bytes as stored) to a session stream through the
 * gateway's own event_log + hiredis-on-libuv path, holding back while the log is full (the
 * producers' own window: EVENT_LOG_UNCONFIRMED_MAX events or _BYTE bytes unconfirmed), and
 * reports events/s once Redis confirmed the last one.
 * usage: bench_evlog REDIS_ADDR [N [REDIS_USER REDIS_PASSWORD_FILE]] (a gateway's credentials) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "event_log.h"
#include "gw.h"
#include "json_util.h"
#include "redis_client.h"

static event_log_t *log_;
static uint64_t total, sent;
static double t0;
static uv_idle_t idle;

static void
pump(void)
{
    char line[128];
    while (sent < total && !event_log_full(log_)) {
        int n = snprintf(
            line, sizeof line,
            "\"type\":\"output\",\"action\":1,\"data\":\"line %" PRIu64 " of a flood\\n\"", sent);
        event_log_append_members(log_, line, (size_t)n);
        sent++;
    }
}

static void
on_idle(uv_idle_t *h)
{
    (void)h;
    pump();
    if (sent == total && event_log_acked_seq(log_) == total) {
        double dt = gw_now() - t0;
        printf("event log → Redis: %" PRIu64 " events in %.3f s = %.0f events/s\n", total, dt,
               (double)total / dt);
        uv_idle_stop(&idle);
        redis_client_stop();
        uv_stop(g_gw.loop);
    }
}

static void
on_ready(void)
{
    redis_client_cmd(NULL, NULL, "DEL sp:session:{bench-evlog}:events");
    log_ = event_log_new("bench-evlog", 1, 0, 0, NULL, NULL);
    t0 = gw_now();
    uv_idle_init(g_gw.loop, &idle);
    uv_idle_start(&idle, on_idle);
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_evlog REDIS_ADDR [N [REDIS_USER REDIS_PASSWORD_FILE]]\n");
        return 2;
    }
    total = argc > 2 ? strtoull(argv[2], NULL, 10) : 500000;
    g_gw.loop = uv_default_loop();
    snprintf(g_gw.cfg.id, sizeof g_gw.cfg.id, "bench");
    redis_auth_t auth = {argc > 4 ? argv[3] : NULL, argc > 4 ? argv[4] : NULL};
    redis_client_set_auth(&auth);
    redis_client_start(argv[1], on_ready);
    uv_run(g_gw.loop, UV_RUN_DEFAULT);
    return 0;
}
