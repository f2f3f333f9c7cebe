/* test_exec_client.c — the executor protocol client fed hand-built frames: callbacks, splits at
 * every byte boundary, credit in both directions, channel reuse, invalid and garbage input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "exec_client.h"
#include "json_util.h"

/* ---- helpers: a recording callback set and a frame builder ---- */

typedef struct {
    buf_t log;   /* one line per callback */
    exec_client_t *c;
    bool stop_auto_grant_in_data;
    bool free_in_close;
    int nviolations;
    size_t last_writable;
} rec_t;

static void
rec_hello(void *ud, json_object *hello)
{
    rec_t *r = ud;
    buf_printf(&r->log, "hello %s\n", json_text(hello, NULL));
}

static void
rec_data(void *ud, uint32_t ch, bool is_stderr, const uint8_t *p, size_t n)
{
    rec_t *r = ud;
    buf_printf(&r->log, "data %u %s ", ch, is_stderr ? "err" : "out");
    buf_append(&r->log, p, n);
    buf_puts(&r->log, "\n");
    if (r->stop_auto_grant_in_data)
        exec_client_set_auto_grant(r->c, ch, false);
}

static void
rec_json(void *ud, uint32_t ch, json_object *msg)
{
    rec_t *r = ud;
    buf_printf(&r->log, "json %u %s\n", ch, json_text(msg, NULL));
}

static void
rec_eof(void *ud, uint32_t ch)
{
    rec_t *r = ud;
    buf_printf(&r->log, "eof %u\n", ch);
}

static void
rec_close(void *ud, uint32_t ch, json_object *res)
{
    rec_t *r = ud;
    buf_printf(&r->log, "close %u %s\n", ch, json_text(res, NULL));
    if (r->free_in_close) {
        exec_client_free(r->c);
        r->c = NULL;
    }
}

static void
rec_error(void *ud, uint32_t ch, json_object *e)
{
    rec_t *r = ud;
    buf_printf(&r->log, "error %u %s\n", ch, json_text(e, NULL));
}

static void
rec_pong(void *ud, const uint8_t *p, size_t n)
{
    rec_t *r = ud;
    buf_puts(&r->log, "pong ");
    buf_append(&r->log, p, n);
    buf_puts(&r->log, "\n");
}

static void
rec_writable(void *ud, uint32_t ch, size_t avail)
{
    rec_t *r = ud;
    r->last_writable = avail;
    buf_printf(&r->log, "writable %u %zu\n", ch, avail);
}

static void
rec_violation(void *ud, uint32_t ch, const char *what)
{
    rec_t *r = ud;
    (void)ch;
    (void)what;
    r->nviolations++;
}

static const exec_client_cbs_t rec_cbs = {
    .on_hello = rec_hello,
    .on_data = rec_data,
    .on_json = rec_json,
    .on_eof = rec_eof,
    .on_close = rec_close,
    .on_error = rec_error,
    .on_pong = rec_pong,
    .on_writable = rec_writable,
    .on_violation = rec_violation,
};

static void
rec_init(rec_t *r)
{
    memset(r, 0, sizeof(*r));
    r->c = exec_client_new(&rec_cbs, r);
}

static void
rec_done(rec_t *r)
{
    exec_client_free(r->c);
    buf_free(&r->log);
}

static void
put(buf_t *b, uint8_t type, uint8_t flags, uint32_t ch, const void *p, size_t n)
{
    uint8_t h[FRAME_HEADER_LEN];
    frame_encode_header(h, type, flags, ch, (uint32_t)n);
    buf_append(b, h, sizeof(h));
    if (n)
        buf_append(b, p, n);
}

static void
put_str(buf_t *b, uint8_t type, uint32_t ch, const char *s)
{
    put(b, type, 0, ch, s, strlen(s));
}

static void
put_credit(buf_t *b, uint32_t ch, uint32_t n)
{
    uint8_t p[4];
    frame_put_u32(p, n);
    put(b, FRAME_CREDIT, 0, ch, p, 4);
}

static void
feed_ok(exec_client_t *c, const void *p, size_t n)
{
    err_t e;
    assert_int_equal(exec_client_feed(c, p, n, &e), 0);
}

static void
feed_hello(exec_client_t *c, uint32_t window)
{
    buf_t b = BUF_INIT;
    char s[128];
    snprintf(s, sizeof(s), "{\"protocol\":1,\"max_frame\":1048576,\"window\":%u}", window);
    put_str(&b, FRAME_HELLO, 0, s);
    feed_ok(c, b.data, b.len);
    buf_free(&b);
}

