/* test_exec_client.c — the executor protocol client fed hand-built frames: callbacks, splits at
 * every byte boundary, channel reuse, invalid and garbage input (flow control: _credit.c). */
#include "exec_client_harness.h"

/* ---- tests ---- */

/* A whole conversation, fed split at every byte boundary, gives the same callbacks. */
static void
test_feed_split_at_every_byte_gives_same_callbacks(void **state)
{
    (void)state;
    buf_t s = BUF_INIT;
    put_str(&s, FRAME_HELLO, 0, "{\"protocol\":1,\"window\":1000}");
    put_str(&s, FRAME_JSON, 1, "{\"event\":\"started\",\"pid\":7}");
    put_str(&s, FRAME_DATA, 1, "hello ");
    put(&s, FRAME_DATA, FRAME_FLAG_STDERR, 1, "oops", 4);
    put(&s, FRAME_DATA, 0, 1, "\0bin\xff", 5);
    put_credit(&s, 1, 10);
    put_str(&s, FRAME_ERROR, 0, "{\"error\":{\"code\":\"protocol_error\",\"message\":\"x\"}}");
    put(&s, FRAME_EOF, 0, 1, NULL, 0);
    put_str(&s, FRAME_CLOSE, 1, "{\"exit_code\":0}");
    put(&s, FRAME_PONG, 0, 0, "p1", 2);

    static const char expect[] =
        "hello {\"protocol\":1,\"window\":1000}\n"
        "json 1 {\"event\":\"started\",\"pid\":7}\n"
        "data 1 out hello \n"
        "data 1 err oops\n"
        "data 1 out \0bin\xff\n"
        "writable 1 1010\n"
        "error 0 {\"error\":{\"code\":\"protocol_error\",\"message\":\"x\"}}\n"
        "eof 1\n"
        "close 1 {\"exit_code\":0}\n"
        "pong p1\n";
    size_t expect_len = sizeof(expect) - 1;

    for (size_t cut = 0; cut <= s.len; cut++) {
        rec_t r;
        rec_init(&r);
        assert_int_equal(open_ch(r.c, "x"), 1);
        feed_ok(r.c, s.data, cut);
        feed_ok(r.c, s.data + cut, s.len - cut);
        assert_int_equal(r.log.len, expect_len);
        assert_memory_equal(r.log.data, expect, expect_len);
        assert_int_equal(r.nviolations, 0);
        assert_false(exec_client_is_open(r.c, 1));
        rec_done(&r);
    }
    /* And one byte at a time. */
    rec_t r;
    rec_init(&r);
    open_ch(r.c, "x");
    for (size_t i = 0; i < s.len; i++)
        feed_ok(r.c, s.data + i, 1);
    assert_int_equal(r.log.len, expect_len);
    assert_memory_equal(r.log.data, expect, expect_len);
    rec_done(&r);
    buf_free(&s);
}

static void
test_open_queues_open_frame_with_request(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    assert_int_equal(open_ch(r.c, "health"), 1);
    assert_int_equal(open_ch(r.c, "ps"), 2);
    char *out = drain_out(r.c);
    assert_string_equal(out, "OPEN 1 {\"op\":\"health\"}\nOPEN 2 {\"op\":\"ps\"}\n");
    free(out);
    rec_done(&r);
}

static void
test_channel_id_reused_only_after_server_close(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    uint32_t a = open_ch(r.c, "a"), b = open_ch(r.c, "b");
    assert_int_equal(a, 1);
    assert_int_equal(b, 2);
    /* Detaching does not free the id. */
    assert_int_equal(exec_client_send_close(r.c, a, NULL), 0);
    assert_int_equal(open_ch(r.c, "c"), 3);
    assert_true(exec_client_is_open(r.c, a));
    buf_t s = BUF_INIT;
    put_str(&s, FRAME_CLOSE, a, "{}");
    feed_ok(r.c, s.data, s.len);
    assert_false(exec_client_is_open(r.c, a));
    assert_int_equal(open_ch(r.c, "d"), a);
    /* Closing an id twice is a violation, not a crash. */
    buf_clear(&s);
    put_str(&s, FRAME_CLOSE, 9, "{}");
    feed_ok(r.c, s.data, s.len);
    assert_int_equal(r.nviolations, 1);
    buf_free(&s);
    rec_done(&r);
}

