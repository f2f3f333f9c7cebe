/* main.c — sandpipe-gateway: options, the uv loop, libwebsockets on that loop, Redis, the
 * warm pool, re-attachment of surviving sessions, heartbeats, orderly shutdown. */
#include <getopt.h>
#include <libwebsockets.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "gw.h"
#include "gw_options.h"
#include "http_server.h"
#include "metrics.h"
#include "jwt.h"
#include "listen_addr.h"
#include "pool.h"
#include "preview_listen.h"
#include "redis_addr.h"
#include "redis_client.h"
#include "sandbox/sandbox_disk.h"
#include "sandbox/sandbox_root.h"
#include "sandbox_destroy.h"
#include "sandbox_start.h"
#include "net_policy.h"
#include "session.h"
#include "session_network.h"
#include "takeover.h"
#include "ws_server.h"

static uv_signal_t sigint, sigterm;
static uv_timer_t tick, quit;

/* Handles libwebsockets and hiredis close asynchronously on a foreign loop; give them this long,
 * then leave the loop whatever is still open. */
#define QUIT_GRACE_MS 300

static void
on_quit(uv_timer_t *t)
{
    (void)t;
    uv_stop(g_gw.loop);
}

/* Root inside needs a block of uids to map (root, not --sandbox-uids off) and idmapped mounts
 * of the image store (the kernel, its filesystem); where either is missing, sandboxes map one
 * uid as before, and the log says why once. */
static void
check_root_inside(gw_config_t *cfg)
{
    err_t err = {0};
    if (!cfg->root_inside)
        return;
    if (geteuid() != 0 || cfg->sandbox_shared_uid)
        snprintf(err.msg, sizeof err.msg, "the gateway is not root or --sandbox-uids is off");
    else if (access(cfg->image_store, F_OK) == 0 && !sandbox_root_can_idmap(cfg->image_store, &err))
        ;
    else
        return;
    cfg->root_inside = false;
    fprintf(stderr,
            "sandpipe-gateway: no root inside sandboxes (sudo runs as the sandbox user, "
            "an image's root is read-only): %s\n",
            err.msg);
}

static void
on_stop(uv_signal_t *h, int signo)
{
    (void)h;
    GW_LOG("signal %d: shutting down (sandboxes keep running)", signo);
    g_gw.stopping = true;
    uv_signal_stop(&sigint);
    uv_signal_stop(&sigterm);
    uv_timer_stop(&tick);
    takeover_stop();
    sessions_shutdown();
    sandbox_start_stop();   /* those not begun: answered; running ones finish (main drains them) */
    sandbox_destroy_stop(); /* sessions' not begun: left to the restart (sandbox_destroy.h) */
    session_network_stop();
    pool_stop();
    redis_client_stop();
    lws_context_destroy(g_gw.lws); /* begins: lws NULLs g_gw.lws (pcontext) once it is done */
    uv_close((uv_handle_t *)&sigint, NULL);
    uv_close((uv_handle_t *)&sigterm, NULL);
    uv_close((uv_handle_t *)&tick, NULL);
    uv_timer_init(g_gw.loop, &quit);
    uv_timer_start(&quit, on_quit, QUIT_GRACE_MS, 0);
}

static void
announce_addr(void)
{
    /* where nginx sends this gateway's sessions' traffic (redis/README.md, route.c) */
    redis_client_cmd(NULL, NULL, "HSET sp:gateway:%s:info addr %s preview %s", g_gw.cfg.id,
                     g_gw.cfg.advertise, preview_listen_addr()[0] ? preview_listen_addr() : "-");
}

static void
on_tick(uv_timer_t *t)
{
    (void)t;
    takeover_heartbeat();
    announce_addr();
    metrics_flush();
    sessions_tick();
    pool_tick();
}

/* The WebSocket listener opens once the sessions this gateway owned are back (restored at the
 * first Redis connection), so a client that reconnects after a restart never hears "not found"
 * for a session about to be restored; without Redis, after LISTEN_WAIT_MS anyway, to answer. */
#define LISTEN_WAIT_MS 5000
static struct lws_context_creation_info listen_info;
static listen_addr_t listen_addr;
static uv_timer_t listen_timer;

/* The same routes on a unix socket: nginx on this host skips loopback TCP (and its netfilter
 * and conntrack work) on every proxied request and answer. Any local user may connect, as to
 * the TCP port: every request carries its token. */
static void
listen_unix(const char *path)
{
    struct lws_context_creation_info info = listen_info;
    info.vhost_name = "unix";
    info.options &= ~listen_addr_lws_options(&listen_addr); /* IPv6 socket options: TCP's */
    info.options |= LWS_SERVER_OPTION_UNIX_SOCK | LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
    info.iface = path;
    info.port = 0;
    if (!lws_create_vhost(g_gw.lws, &info) || chmod(path, 0666) < 0) {
        GW_LOG("cannot listen on unix:%s", path);
        exit(1);
    }
    GW_LOG("%s listening on unix:%s", g_gw.cfg.id, path);
}