/* Decodes the client's output into "TYPE ch payload-summary" lines and empties it. */
static char *
drain_out(exec_client_t *c)
{
    buf_t *out = exec_client_out(c);
    buf_t txt = BUF_INIT;
    size_t off = 0;
    while (off < out->len) {
        frame_t f;
        int r = frame_decode((const uint8_t *)out->data + off, out->len - off, UINT32_MAX, &f,
                             NULL);
        assert_true(r > 0);
        buf_printf(&txt, "%s %u ", frame_type_name(f.type), f.channel);
        if (f.type == FRAME_CREDIT)
            buf_printf(&txt, "%u", frame_get_u32(f.payload));
        else if (f.type == FRAME_DATA)
            buf_printf(&txt, "%u", f.len);
        else
            buf_append(&txt, f.payload, f.len);
        buf_puts(&txt, "\n");
        off += (size_t)r;
    }
    buf_consume(out, out->len);
    return buf_steal(&txt);
}

static json_object *
req(const char *text)
{
    json_object *o = json_parse(text, strlen(text), NULL);
    assert_non_null(o);
    return o;
}

static uint32_t
open_ch(exec_client_t *c, const char *op)
{
    char text[64];
    snprintf(text, sizeof(text), "{\"op\":\"%s\"}", op);
    json_object *o = req(text);
    uint32_t ch = exec_client_open(c, o, NULL);
    json_object_put(o);
    return ch;
}

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

    static const char expect[] = "hello {\"protocol\":1,\"window\":1000}\n"
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
test_send_data_stops_at_server_credit(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    feed_hello(r.c, 10);
    uint32_t ch = open_ch(r.c, "spawn");
    free(drain_out(r.c));
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
test_send_data_splits_into_64k_frames(void **state)
{
    (void)state;
    rec_t r;
    rec_init(&r);
    uint32_t ch = open_ch(r.c, "upload");
    free(drain_out(r.c));
    size_t n = 200 * 1024;
    char *p = calloc(1, n);
    assert_int_equal(exec_client_send_data(r.c, ch, p, n), n);
    char *out = drain_out(r.c);
    assert_string_equal(out, "DATA 1 65536\nDATA 1 65536\nDATA 1 65536\nDATA 1 8192\n");
    assert_int_equal(exec_client_credit_avail(r.c, ch), FRAME_DEFAULT_WINDOW - n);
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
    rec_init(&r);
    feed_hello(r.c, 100);
    uint32_t ch = open_ch(r.c, "run");
    free(drain_out(r.c));
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
    rec_init(&r);
    feed_hello(r.c, 100);
    uint32_t ch = open_ch(r.c, "run");
    free(drain_out(r.c));
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
    rec_init(&r);
    feed_hello(r.c, 10);
    uint32_t ch = open_ch(r.c, "run");
    free(drain_out(r.c));
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
    put(&s, 42, 0, 0, "junk-junk-junk", 14);      /* unknown type */
    uint8_t h[FRAME_HEADER_LEN];
    frame_encode_header(h, FRAME_PONG, 0, 0, 3); /* reserved bits set */
    h[6] = 1;
    buf_append(&s, h, sizeof(h));
    buf_append(&s, "abc", 3);
    put(&s, FRAME_CREDIT, 0, 1, "12345", 5);      /* CREDIT must be 4 bytes */
    put(&s, FRAME_OPEN, 0, 1, "{}", 2);           /* servers do not send OPEN */
    put_str(&s, FRAME_JSON, 1, "{not json");
    put(&s, FRAME_DATA, 0, 33, "zz", 2);          /* channel not open */
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
    assert_string_equal(out, "OPEN 1 {\"op\":\"x\"}\nJSON 1 {\"resize\":{\"cols\":80,\"rows\":24}}\n"
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
        cmocka_unit_test(test_send_data_stops_at_server_credit),
        cmocka_unit_test(test_send_data_splits_into_64k_frames),
        cmocka_unit_test(test_hello_after_open_adjusts_initial_credit),
        cmocka_unit_test(test_auto_grant_returns_delivered_bytes_coalesced),
        cmocka_unit_test(test_manual_grant_when_auto_grant_off),
        cmocka_unit_test(test_on_data_can_stop_auto_grant_for_its_own_bytes),
        cmocka_unit_test(test_data_beyond_credit_is_delivered_and_reported),
        cmocka_unit_test(test_oversized_frame_is_fatal_and_sticky),
        cmocka_unit_test(test_invalid_frame_is_skipped_and_stream_stays_in_sync),
        cmocka_unit_test(test_close_with_bad_json_still_frees_channel),
        cmocka_unit_test(test_free_from_on_close_stops_dispatch),
        cmocka_unit_test(test_sends_refused_after_detach),
        cmocka_unit_test(test_ping_and_hello_frames),
        cmocka_unit_test(test_open_refuses_request_over_server_max_frame),
        cmocka_unit_test(test_many_channels_grow_table),
        cmocka_unit_test(test_garbage_never_crashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
