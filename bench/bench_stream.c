/* bench_stream.c — streaming throughput through the executor: `cat FILE` as a run action (PTY)
 * and as proc.spawn (pipe), the client granting credit back as it reads, as a gateway does.
 * Prints MB/s. usage: bench_stream SOCKET FILE pty|pipe */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "frame.h"

static void
send_frame(int fd, uint8_t type, uint32_t ch, const void *p, uint32_t n)
{
    uint8_t hdr[FRAME_HEADER_LEN];
    frame_encode_header(hdr, type, 0, ch, n);
    if (write(fd, hdr, sizeof hdr) != (ssize_t)sizeof hdr || (n && write(fd, p, n) != (ssize_t)n)) {
        perror("write");
        exit(1);
    }
}

int
main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_stream SOCKET FILE pty|pipe\n");
        return 2;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", argv[1]);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        perror("connect");
        return 1;
    }
    char req[1024];
    if (strcmp(argv[3], "pty") == 0)
        snprintf(req, sizeof req,
                 "{\"op\":\"action\",\"session\":\"stream\",\"action\":{\"action\":\"run\","
                 "\"args\":{\"command\":\"cat %s\",\"blocking\":true},\"timeout\":600}}",
                 argv[2]);
    else
        snprintf(req, sizeof req, "{\"op\":\"proc.spawn\",\"argv\":[\"cat\",\"%s\"]}", argv[2]);
    size_t cap = 4 << 20, have = 0;
    uint8_t *buf = malloc(cap);
    double t0 = clock_mono();
    send_frame(fd, FRAME_OPEN, 1, req, (uint32_t)strlen(req));
    unsigned long long bytes = 0;
    for (;;) {
        frame_t f;
        err_t err;
        int n;
        while ((n = frame_decode(buf, have, FRAME_MAX_PAYLOAD, &f, &err)) > 0) {
            if (f.type == FRAME_DATA && f.channel == 1) {
                bytes += f.len;
                uint8_t c[4];
                frame_put_u32(c, f.len);
                send_frame(fd, FRAME_CREDIT, 1, c, 4);
            } else if (f.type == FRAME_CLOSE && f.channel == 1) {
                double dt = clock_mono() - t0;
                printf("%s: %llu bytes in %.3f s = %.1f MB/s\n", argv[3], bytes, dt,
                       (double)bytes / dt / 1e6);
                return 0;
            }
            memmove(buf, buf + n, have - (size_t)n);
            have -= (size_t)n;
        }
        if (n < 0) {
            fprintf(stderr, "bad frame: %s\n", err.msg);
            return 1;
        }
        ssize_t r = read(fd, buf + have, cap - have);
        if (r <= 0) {
            fprintf(stderr, "connection closed\n");
            return 1;
        }
        have += (size_t)r;
    }
}
