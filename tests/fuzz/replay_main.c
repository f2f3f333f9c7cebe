/* replay_main.c — runs a fuzz target's LLVMFuzzerTestOneInput over corpus files without
 * libFuzzer (crun style), so `make test` replays every corpus under the sanitizers.
 * Usage: <target>_replay PATH...   (files, or directories whose regular files are replayed) */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *data = malloc(cap);
    size_t n;
    while (data && (n = fread(data + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *bigger = realloc(data, cap *= 2);
            if (!bigger)
                free(data);
            data = bigger;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!data || bad) {
        fprintf(stderr, "%s: read failed\n", path);
        free(data);
        return -1;
    }
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    return 1;
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Returns the number of inputs replayed, or -1. Directory entries are replayed sorted. */
static int
replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char **more = realloc(names, (n + 1) * sizeof(*names));
        if (!more)
            abort();
        names = more;
        if (asprintf(&names[n], "%s/%s", path, de->d_name) < 0)
            abort();
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_names);
    int total = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat est;
        if (stat(names[i], &est) == 0 && S_ISREG(est.st_mode)) {
            if (replay_file(names[i]) < 0)
                total = -1;
            else if (total >= 0)
                total++;
        }
        free(names[i]);
    }
    free(names);
    return total;
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    int total = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        int r = replay_path(argv[i]);
        if (r < 0)
            failed = 1;
        else
            total += r;
    }
    printf("%s: replayed %d input(s)\n", argv[0], total);
    return failed;
}
