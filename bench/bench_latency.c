/* bench_latency.c — `echo hi` round trip through the executor socket (run action → CLOSE with
 * the observation), and the same command typed into a bare interactive bash on a PTY (the
 * floor any PTY-based executor sits on), measured in the same run, their rounds alternating
 * in a shuffled order.
 * usage: bench_latency SOCKET [N [SOCKET...]]: further sockets are other executors (an A/B),
 * measured in the same alternation. */
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

static int
executor_connect(const char *path)
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
    return fd;
}

/* One `echo hi` through the executor: its microseconds. */
static double
executor_round(int fd)
{
    static const char req[] = "{\"op\":\"action\",\"session\":\"bench\",\"action\":{"
                              "\"action\":\"run\",\"args\":{\"command\":\"echo hi\"}}}";
    uint8_t msg[512];
    frame_encode_header(msg, FRAME_OPEN, 0, 1, (uint32_t)strlen(req));
    memcpy(msg + FRAME_HEADER_LEN, req, strlen(req));
    double t0 = now_us();
    if (write(fd, msg, FRAME_HEADER_LEN + strlen(req)) < 0 || wait_close(fd, 1) < 0) {
        fprintf(stderr, "executor round trip failed\n");
        exit(1);
    }
    return now_us() - t0;
}

/* Reads the bare shell's PTY until its prompt. */
static void
bare_until_prompt(int master)
{
    char buf[65536];
    size_t have = 0;
    for (;;) {
        ssize_t r = read(master, buf + have, sizeof buf - 1 - have);
        if (r <= 0)
            exit(1);
        have += (size_t)r;
        buf[have] = '\0';
        if (strstr(buf, "#P#"))
            return;
    }
}

/* The floor: a bare bash on a PTY, driven directly; returns the master, its first prompt read. */
static int
bare_start(pid_t *pid)
{
    int master;
    *pid = forkpty(&master, NULL, NULL, NULL);
    if (*pid == 0) {
        setenv("PS1", "#P#", 1);
        execl("/bin/bash", "bash", "--norc", "--noprofile", "--noediting", "-i", (char *)NULL);
        _exit(127);
    }
    bare_until_prompt(master);
    return master;
}

/* One `echo hi` typed into the bare bash, until its next prompt: its microseconds. */
static double
bare_round(int master)
{
    double t0 = now_us();
    if (write(master, "echo hi\n", 8) != 8)
        exit(1);
    bare_until_prompt(master);
    return now_us() - t0;
}

/* The rounds of all alternate (each executor given, then the floor), so that a busy moment of
 * a shared machine falls on all alike; more than one socket is an A/B of executor builds. */
int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_latency SOCKET [N [SOCKET...]]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 2000;
    int nexec = argc > 3 ? argc - 2 : 1;
    const char **paths = calloc((size_t)nexec, sizeof *paths);
    int *fds = calloc((size_t)nexec, sizeof *fds);
    double **ours = calloc((size_t)nexec, sizeof *ours);
    for (int e = 0; e < nexec; e++) {
        paths[e] = e == 0 ? argv[1] : argv[2 + e];
        fds[e] = executor_connect(paths[e]);
        ours[e] = calloc((size_t)n, sizeof **ours);
    }
    pid_t pid;
    int master = bare_start(&pid);
    double *bare = calloc((size_t)n, sizeof *bare);
    /* each round in its own order (shuffle, bench_stats.h); index nexec is the floor */
    int *order = calloc((size_t)nexec + 1, sizeof *order);
    unsigned seed = 35;
    for (int k = 0; k <= nexec; k++)
        order[k] = k;
    for (int i = -20; i < n; i++) { /* 20 warm-up rounds (the first starts the shell) */
        shuffle(order, nexec + 1, &seed);
        for (int k = 0; k <= nexec; k++) {
            int e = order[k];
            double t = e < nexec ? executor_round(fds[e]) : bare_round(master);
            if (i >= 0)
                (e < nexec ? ours[e] : bare)[i] = t;
        }
    }
    free(order);
    double p_bare = report("bare bash on a PTY (floor)", bare, n);
    for (int e = 0; e < nexec; e++) {
        char name[64];
        snprintf(name, sizeof name, nexec > 1 ? "executor %d echo hi" : "executor echo hi", e + 1);
        double p_ours = report(name, ours[e], n);
        printf("  -> %s p50 / floor p50: %.2fx (rounds alternating, shuffled)%s%s\n",
               nexec > 1 ? name : "executor", p_ours / p_bare, nexec > 1 ? " " : "",
               nexec > 1 ? paths[e] : "");
        free(ours[e]);
        close(fds[e]);
    }
    free(ours);
    free(fds);
    free(paths);
    free(bare);
    kill(pid, 9);
    return 0;
}