static void
test_chan_data_kept_until_close(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    int tag;
    uint32_t ch = open_ch(r.c, "a");
    exec_client_set_chan_data(r.c, ch, &tag);
    assert_ptr_equal(exec_client_get_chan_data(r.c, ch), &tag);
    assert_null(exec_client_get_chan_data(r.c, 77));
    buf_t s = BUF_INIT;
    put_str(&s, FRAME_CLOSE, ch, "{}");
    feed_ok(r.c, s.data, s.len);
    assert_null(exec_client_get_chan_data(r.c, ch));
    buf_free(&s);
    rec_done(&r);
}

static void
test_oversized_frame_is_fatal_and_sticky(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    uint8_t h[FRAME_HEADER_LEN];
    frame_encode_header(h, FRAME_DATA, 0, 1, FRAME_MAX_PAYLOAD + 1);
    err_t e;
    assert_true(exec_client_feed(r.c, h, sizeof(h), &e) < 0);
    assert_int_equal(e.code, ERR_TOO_BIG);
    assert_true(exec_client_feed(r.c, "", 0, &e) < 0);
    rec_done(&r);

    /* A lower configured limit applies too. */
    rec_init(&r);
    exec_client_set_max_frame(r.c, 100);
    buf_t s = BUF_INIT;
    char big[101] = {0};
    put(&s, FRAME_PONG, 0, 0, big, sizeof(big));
    assert_int_equal(exec_client_feed(r.c, s.data, s.len, &e), -ERR_TOO_BIG);
    buf_free(&s);
    rec_done(&r);
}

static void
test_invalid_frame_is_skipped_and_stream_stays_in_sync(void **state)
{
    (void)state;
    buf_t s = BUF_INIT;
    put(&s, 42, 0, 0, "junk-junk-junk", 14); /* unknown type */
    uint8_t h[FRAME_HEADER_LEN];
    frame_encode_header(h, FRAME_PONG, 0, 0, 3); /* reserved bits set */
    h[6] = 1;
    buf_append(&s, h, sizeof(h));
    buf_append(&s, "abc", 3);
    put(&s, FRAME_CREDIT, 0, 1, "12345", 5); /* CREDIT must be 4 bytes */
    put(&s, FRAME_OPEN, 0, 1, "{}", 2);      /* servers do not send OPEN */
    put_str(&s, FRAME_JSON, 1, "{not json");
    put(&s, FRAME_DATA, 0, 33, "zz", 2); /* channel not open */
    put(&s, FRAME_PONG, 0, 0, "ok", 2);
    for (size_t cut = 0; cut <= s.len; cut++) {
        rec_t r;
        rec_init(&r);
        open_ch(r.c, "x");
        feed_ok(r.c, s.data, cut);
        feed_ok(r.c, s.data + cut, s.len - cut);
        assert_string_equal(r.log.data, "pong ok\n");
        assert_int_equal(r.nviolations, 6);
        rec_done(&r);
    }
    buf_free(&s);
}

static void
test_close_with_bad_json_still_frees_channel(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    uint32_t ch = open_ch(r.c, "x");
    buf_t s = BUF_INIT;
    put_str(&s, FRAME_CLOSE, ch, "{\"broken\":");
    feed_ok(r.c, s.data, s.len);
    assert_false(exec_client_is_open(r.c, ch));
    assert_non_null(strstr(r.log.data, "close 1 {\"error\":{\"code\":\"protocol_error\""));
    buf_free(&s);
    rec_done(&r);
}

/* An idle connection holds no buffer: what a big frame split over reads grew, and what a
 * request queued, go once they are empty (never while they hold bytes). */
