/* main.c — sandpipe-api: the REST API as pre-forked FastCGI workers behind nginx.
 *
 *   sandpipe-api --socket unix:/run/sp/api.sock | --fcgi-fd N
 *                --redis unix:/path|host:port|sentinel://HOST:PORT[,...]/NAME
 *                --secret-file PATH [--workers N]
 *                [--redis-user NAME --redis-password-file PATH]
 *                [--redis-sentinel-user NAME --redis-sentinel-password-file PATH]
 *                [--max-body BYTES] [--max-upload BYTES] [--gateway-timeout S]
 *                [--oh-idle-timeout S] [--oh-max-runtimes N] [--oh-start-wait MS]
 *                [--oh-memory BYTES] [--oh-cpu MILLICORES] [--oh-pids N]
 * The --oh- options shape runtimes of the OpenHands Runtime API (docs/api.md).
 *
 * The parent opens the listening socket, forks N workers and restarts any that die (at most
 * one restart per worker per second); SIGTERM/SIGINT stop the workers (by pid) and exit.
 * Each worker runs an FCGX_Accept_r loop with its own Redis connection. */
#include <fcgiapp.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "image.h"

#define WORKERS_MAX 256

api_cfg_t g_api;
static volatile sig_atomic_t stop_flag;

static void
on_stop(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void
usage(void)
{
    fprintf(stderr, "usage: sandpipe-api (--socket unix:PATH | --fcgi-fd N) --redis ADDR "
                    "[--redis-user NAME --redis-password-file PATH] "
                    "[--redis-sentinel-user NAME --redis-sentinel-password-file PATH] "
                    "--secret-file PATH [--workers N] [--max-body BYTES] [--max-upload BYTES] "
                    "[--gateway-timeout S] [--oh-idle-timeout S] [--oh-max-runtimes N] "
                    "[--oh-start-wait MS] [--oh-memory BYTES] [--oh-cpu MILLICORES] "
                    "[--oh-pids N] [--images DIR]\n");
    exit(2);
}

static void
worker_run(int fd)
{
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    /* Streamed transfers allocate 256 KiB per chunk (ours and hiredis' command buffers): keep
     * such blocks in the heap, reused from chunk to chunk, instead of glibc's mmap for large
     * blocks, which faults every page in anew each time (most of an upload's CPU). */
    mallopt(M_MMAP_THRESHOLD, 8 << 20);
    mallopt(M_TRIM_THRESHOLD, 32 << 20);
    FCGX_Request fr;
    if (FCGX_InitRequest(&fr, fd, 0) != 0)
        _exit(1);
    while (FCGX_Accept_r(&fr) >= 0) {
        api_req_t r;
        api_req_read(&r, &fr);
        api_handle(&r);
        /* A body left unread (a 413, an early error) is discarded by libfcgi before the next
         * request on a kept connection (test_api: unread bodies...). Never close a kept
         * connection from this side: nginx may already be reusing it (a 502 for a POST). */
        api_req_free(&r);
        FCGX_Finish_r(&fr);
    }
    _exit(0);
}

static pid_t
spawn(int fd)
{
    pid_t pid = fork();
    if (pid == 0)
        worker_run(fd);
    return pid;
}

/* Long options without a letter of their own. */
enum {
    OPT_REDIS_USER = 256,
    OPT_REDIS_PASSWORD_FILE,
    OPT_REDIS_SENTINEL_USER,
    OPT_REDIS_SENTINEL_PASSWORD_FILE
};

int
main(int argc, char **argv)
{
    const char *sock = NULL, *secret_file = NULL;
    int fd = -1, nworkers = 4;
    g_api.redis = "127.0.0.1:6379";
    g_api.body_max = API_BODY_MAX_DEFAULT;
    g_api.upload_max = API_UPLOAD_STREAM_DEFAULT;
    g_api.gw_timeout = 60;
    g_api.image_store = IMAGE_STORE_DEF;
    g_api.oh.idle_timeout = 1800;
    /* A warm runtime is ready in ~12 ms: answering /start then saves V0 its first 2 s poll. */
    g_api.oh.start_wait_ms = API_OH_START_WAIT_DEFAULT;
    /* oh.memory/cpu/pids 0: the gateway's defaults (and its warm pool) */
    static const struct option opts[] = {
        {"socket", required_argument, 0, 's'},
        {"fcgi-fd", required_argument, 0, 'f'},
        {"redis", required_argument, 0, 'r'},
        {"redis-user", required_argument, 0, OPT_REDIS_USER},
        {"redis-password-file", required_argument, 0, OPT_REDIS_PASSWORD_FILE},
        {"redis-sentinel-user", required_argument, 0, OPT_REDIS_SENTINEL_USER},
        {"redis-sentinel-password-file", required_argument, 0, OPT_REDIS_SENTINEL_PASSWORD_FILE},
        {"secret-file", required_argument, 0, 'k'},
        {"workers", required_argument, 0, 'w'},
        {"max-body", required_argument, 0, 'b'},
        {"max-upload", required_argument, 0, 'u'},
        {"gateway-timeout", required_argument, 0, 't'},
        {"oh-idle-timeout", required_argument, 0, 'I'},
        {"oh-max-runtimes", required_argument, 0, 'N'},
        {"oh-start-wait", required_argument, 0, 'W'},
        {"oh-memory", required_argument, 0, 'M'},
        {"oh-cpu", required_argument, 0, 'C'},
        {"oh-pids", required_argument, 0, 'P'},
        {"images", required_argument, 0, 'G'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 's': sock = optarg; break;
        case 'f': fd = atoi(optarg); break;
        case 'r': g_api.redis = optarg; break;
        case OPT_REDIS_USER: g_api.redis_auth.user = optarg; break;
        case OPT_REDIS_PASSWORD_FILE: g_api.redis_auth.password_file = optarg; break;
        case OPT_REDIS_SENTINEL_USER: g_api.redis_sentinel_auth.user = optarg; break;
        case OPT_REDIS_SENTINEL_PASSWORD_FILE:
            g_api.redis_sentinel_auth.password_file = optarg;
            break;
        case 'k': secret_file = optarg; break;
        case 'w': nworkers = atoi(optarg); break;
        case 'b': g_api.body_max = (size_t)strtoull(optarg, NULL, 10); break;
        case 'u': g_api.upload_max = strtoull(optarg, NULL, 10); break;
        case 't': g_api.gw_timeout = atoi(optarg); break;
        case 'I': g_api.oh.idle_timeout = atoi(optarg); break;
        case 'N': g_api.oh.max_runtimes = atoi(optarg); break;
        case 'W': g_api.oh.start_wait_ms = atoi(optarg); break;
        case 'M': g_api.oh.memory = atoll(optarg); break;
        case 'C': g_api.oh.cpu = atoll(optarg); break;
        case 'P': g_api.oh.pids = atoll(optarg); break;
        case 'G': g_api.image_store = optarg; break;
        default: usage();
        }
    }
    if ((!sock) == (fd < 0) || !secret_file || nworkers < 1 || nworkers > WORKERS_MAX ||
        g_api.gw_timeout < 1 || g_api.body_max < 1024 || g_api.upload_max < 1 ||
        g_api.oh.idle_timeout < 0 || g_api.oh.max_runtimes < 0 || g_api.oh.start_wait_ms < 0 ||
        g_api.oh.start_wait_ms > 10000 || g_api.oh.memory < 0 || g_api.oh.cpu < 0 ||
        g_api.oh.pids < 0)
        usage();
    err_t err = {0};
    if (jwt_secret_load(secret_file, g_api.secret, sizeof g_api.secret, &g_api.secret_len, &err) <
        0) {
        fprintf(stderr, "sandpipe-api: %s\n", err.msg);
        return 1;
    }
    if (redis_auth_check(&g_api.redis_auth, &err) < 0) {
        fprintf(stderr, "sandpipe-api: %s\n", err.msg);
        return 1;
    }
    if (redis_addr_parse(g_api.redis, &g_api.redis_where, &err) < 0) {
        fprintf(stderr, "sandpipe-api: %s\n", err.msg);
        return 2;
    }
    if (redis_auth_check(&g_api.redis_sentinel_auth, &err) < 0) {
        fprintf(stderr,
                "sandpipe-api: the sentinels' credentials (--redis-sentinel-user, "
                "--redis-sentinel-password-file): %s\n",
                err.msg);
        return 1;
    }
    if (FCGX_Init() != 0) {
        fprintf(stderr, "sandpipe-api: FCGX_Init failed\n");
        return 1;
    }
    char path[512] = "";
    if (sock) {
        if (strncmp(sock, "unix:", 5) != 0) {
            fprintf(stderr, "sandpipe-api: --socket takes unix:PATH\n");
            return 2;
        }
        snprintf(path, sizeof path, "%s", sock + 5);
        unlink(path);
        fd = FCGX_OpenSocket(path, 256);
        if (fd < 0) {
            fprintf(stderr, "sandpipe-api: cannot listen on %s\n", path);
            return 1;
        }
        /* nginx workers may run as another user; the token is the access control. */
        chmod(path, 0666);
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    pid_t workers[WORKERS_MAX] = {0};
    time_t started[WORKERS_MAX] = {0};
    for (int i = 0; i < nworkers; i++) {
        workers[i] = spawn(fd);
        started[i] = time(NULL);
    }
    fprintf(stderr, "sandpipe-api: %d workers on %s\n", nworkers, sock ? sock : "inherited fd");
    while (!stop_flag) {
        int status;
        /* The parent has no children but its workers, so waiting on any of them is safe. */
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (stop_flag)
                break;
            sleep(1);
            continue;
        }
        for (int i = 0; i < nworkers; i++) {
            if (workers[i] != pid)
                continue;
            fprintf(stderr, "sandpipe-api: worker %d exited (status %d), restarting\n", (int)pid,
                    status);
            if (time(NULL) - started[i] < 1)
                sleep(1);
            workers[i] = stop_flag ? 0 : spawn(fd);
            started[i] = time(NULL);
        }
    }
    for (int i = 0; i < nworkers; i++)
        if (workers[i] > 0)
            kill(workers[i], SIGTERM);
    for (int i = 0; i < nworkers; i++)
        if (workers[i] > 0)
            waitpid(workers[i], NULL, 0);
    if (*path)
        unlink(path);
    return 0;
}
