/* bench_disk.c — what a sandbox's own disk (gateway/sandbox/sandbox_disk.c) costs: N rounds of
 * create (sparse image, mkfs.ext4 in the first round only, disk_template.h: its bytes after;
 * loop device, mount, layout) and remove (unmount, detach, delete)
 * in a temporary directory under DIR, at SIZE bytes. Needs root and loop devices. bench_disk DIR
 * [ROUNDS] [SIZE] */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_stats.h"
#include "gateway/sandbox/sandbox_disk.h"

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_disk DIR [ROUNDS] [SIZE]\n");
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    long long size = argc > 3 ? atoll(argv[3]) : 10LL << 30;
    if (rounds < 1 || rounds > 10000)
        rounds = 20;
    double *mk = calloc((size_t)rounds, sizeof *mk), *rm = calloc((size_t)rounds, sizeof *rm);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/bench-disk-%d", argv[1], (int)getpid());
    if (!mk || !rm || mkdir(dir, 0700) < 0) {
        perror(dir);
        return 1;
    }
    long long blocks = 0;
    for (int i = 0; i < rounds; i++) {
        err_t err = {0};
        double t0 = now_us();
        if (sandbox_disk_create(dir, size, 1000, 1000, &err) < 0) {
            fprintf(stderr, "bench_disk: %s\n", err.msg);
            rmdir(dir);
            return 1;
        }
        double t1 = now_us();
        struct stat st;
        char img[PATH_MAX + 16];
        snprintf(img, sizeof img, "%s/%s", dir, SANDBOX_DISK_IMAGE);
        if (stat(img, &st) == 0)
            blocks = st.st_blocks;
        if (sandbox_disk_remove(dir, true, &err) < 0) {
            fprintf(stderr, "bench_disk: %s\n", err.msg);
            return 1;
        }
        mk[i] = (t1 - t0) / 1000;
        rm[i] = (now_us() - t1) / 1000;
    }
    char mnt[PATH_MAX + 16];
    snprintf(mnt, sizeof mnt, "%s/%s", dir, SANDBOX_DISK_MOUNT);
    rmdir(mnt);
    rmdir(dir);
    qsort(mk, (size_t)rounds, sizeof *mk, cmp_double);
    qsort(rm, (size_t)rounds, sizeof *rm, cmp_double);
    printf("sandbox disk of %lld MiB, %d rounds: create p50 %.1f ms (min %.1f, p90 %.1f), "
           "remove p50 %.1f ms (min %.1f, p90 %.1f); an empty image holds %lld KiB\n",
           size >> 20, rounds, pct(mk, (size_t)rounds, 50), mk[0], pct(mk, (size_t)rounds, 90),
           pct(rm, (size_t)rounds, 50), rm[0], pct(rm, (size_t)rounds, 90), blocks / 2);
    free(mk);
    free(rm);
    return 0;
}