static void
test_shrink_lets_go_of_empty_buffers_only(void **state)
{
    (void)state;
    rec_t r;
    uint32_t ch = rec_open(&r, 1 << 20, "x");
    assert_true(exec_client_shrink(r.c) > 0); /* the OPEN's, written */
    static uint8_t big[200 * 1024];
    buf_t s = BUF_INIT;
    put(&s, FRAME_DATA, 0, ch, big, sizeof big);
    feed_ok(r.c, s.data, s.len / 2); /* half a frame is kept until the rest comes */
    assert_int_equal(exec_client_shrink(r.c), 0);
    feed_ok(r.c, s.data + s.len / 2, s.len - s.len / 2);
    assert_non_null(strstr(r.log.data, "data 1 out "));
    assert_true(exec_client_shrink(r.c) >= s.len / 2); /* the carried half's buffer */
    assert_int_equal(exec_client_shrink(r.c), 0);

    assert_int_equal(open_ch(r.c, "y"), 2); /* queued: its buffer stays until written */
    assert_int_equal(exec_client_shrink(r.c), 0);
    char *out = drain_out(r.c);
    assert_non_null(strstr(out, "OPEN 2"));
    free(out);
    assert_true(exec_client_shrink(r.c) > 0);
    buf_free(&s);
    rec_done(&r);
}

static void
test_free_from_on_close_stops_dispatch(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    uint32_t ch = open_ch(r.c, "x");
    r.free_in_close = true;
    buf_t s = BUF_INIT;
    put_str(&s, FRAME_CLOSE, ch, "{}");
    put(&s, FRAME_PONG, 0, 0, "late", 4);
    err_t e;
    assert_int_equal(exec_client_feed(r.c, s.data, s.len, &e), 0);
    assert_null(r.c);
    assert_string_equal(r.log.data, "close 1 {}\n");
    buf_free(&s);
    buf_free(&r.log);
}

static void
test_sends_refused_after_detach(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    uint32_t ch = open_ch(r.c, "x");
    json_object *m = req("{\"resize\":{\"cols\":80,\"rows\":24}}");
    assert_int_equal(exec_client_send_json(r.c, ch, m), 0);
    assert_int_equal(exec_client_send_close(r.c, ch, NULL), 0);
    assert_int_equal(exec_client_send_json(r.c, ch, m), -EPIPE);
    assert_int_equal(exec_client_send_data(r.c, ch, "a", 1), -EPIPE);
    assert_int_equal(exec_client_send_close(r.c, ch, NULL), -EPIPE);
    assert_int_equal(exec_client_send_json(r.c, 99, m), -ERR_NOT_FOUND);
    char *out = drain_out(r.c);
    assert_string_equal(out,
                        "OPEN 1 {\"op\":\"x\"}\nJSON 1 {\"resize\":{\"cols\":80,\"rows\":24}}\n"
                        "CLOSE 1 \n");
    free(out);
    json_object_put(m);
    rec_done(&r);
}

static void
test_ping_and_hello_frames(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    char big[EXEC_CLIENT_PING_MAX + 1] = {0};
    assert_int_equal(exec_client_ping(r.c, big, sizeof(big)), -ERR_TOO_BIG);
    assert_int_equal(exec_client_ping(r.c, "t1", 2), 0);
    json_object *h = req("{\"token\":\"s3cret\"}");
    assert_int_equal(exec_client_send_hello(r.c, h, NULL), 0);
    json_object_put(h);
    char *out = drain_out(r.c);
    assert_string_equal(out, "PING 0 t1\nHELLO 0 {\"token\":\"s3cret\"}\n");
    free(out);
    rec_done(&r);
}

