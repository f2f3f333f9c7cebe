/* bench_latency.c — `echo hi` round trip through the executor socket (run action → CLOSE with
 * the observation), and the same command typed into a bare interactive bash on a PTY (the
 * floor any PTY-based executor sits on), measured in the same run.
 * usage: bench_latency SOCKET [N] */
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"
#include "frame.h"

/* Prints the figures; returns the p50. */
static double
report(const char *name, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    printf("%-28s n=%d p50=%.0fus p90=%.0fus p99=%.0fus\n", name, n, v[n / 2], v[n * 9 / 10],
           v[n * 99 / 100]);
    return v[n / 2];
}

static int
read_frame(int fd, uint8_t *buf, size_t cap, frame_t *f)
{
    size_t have = 0;
    for (;;) {
        err_t err;
        int n = frame_decode(buf, have, FRAME_MAX_PAYLOAD, f, &err);
        if (n > 0)
            return n;
        if (n < 0)
            return -1;
        ssize_t r = read(fd, buf + have, cap - have);
        if (r <= 0)
            return -1;
        have += (size_t)r;
    }
}

/* Reads frames until CLOSE on channel ch; frames arrive whole here since we read exactly. */
static int
wait_close(int fd, uint32_t ch)
{
    static uint8_t buf[1 << 21];
    static size_t have;
    for (;;) {
        frame_t f;
        err_t err;
        int n = frame_decode(buf, have, FRAME_MAX_PAYLOAD, &f, &err);
        if (n < 0)
            return -1;
        if (n > 0) {
            int done = f.type == FRAME_CLOSE && f.channel == ch;
            memmove(buf, buf + n, have - (size_t)n);
            have -= (size_t)n;
            if (done)
                return 0;
            continue;
        }
        ssize_t r = read(fd, buf + have, sizeof buf - have);
        if (r <= 0)
            return -1;
        have += (size_t)r;
    }
}

static double
bench_executor(const char *path, int n)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        perror("connect");
        exit(1);
    }
    uint8_t hello[4096];
    frame_t f;
    read_frame(fd, hello, sizeof hello, &f);
    const char *req = "{\"op\":\"action\",\"session\":\"bench\",\"action\":{\"action\":\"run\","
                      "\"args\":{\"command\":\"echo hi\"}}}";
    double *v = calloc((size_t)n, sizeof *v);
    for (int i = -20; i < n; i++) { /* 20 warm-up rounds (the first starts the shell) */
        uint8_t msg[512];
        frame_encode_header(msg, FRAME_OPEN, 0, 1, (uint32_t)strlen(req));
        memcpy(msg + FRAME_HEADER_LEN, req, strlen(req));
        double t0 = now_us();
        if (write(fd, msg, FRAME_HEADER_LEN + strlen(req)) < 0 || wait_close(fd, 1) < 0) {
            fprintf(stderr, "executor round trip failed\n");
            exit(1);
        }
        if (i >= 0)
            v[i] = now_us() - t0;
    }
    double p50 = report("executor echo hi", v, n);
    free(v);
    close(fd);
    return p50;
}

/* The floor: `echo hi` typed into a bare bash on a PTY, waiting for the next prompt. */
static double
bench_bare_pty(int n)
{
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    if (pid == 0) {
        setenv("PS1", "#P#", 1);
        execl("/bin/bash", "bash", "--norc", "--noprofile", "--noediting", "-i", (char *)NULL);
        _exit(127);
    }
    char buf[65536];
    size_t have = 0;
    double *v = calloc((size_t)n, sizeof *v);
    for (int i = -21; i < n; i++) {
        double t0 = now_us();
        if (i > -21 && write(master, "echo hi\n", 8) != 8)
            exit(1);
        have = 0;
        for (;;) {
            ssize_t r = read(master, buf + have, sizeof buf - 1 - have);
            if (r <= 0)
                exit(1);
            have += (size_t)r;
            buf[have] = '\0';
            if (strstr(buf, "#P#"))
                break;
        }
        if (i >= 0)
            v[i] = now_us() - t0;
    }
    double p50 = report("bare bash on a PTY (floor)", v, n);
    free(v);
    kill(pid, 9);
    return p50;
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_latency SOCKET [N]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 2000;
    double ours = bench_executor(argv[1], n);
    double bare = bench_bare_pty(n);
    printf("  -> executor p50 / floor p50: %.2fx\n", ours / bare);
    return 0;
}
