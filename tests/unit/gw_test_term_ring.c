/* gw_test_term_ring.c — gateway/term_ring: every byte readable back at its offset, in order,
 * across growth and wrap; past the bound the oldest go and start says where the ring begins. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "gateway/term_ring.h"

static uint8_t
byte_at(uint64_t off)
{
    return (uint8_t)(off * 131 + (off >> 8));
}

/* Reads [from, to) back through peek and checks each byte against byte_at. */
static void
check_range(const term_ring_t *r, uint64_t from, uint64_t to)
{
    uint64_t off = from;
    while (off < to) {
        const uint8_t *p = NULL;
        size_t n = term_ring_peek(r, off, &p);
        assert_true(n > 0);
        for (size_t i = 0; i < n && off < to; i++, off++)
            assert_int_equal(p[i], byte_at(off));
    }
}

static void
append_counted(term_ring_t *r, size_t n)
{
    uint8_t b[70000];
    assert_true(n <= sizeof b);
    for (size_t i = 0; i < n; i++)
        b[i] = byte_at(r->end + i);
    term_ring_append(r, b, n);
}

static void
test_small_appends_read_back_in_order(void **state)
{
    (void)state;
    term_ring_t r;
    term_ring_init(&r, 64 * 1024);
    for (int i = 1; i < 200; i++)
        append_counted(&r, (size_t)i);
    assert_int_equal(r.start, 0);
    assert_int_equal(r.end, 199 * 200 / 2);
    check_range(&r, 0, r.end);
    const uint8_t *p;
    assert_int_equal(term_ring_peek(&r, r.end, &p), 0); /* nothing past the end */
    term_ring_free(&r);
}

static void
test_past_the_bound_the_oldest_go(void **state)
{
    (void)state;
    term_ring_t r;
    term_ring_init(&r, 64 * 1024);
    for (int i = 0; i < 50; i++)
        append_counted(&r, 7001);
    assert_int_equal(r.end, 50 * 7001);
    assert_int_equal(r.end - r.start, 64 * 1024);
    check_range(&r, r.start, r.end);
    const uint8_t *p;
    assert_int_equal(term_ring_peek(&r, r.start - 1, &p), 0); /* gone */
    term_ring_free(&r);
}

static void
test_one_append_larger_than_the_ring_keeps_its_tail(void **state)
{
    (void)state;
    term_ring_t r;
    term_ring_init(&r, 16 * 1024);
    append_counted(&r, 100);
    append_counted(&r, 65536);
    assert_int_equal(r.end, 65636);
    assert_int_equal(r.start, 65636 - 16 * 1024);
    check_range(&r, r.start, r.end);
    term_ring_free(&r);
}

static void
test_growth_keeps_wrapped_bytes(void **state)
{
    (void)state;
    term_ring_t r;
    term_ring_init(&r, 1024 * 1024);
    /* fill the first allocation, then grow several times while the data wraps */
    for (int i = 0; i < 40; i++) {
        append_counted(&r, 9999);
        check_range(&r, r.start, r.end);
    }
    assert_int_equal(r.start, 0);
    assert_true(r.cap <= 1024 * 1024);
    term_ring_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_appends_read_back_in_order),
        cmocka_unit_test(test_past_the_bound_the_oldest_go),
        cmocka_unit_test(test_one_append_larger_than_the_ring_keeps_its_tail),
        cmocka_unit_test(test_growth_keeps_wrapped_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