static void
start_listening(void)
{
    static bool listening;
    if (listening)
        return;
    listening = true;
    uv_timer_stop(&listen_timer);
    if (!lws_create_vhost(g_gw.lws, &listen_info)) {
        GW_LOG("cannot listen on %s port %d", listen_addr.addr, listen_addr.port);
        exit(1);
    }
    /* what the socket really has, not what was asked: they must be the same */
    char bound[96];
    err_t err = {0};
    if (listen_addr_verify(&listen_addr, bound, sizeof bound, &err) < 0) {
        GW_LOG("%s", err.msg);
        exit(1);
    }
    GW_LOG("%s listening on ws://%s (provider %s, pool %d, redis %s)", g_gw.cfg.id, bound,
           g_gw.cfg.provider, g_gw.cfg.pool_size, g_gw.cfg.redis);
    if (g_gw.cfg.listen_unix)
        listen_unix(g_gw.cfg.listen_unix);
    preview_listen_start();
    announce_addr();
}

static void
on_listen_timer(uv_timer_t *t)
{
    (void)t;
    GW_LOG("redis is not answering: listening before the sessions are restored");
    start_listening();
}

/* Whether a sandbox of this gateway is in use: a restored session's, in the warm pool, or,
 * after a takeover, a peer's session's or pool's (Redis, asked only when the first two say no). */
static bool
sandbox_owned(const char *sandbox_id)
{
    return sessions_own_sandbox(sandbox_id) || pool_owns(sandbox_id) ||
           sessions_sandbox_held(sandbox_id);
}

static void
on_redis_ready(void)
{
    static bool restored;
    if (!restored) { /* first connection: re-attach what this gateway owned before */
        restored = true;
        sessions_restore();
        pool_restore();
        start_listening();
        const provider_t *p = provider_find(g_gw.cfg.provider);
        if (p && p->cleanup) /* what an earlier life left behind that nothing owns */
            p->cleanup(g_gw.cfg.id, sandbox_owned);
    } else {
        takeover_recheck(); /* cut off long enough, a peer may own our sessions now */
    }
    takeover_heartbeat();
    announce_addr();
    sessions_redis_ready();
    pool_start();
    takeover_start();
}

