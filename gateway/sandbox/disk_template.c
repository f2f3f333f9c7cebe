/* disk_template.c — empty filesystems kept per size. See disk_template.h. */
#include "disk_template.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xalloc.h"

typedef struct {
    off_t offset;
    size_t len;
} segment_t;

typedef struct {
    int64_t bytes; /* the image's size; 0: an empty slot */
    size_t nseg;
    segment_t *seg;
    uint8_t *data; /* the segments' bytes, one after the other */
    uint64_t used; /* when it was last kept or applied (the oldest is replaced) */
} template_t;

static template_t kept[DISK_TEMPLATE_MAX];
static uint64_t clock_ticks;
/* kept and clock_ticks: sandboxes start on several threads (gateway/sandbox_start.h) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static template_t *
find(int64_t bytes)
{
    for (size_t i = 0; i < DISK_TEMPLATE_MAX; i++)
        if (kept[i].bytes == bytes)
            return &kept[i];
    return NULL;
}

static void
release(template_t *t)
{
    free(t->seg);
    free(t->data);
    memset(t, 0, sizeof *t);
}

static int
write_all(int fd, const uint8_t *p, size_t len, off_t at)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        p += n;
        len -= (size_t)n;
        at += n;
    }
    return 0;
}

static int
apply(int img, int64_t bytes)
{
    template_t *t = bytes > 0 ? find(bytes) : NULL;
    if (!t)
        return 0;
    t->used = ++clock_ticks;
    const uint8_t *p = t->data;
    for (size_t i = 0; i < t->nseg; p += t->seg[i].len, i++) {
        int e = write_all(img, p, t->seg[i].len, t->seg[i].offset);
        if (e < 0)
            return e;
    }
    return 1;
}

int
disk_template_apply(int img, int64_t bytes)
{
    pthread_mutex_lock(&lock);
    int r = apply(img, bytes);
    pthread_mutex_unlock(&lock);
    return r;
}

/* img's data segments (SEEK_DATA .. SEEK_HOLE) and their bytes into t; 0 or -errno. */
static int
read_segments(int img, int64_t bytes, template_t *t)
{
    size_t cap = 0, total = 0;
    off_t at = 0;
    for (;;) {
        off_t start = lseek(img, at, SEEK_DATA);
        if (start < 0)
            return errno == ENXIO ? 0 : -errno; /* ENXIO: no data past at */
        off_t end = lseek(img, start, SEEK_HOLE);
        if (end < 0)
            return -errno;
        if (end > bytes || end <= start)
            return -EIO;
        size_t len = (size_t)(end - start);
        if (len > DISK_TEMPLATE_BYTES_MAX - total)
            return -EFBIG;
        if (t->nseg == cap) {
            cap = cap ? cap * 2 : 32;
            t->seg = xrealloc(t->seg, cap * sizeof *t->seg);
        }
        t->data = xrealloc(t->data, total + len);
        for (size_t got = 0; got < len;) {
            ssize_t n = pread(img, t->data + total + got, len - got, start + (off_t)got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return n < 0 ? -errno : -EIO;
            got += (size_t)n;
        }
        t->seg[t->nseg++] = (segment_t){start, len};
        total += len;
        at = end;
    }
}

void
disk_template_keep(int img, int64_t bytes)
{
    template_t t = {.bytes = bytes};
    pthread_mutex_lock(&lock);
    bool known = find(bytes) != NULL;
    pthread_mutex_unlock(&lock);
    if (bytes <= 0 || known || read_segments(img, bytes, &t) < 0) {
        release(&t);
        return;
    }
    pthread_mutex_lock(&lock);
    if (find(bytes)) { /* another start kept it meanwhile */
        pthread_mutex_unlock(&lock);
        release(&t);
        return;
    }
    template_t *slot = &kept[0];
    for (size_t i = 1; i < DISK_TEMPLATE_MAX; i++)
        if (kept[i].used < slot->used)
            slot = &kept[i];
    release(slot);
    t.used = ++clock_ticks;
    *slot = t;
    pthread_mutex_unlock(&lock);
}

void
disk_template_clear(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < DISK_TEMPLATE_MAX; i++)
        release(&kept[i]);
    pthread_mutex_unlock(&lock);
}