static void
test_open_refuses_request_over_server_max_frame(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    buf_t s = BUF_INIT;
    put_str(&s, FRAME_HELLO, 0, "{\"max_frame\":64}");
    feed_ok(r.c, s.data, s.len);
    json_object *o = json_object_new_object();
    json_set_str(o, "op", "file.write");
    json_set_str(o, "content", "0123456789012345678901234567890123456789012345678901234567890");
    err_t e;
    assert_int_equal(exec_client_open(r.c, o, &e), 0);
    assert_int_equal(e.code, ERR_TOO_BIG);
    assert_int_equal(exec_client_out(r.c)->len, 0);
    json_object_put(o);
    buf_free(&s);
    rec_done(&r);
}

static void
test_many_channels_grow_table(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    for (uint32_t i = 1; i <= 1000; i++)
        assert_int_equal(open_ch(r.c, "x"), i);
    buf_t s = BUF_INIT;
    for (uint32_t i = 1; i <= 1000; i += 2)
        put_str(&s, FRAME_CLOSE, i, "{}");
    feed_ok(r.c, s.data, s.len);
    for (uint32_t i = 1; i <= 1000; i++)
        assert_int_equal(exec_client_is_open(r.c, i), i % 2 == 0);
    uint32_t ch = open_ch(r.c, "x");
    assert_true(ch % 2 == 1 && ch <= 1000);
    buf_free(&s);
    rec_done(&r);
}

/* Random bytes, and random mutations of a valid stream, never crash the client. */
static void
test_garbage_never_crashes(void **state)
{
    (void)state;
    buf_t valid = BUF_INIT;
    put_str(&valid, FRAME_HELLO, 0, "{\"window\":50}");
    put_str(&valid, FRAME_DATA, 1, "some output");
    put_credit(&valid, 1, 100);
    put_str(&valid, FRAME_JSON, 1, "{\"a\":[1,2,3]}");
    put_str(&valid, FRAME_CLOSE, 1, "{\"ok\":true}");
    uint32_t seed = 12345;
    for (int iter = 0; iter < 3000; iter++) {
        rec_t r;
        rec_init(&r);
        open_ch(r.c, "x");
        open_ch(r.c, "y");
        buf_t in = BUF_INIT;
        buf_append(&in, valid.data, valid.len);
        int nmut = iter % 8 + 1;
        for (int m = 0; m < nmut; m++) {
            seed = seed * 1103515245u + 12345u;
            size_t pos = (seed >> 8) % in.len;
            in.data[pos] = (char)(seed >> 16);
        }
        if (iter % 3 == 0) { /* pure noise */
            for (size_t i = 0; i < in.len; i++) {
                seed = seed * 1103515245u + 12345u;
                in.data[i] = (char)(seed >> 16);
            }
        }
        err_t e;
        size_t off = 0;
        while (off < in.len) {
            seed = seed * 1103515245u + 12345u;
            size_t n = (seed >> 8) % 17 + 1;
            if (n > in.len - off)
                n = in.len - off;
            if (exec_client_feed(r.c, in.data + off, n, &e) < 0)
                break;
            off += n;
        }
        buf_free(&in);
        rec_done(&r);
    }
    buf_free(&valid);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_feed_split_at_every_byte_gives_same_callbacks),
        cmocka_unit_test(test_open_queues_open_frame_with_request),
        cmocka_unit_test(test_channel_id_reused_only_after_server_close),
        cmocka_unit_test(test_chan_data_kept_until_close),
        cmocka_unit_test(test_oversized_frame_is_fatal_and_sticky),
        cmocka_unit_test(test_invalid_frame_is_skipped_and_stream_stays_in_sync),
        cmocka_unit_test(test_close_with_bad_json_still_frees_channel),
        cmocka_unit_test(test_shrink_lets_go_of_empty_buffers_only),
        cmocka_unit_test(test_free_from_on_close_stops_dispatch),
        cmocka_unit_test(test_sends_refused_after_detach),
        cmocka_unit_test(test_ping_and_hello_frames),
        cmocka_unit_test(test_open_refuses_request_over_server_max_frame),
        cmocka_unit_test(test_many_channels_grow_table),
        cmocka_unit_test(test_garbage_never_crashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