int
main(int argc, char **argv)
{
    /* Streamed transfers move 256 KiB items (hiredis' reader, the chunk being handed to the
     * executor): keep blocks of that size in the heap, reused, rather than glibc's mmap for
     * large blocks, which faults every page in again for each chunk. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_TRIM_THRESHOLD, 4 << 20);
    /* libuv's pool (4 threads by default, made at its first job) holds up to
     * SANDBOX_STARTS_MAX starts and SANDBOX_DESTROYS_MAX destroys: room beside them for the
     * Sentinel lookups and zip uploads. An operator's own setting stays. */
    setenv("UV_THREADPOOL_SIZE", "8", 0);
    gw_config_t *cfg = &g_gw.cfg;
    gw_options_t o;
    int rc = gw_options_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    const char *listen = o.listen, *preview_listen = o.preview_listen;
    const char *host = o.host;
    static char exe[PATH_MAX], listen_host[256];
    err_t err = {0};
    if (!cfg->executor_path) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 32);
        if (n > 0) {
            exe[n] = '\0';
            char *slash = strrchr(exe, '/');
            strcpy(slash + 1, "sandpipe-executor");
        }
        cfg->executor_path = exe;
    }
    if (listen_addr_parse(listen, &listen_addr, &err) < 0) {
        fprintf(stderr, "sandpipe-gateway: %s\n", err.msg);
        return 2;
    }
    snprintf(listen_host, sizeof listen_host, "%.*s", (int)(strrchr(listen, ':') - listen), listen);
    cfg->listen_host = listen_host;
    cfg->listen_port = listen_addr.port;
    if (!cfg->advertise[0]) {
        /* as written (a name stays a name, [v6] keeps its brackets), or this host's name */
        bool any = !strcmp(listen_addr.addr, "0.0.0.0") || !strcmp(listen_addr.addr, "::");
        snprintf(cfg->advertise, sizeof cfg->advertise, "%.120s:%d", any ? host : listen_host,
                 cfg->listen_port);
    }
    if (preview_listen_config(preview_listen, listen_addr.addr, cfg->advertise) < 0)
        return 2;
    if (!provider_find(cfg->provider)) {
        fprintf(stderr, "sandpipe-gateway: unknown provider %s\n", cfg->provider);
        return 2;
    }
    err_t ierr = {0};
    char rootfs[PATH_MAX];
    if (image_resolve(cfg->image_store, cfg->image, rootfs, sizeof rootfs, &ierr) < 0) {
        fprintf(stderr, "sandpipe-gateway: --image: %s\n", ierr.msg);
        return 2;
    }
    check_root_inside(cfg);
    if (cfg->max_disk < 0)
        cfg->max_disk = cfg->default_disk * 16;
    if (cfg->default_disk < 0 || (cfg->default_disk > 0 && cfg->default_disk < SANDBOX_DISK_MIN) ||
        cfg->max_disk < cfg->default_disk) {
        fprintf(stderr,
                "sandpipe-gateway: --disk must be 0 or at least %lld bytes, and no more "
                "than --disk-max\n",
                SANDBOX_DISK_MIN);
        return 2;
    }
    if (cfg->upload_max < 1 || cfg->upload_max > (uint64_t)INT64_MAX) {
        fprintf(stderr, "sandpipe-gateway: --max-upload must be a positive number of bytes\n");
        return 2;
    }
    if (!cfg->secret_file) {
        fprintf(stderr, "sandpipe-gateway: --secret-file is required (make run creates one)\n");
        return 2;
    }
    if (jwt_secret_load(cfg->secret_file, g_gw.secret, sizeof g_gw.secret, &g_gw.secret_len, &err) <
        0) {
        fprintf(stderr, "sandpipe-gateway: %s\n", err.msg);
        return 1;
    }
    route_key_derive(g_gw.secret, g_gw.secret_len, g_gw.route_key); /* nginx's (route_key.h) */
    if (redis_auth_check(&o.redis_auth, &err) < 0) {
        fprintf(stderr, "sandpipe-gateway: %s\n", err.msg);
        return 1;
    }
    redis_addr_t redis_where;
    if (redis_addr_parse(cfg->redis, &redis_where, &err) < 0) {
        fprintf(stderr, "sandpipe-gateway: %s\n", err.msg);
        return 2;
    }
    if (redis_auth_check(&o.sentinel_auth, &err) < 0) {
        fprintf(stderr,
                "sandpipe-gateway: the sentinels' credentials (--redis-sentinel-user, "
                "--redis-sentinel-password-file): %s\n",
                err.msg);
        return 1;
    }
    mkdir(cfg->state_dir, 0711); /* searchable by the sandboxes' uids, not listable */
    signal(SIGPIPE, SIG_IGN);
    /* One fd per client and per executor: take all the descriptors we are allowed. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max > 1048576 ? 1048576 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    g_gw.loop = uv_default_loop();
    /* sandboxes' output into our log, bounded (through a start's thread: sandbox_start.h) */
    provider_log_sink = sandbox_start_log_sink;
    g_gw.started = gw_now();
    lws_set_log_level(LLL_ERR | LLL_WARN, NULL);
    static void *foreign[1];
    foreign[0] = g_gw.loop;
    struct lws_context_creation_info *info = &listen_info;
    info->options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS |
                    LWS_SERVER_OPTION_EXPLICIT_VHOSTS; /* the listener: start_listening */
    info->foreign_loops = foreign;
    info->port = listen_addr.port;
    info->iface = listen_addr.addr; /* the address, numeric: exactly what --listen named */
    info->protocols = ws_protocols();
    info->ka_time = 0;
    info->timeout_secs = 30;
    /* what one read takes from a connection: an upload's body comes in pieces of this size */
    info->pt_serv_buf_size = 64 * 1024;
    info->pcontext = &g_gw.lws;
    g_gw.lws = lws_create_context(info);
    if (!g_gw.lws) {
        fprintf(stderr, "sandpipe-gateway: cannot start libwebsockets for %s\n", listen);
        return 1;
    }
    info->options |= listen_addr_lws_options(&listen_addr); /* the listener's vhost alone */
    uv_timer_init(g_gw.loop, &listen_timer);
    uv_timer_start(&listen_timer, on_listen_timer, LISTEN_WAIT_MS, 0);
    redis_client_set_auth(&o.redis_auth);
    redis_client_set_sentinel_auth(&o.sentinel_auth);
    redis_client_start(cfg->redis, on_redis_ready);
    http_server_init();
    session_network_start();
    uv_signal_init(g_gw.loop, &sigint);
    uv_signal_init(g_gw.loop, &sigterm);
    uv_signal_start(&sigint, on_stop, SIGINT);
    uv_signal_start(&sigterm, on_stop, SIGTERM);
    uv_timer_init(g_gw.loop, &tick);
    uv_timer_start(&tick, on_tick, 1000, 1000);
    GW_LOG("%s started (provider %s, pool %d, redis %s)", cfg->id, cfg->provider, cfg->pool_size,
           cfg->redis);
    uv_run(g_gw.loop, UV_RUN_DEFAULT);
    /* On a foreign loop lws finishes its destroy in steps, each one a call once its handles
     * closed; the quit timer may have stopped the loop before the last step ran. */
    for (int i = 0; i < 4 && g_gw.lws; i++) {
        lws_context_destroy(g_gw.lws);
        uv_run(g_gw.loop, UV_RUN_NOWAIT);
    }
    /* A start still on a worker: its sandbox is handed to whoever asked (a session gone
     * discards it, the pool records it) rather than left half made; destroys begun, and
     * discards, are carried out. */
    while (sandbox_start_running() > 0 || sandbox_destroy_pending() > 0)
        uv_run(g_gw.loop, UV_RUN_ONCE);
    GW_LOG("stopped");
    return 0; /* the loop may still hold handles lws left open: the process ends them */
}
