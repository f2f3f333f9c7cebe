/* test_exec_client_credit.c — the executor protocol client's flow control: DATA sent within
 * the server's credit, chunking, the window from HELLO, auto-grant and manual grants. */
#include "exec_client_harness.h"

static void
test_send_data_stops_at_server_credit(void **state)
{
    (void)state;
    rec_t r;
    uint32_t ch = rec_open(&r, 10, "spawn");
    assert_int_equal(exec_client_credit_avail(r.c, ch), 10);
    assert_int_equal(exec_client_send_data(r.c, ch, "abcdefghijklmnopqrstuvwxy", 25), 10);
    assert_int_equal(exec_client_credit_avail(r.c, ch), 0);
    assert_int_equal(exec_client_send_data(r.c, ch, "klm", 3), 0);
    char *out = drain_out(r.c);
    assert_string_equal(out, "DATA 1 10\n");
    free(out);

    buf_t s = BUF_INIT;
    put_credit(&s, ch, 5);
    feed_ok(r.c, s.data, s.len);
    assert_int_equal(r.last_writable, 5);
    assert_int_equal(exec_client_send_data(r.c, ch, "klmnopq", 7), 5);
    assert_int_equal(exec_client_send_eof(r.c, ch), 0);
    assert_int_equal(exec_client_send_eof(r.c, ch), -EPIPE);
    assert_int_equal(exec_client_send_data(r.c, ch, "x", 1), -EPIPE);
    out = drain_out(r.c);
    assert_string_equal(out, "DATA 1 5\nEOF 1 \n");
    free(out);
    buf_free(&s);
    rec_done(&r);
}

static void
test_send_data_splits_into_chunk_sized_frames(void **state)
{
    (void)state;
    rec_t r;
    uint32_t ch = rec_open(&r, 4u << 20, "upload");
    size_t n = 2 * FRAME_DATA_CHUNK + 8192;
    char *p = calloc(1, n);
    assert_int_equal(exec_client_send_data(r.c, ch, p, n), n);
    char *out = drain_out(r.c);
    char expect[128];
    snprintf(expect, sizeof(expect), "DATA 1 %u\nDATA 1 %u\nDATA 1 8192\n", FRAME_DATA_CHUNK,
             FRAME_DATA_CHUNK);
    assert_string_equal(out, expect);
    assert_int_equal(exec_client_credit_avail(r.c, ch), (4u << 20) - n);
    free(out);
    free(p);
    rec_done(&r);
}

static void
test_hello_after_open_adjusts_initial_credit(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    uint32_t ch = open_ch(r.c, "a");
    assert_int_equal(exec_client_credit_avail(r.c, ch), FRAME_DEFAULT_WINDOW);
    feed_hello(r.c, 1000);
    assert_int_equal(exec_client_credit_avail(r.c, ch), 1000);
    assert_int_equal(exec_client_recv_window(r.c, ch), 1000);
    assert_non_null(exec_client_hello(r.c));
    rec_done(&r);
}

static void
test_auto_grant_returns_delivered_bytes_coalesced(void **state)
{
    (void)state;
    rec_t r;
    uint32_t ch = rec_open(&r, 100, "run");
    buf_t s = BUF_INIT;
    put(&s, FRAME_DATA, 0, ch, "0123456789012345678901234567890", 30);
    feed_ok(r.c, s.data, s.len);
    assert_int_equal(exec_client_recv_window(r.c, ch), 70);
    assert_int_equal(exec_client_out(r.c)->len, 0); /* below half a window: not yet */
    feed_ok(r.c, s.data, s.len);
    char *out = drain_out(r.c);
    assert_string_equal(out, "CREDIT 1 60\n");
    assert_int_equal(exec_client_recv_window(r.c, ch), 100);
    free(out);
    buf_free(&s);
    rec_done(&r);
}

static void
test_manual_grant_when_auto_grant_off(void **state)
{
    (void)state;
    rec_t r;
    uint32_t ch = rec_open(&r, 100, "run");
    buf_t s = BUF_INIT;
    put(&s, FRAME_DATA, 0, ch, "0123456789", 10);
    feed_ok(r.c, s.data, s.len); /* 10 ungranted under auto-grant */
    assert_int_equal(exec_client_set_auto_grant(r.c, ch, false), 0);
    char *out = drain_out(r.c);
    assert_string_equal(out, "CREDIT 1 10\n"); /* consumed before the switch: granted */
    free(out);
    for (int i = 0; i < 9; i++)
        feed_ok(r.c, s.data, s.len);
    assert_int_equal(exec_client_out(r.c)->len, 0);
    assert_int_equal(exec_client_recv_window(r.c, ch), 10);
    assert_int_equal(exec_client_grant(r.c, ch, 30), 0);
    assert_int_equal(exec_client_recv_window(r.c, ch), 40);
    assert_int_equal(exec_client_set_auto_grant(r.c, ch, true), 0);
    out = drain_out(r.c);
    assert_string_equal(out, "CREDIT 1 30\nCREDIT 1 60\n");
    assert_int_equal(exec_client_recv_window(r.c, ch), 100);
    free(out);
    assert_int_equal(exec_client_grant(r.c, 55, 1), -ERR_NOT_FOUND);
    buf_free(&s);
    rec_done(&r);
}

static void
test_on_data_can_stop_auto_grant_for_its_own_bytes(void **state)
{
    (void)state;
    rec_t r;
    uint32_t ch = rec_open(&r, 10, "run");
    r.stop_auto_grant_in_data = true;
    buf_t s = BUF_INIT;
    put(&s, FRAME_DATA, 0, ch, "0123456789", 10);
    feed_ok(r.c, s.data, s.len);
    assert_int_equal(exec_client_out(r.c)->len, 0);
    assert_int_equal(exec_client_recv_window(r.c, ch), 0);
    buf_free(&s);
    rec_done(&r);
}

static void
test_data_beyond_credit_is_delivered_and_reported(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    feed_hello(r.c, 4);
    uint32_t ch = open_ch(r.c, "run");
    exec_client_set_auto_grant(r.c, ch, false);
    buf_t s = BUF_INIT;
    put(&s, FRAME_DATA, 0, ch, "0123456789", 10);
    feed_ok(r.c, s.data, s.len);
    assert_int_equal(r.nviolations, 1);
    assert_int_equal(exec_client_recv_window(r.c, ch), 0);
    assert_string_equal(r.log.data, "hello {\"protocol\":1,\"max_frame\":1048576,\"window\":4}\n"
                                    "data 1 out 0123456789\n");
    buf_free(&s);
    rec_done(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_data_stops_at_server_credit),
        cmocka_unit_test(test_send_data_splits_into_chunk_sized_frames),
        cmocka_unit_test(test_hello_after_open_adjusts_initial_credit),
        cmocka_unit_test(test_auto_grant_returns_delivered_bytes_coalesced),
        cmocka_unit_test(test_manual_grant_when_auto_grant_off),
        cmocka_unit_test(test_on_data_can_stop_auto_grant_for_its_own_bytes),
        cmocka_unit_test(test_data_beyond_credit_is_delivered_and_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
