/* bench_pty.c — the floor of any terminal's stream on this kernel: a command on a fresh PTY
 * (forkpty, the line discipline's defaults: \n → \r\n), its master read 64 KiB at a time until
 * the command is gone, nothing done with the bytes. A PTY read returns what the line discipline
 * holds (under 4 KiB) however much the command wrote, so every server of a terminal (sandpipe's,
 * script(1) under websocketd) pays this and its own relay on top.
 * Prints a line as bench_ws drain does ("... bytes in S s = R MB/s") and the bytes per read.
 * usage: bench_pty COMMAND (run by sh -c) */
#include <pty.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"

int
main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_pty COMMAND\n");
        return 2;
    }
    static char chunk[65536];
    int master;
    double t0 = clock_mono();
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    if (pid < 0) {
        perror("forkpty");
        return 1;
    }
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", argv[1], (char *)NULL);
        _exit(127);
    }
    long long total = 0, reads = 0;
    ssize_t n;
    /* EIO once the command and everything it started closed the slave side */
    while ((n = read(master, chunk, sizeof chunk)) > 0) {
        total += n;
        reads++;
    }
    double s = clock_mono() - t0;
    waitpid(pid, NULL, 0);
    printf("pty: %lld bytes in %.3f s = %.1f MB/s (%lld reads, %.0f bytes each)\n", total, s,
           (double)total / 1e6 / s, reads, reads ? (double)total / (double)reads : 0.0);
    return total > 0 ? 0 : 1;
}
