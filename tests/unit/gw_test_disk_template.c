/* gw_test_disk_template.c — empty filesystems kept per size (gateway/sandbox/disk_template.c), on
 * real sparse files: an image gets exactly the bytes of the one kept, holes staying holes; a size
 * not kept is not written; an image past the bound is not kept; at most DISK_TEMPLATE_MAX sizes,
 * the least recently used one replaced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/disk_template.h"

#define MiB (1 << 20)

static char dir[] = "/tmp/sp-disk-template-XXXXXX";

/* A sparse file of size with len bytes of byte at each of the offsets (ending with -1). */
static int
sparse_file(const char *name, off_t size, const off_t *offsets, size_t len, int byte)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, size), 0);
    char *data = malloc(len);
    memset(data, byte, len);
    for (size_t i = 0; offsets[i] >= 0; i++)
        assert_int_equal(pwrite(fd, data, len, offsets[i]), (ssize_t)len);
    free(data);
    return fd;
}

static void
assert_same(int a, int b, off_t size)
{
    static char x[MiB], y[MiB];
    for (off_t at = 0; at < size; at += MiB) {
        assert_int_equal(pread(a, x, MiB, at), MiB);
        assert_int_equal(pread(b, y, MiB, at), MiB);
        assert_memory_equal(x, y, MiB);
    }
}

static int
setup(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    disk_template_clear();
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

static void
test_an_image_gets_the_kept_bytes_and_its_holes(void **state)
{
    (void)state;
    const off_t at[] = {0, 5 * MiB + 4096, 64 * MiB - 8192, -1};
    int made = sparse_file("made.img", 64 * MiB, at, 8192, 0x5a);
    int next = sparse_file("next.img", 64 * MiB, (const off_t[]){-1}, 0, 0);
    assert_int_equal(disk_template_apply(next, 64 * MiB), 0); /* nothing kept yet */
    disk_template_keep(made, 64 * MiB);
    assert_int_equal(disk_template_apply(next, 64 * MiB), 1);
    assert_same(made, next, 64 * MiB);
    struct stat st;
    assert_int_equal(fstat(next, &st), 0);
    assert_true(st.st_blocks * 512 <= 1 * MiB); /* the holes were not written */
    int other = sparse_file("other.img", 32 * MiB, (const off_t[]){-1}, 0, 0);
    assert_int_equal(disk_template_apply(other, 32 * MiB), 0); /* another size */
    close(made);
    close(next);
    close(other);
    disk_template_clear();
}

static void
test_an_image_past_the_bound_is_not_kept(void **state)
{
    (void)state;
    const off_t at[] = {0, -1};
    int big = sparse_file("big.img", 64 * MiB, at, DISK_TEMPLATE_BYTES_MAX + 4096, 1);
    disk_template_keep(big, 64 * MiB);
    int next = sparse_file("next.img", 64 * MiB, (const off_t[]){-1}, 0, 0);
    assert_int_equal(disk_template_apply(next, 64 * MiB), 0);
    close(big);
    close(next);
}

static void
test_the_least_recently_used_size_goes_first(void **state)
{
    (void)state;
    const off_t at[] = {0, -1};
    for (int i = 1; i <= DISK_TEMPLATE_MAX; i++) {
        int fd = sparse_file("s.img", i * MiB * 16, at, 4096, i);
        disk_template_keep(fd, i * MiB * 16);
        close(fd);
    }
    int fd = sparse_file("t.img", 16 * MiB, (const off_t[]){-1}, 0, 0);
    assert_int_equal(disk_template_apply(fd, 16 * MiB), 1); /* the first is used again */
    close(fd);
    fd = sparse_file("u.img", 80 * MiB, at, 4096, 9); /* one more size: the second goes */
    disk_template_keep(fd, 80 * MiB);
    close(fd);
    fd = sparse_file("t.img", 32 * MiB, (const off_t[]){-1}, 0, 0);
    assert_int_equal(disk_template_apply(fd, 32 * MiB), 0);
    assert_int_equal(disk_template_apply(fd, 16 * MiB), 1);
    assert_int_equal(disk_template_apply(fd, 80 * MiB), 1);
    close(fd);
    disk_template_clear();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_image_gets_the_kept_bytes_and_its_holes),
        cmocka_unit_test(test_an_image_past_the_bound_is_not_kept),
        cmocka_unit_test(test_the_least_recently_used_size_goes_first),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
