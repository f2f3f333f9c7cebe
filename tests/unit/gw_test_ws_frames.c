/* gw_test_ws_frames.c — gateway/ws_frames, the frame-header watch in front of libwebsockets:
 * what passes (masked frames of any size up to the bound, fragments, control frames, frames
 * right behind the upgrade request), what is refused with which close code, where the cut
 * falls, and the same verdicts whatever the pieces the bytes arrive in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "gateway/ws_frames.h"

#define MAX_MSG 1000u
#define REQUEST "GET /ws/control HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n"

typedef struct {
    uint8_t b[8192];
    size_t n;
} stream_t;

static void
put(stream_t *s, const void *p, size_t n)
{
    assert_true(s->n + n <= sizeof s->b);
    memcpy(s->b + s->n, p, n);
    s->n += n;
}

/* Appends a frame: header in the shortest form unless len_form forces 126 or 127, a mask key
 * if masked, then len zero bytes of payload (only when they fit: big frames are headers). */
static void
frame(stream_t *s, int fin, int opcode, int masked, uint64_t len, int len_form)
{
    uint8_t h[14];
    size_t k = 0;
    h[k++] = (uint8_t)((fin ? 0x80 : 0) | opcode);
    uint8_t m = masked ? 0x80 : 0;
    int form = len_form ? len_form : len < 126 ? 0 : len < 65536 ? 126 : 127;
    if (form == 0) {
        h[k++] = (uint8_t)(m | len);
    } else if (form == 126) {
        h[k++] = m | 126;
        h[k++] = (uint8_t)(len >> 8);
        h[k++] = (uint8_t)len;
    } else {
        h[k++] = m | 127;
        for (int i = 7; i >= 0; i--)
            h[k++] = (uint8_t)(len >> (8 * i));
    }
    if (masked) {
        memcpy(h + k, "\x11\x22\x33\x44", 4);
        k += 4;
    }
    put(s, h, k);
    if (len <= sizeof s->b - s->n) {
        memset(s->b + s->n, 'x', (size_t)len);
        s->n += (size_t)len;
    }
}

static void
start(stream_t *s)
{
    s->n = 0;
    put(s, REQUEST, strlen(REQUEST));
}

/* Feeds the stream whole; returns the bytes passed. */
static size_t
scan_whole(ws_frames_t *f, const stream_t *s)
{
    ws_frames_init(f, MAX_MSG);
    return ws_frames_scan(f, s->b, s->n);
}

/* Feeds the stream in pieces of `step` bytes; returns the sum of bytes passed. */
static size_t
scan_in_pieces(ws_frames_t *f, const stream_t *s, size_t step)
{
    ws_frames_init(f, MAX_MSG);
    size_t passed = 0;
    for (size_t i = 0; i < s->n; i += step) {
        size_t n = s->n - i < step ? s->n - i : step;
        size_t ok = ws_frames_scan(f, s->b + i, n);
        assert_true(ok <= n);
        passed += ok;
        if (ok < n) {
            /* everything after a refusal is dropped */
            assert_true(ws_frames_failed(f));
            assert_int_equal(ws_frames_scan(f, s->b + i, n), 0);
        }
    }
    return passed;
}

/* The stream is refused with `code` at its byte `cut` (the refused frame's first byte), for
 * every way of cutting it into pieces; a piece that holds only the frame's earlier header bytes
 * passes them (the parser then waits for the rest, which never comes). */
static void
expect_refused_at(const stream_t *s, size_t cut, uint16_t code)
{
    ws_frames_t f;
    assert_int_equal(scan_whole(&f, s), cut);
    assert_true(ws_frames_failed(&f));
    assert_int_equal(f.code, code);
    assert_non_null(f.reason);
    assert_true(strlen(f.reason) <= 123); /* fits a close frame */
    for (size_t step = 1; step <= 17; step++) {
        size_t passed = scan_in_pieces(&f, s, step);
        assert_true(ws_frames_failed(&f));
        assert_int_equal(f.code, code);
        assert_true(passed >= cut && passed < cut + 14);
    }
}

static void
expect_passed(const stream_t *s)
{
    ws_frames_t f;
    assert_int_equal(scan_whole(&f, s), s->n);
    assert_false(ws_frames_failed(&f));
    for (size_t step = 1; step <= 17; step++) {
        assert_int_equal(scan_in_pieces(&f, s, step), s->n);
        assert_false(ws_frames_failed(&f));
    }
}

static void
test_masked_frames_of_every_length_form_pass(void **state)
{
    (void)state;
    stream_t s;
    start(&s);
    frame(&s, 1, 1, 1, 0, 0);
    frame(&s, 1, 1, 1, 125, 0);
    frame(&s, 1, 2, 1, 126, 0);
    frame(&s, 1, 2, 1, MAX_MSG, 0); /* exactly the bound */
    frame(&s, 1, 1, 1, 10, 127);    /* a short length in the long form is legal */
    frame(&s, 1, 9, 1, 125, 0);     /* ping at the control limit */
    frame(&s, 1, 10, 1, 0, 0);      /* pong */
    frame(&s, 1, 8, 1, 2, 0);       /* close */
    expect_passed(&s);
}

static void
test_fragments_and_control_frames_between_them_pass(void **state)
{
    (void)state;
    stream_t s;
    start(&s);
    frame(&s, 0, 1, 1, 400, 0);
    frame(&s, 1, 9, 1, 5, 0); /* a ping between fragments does not count */
    frame(&s, 0, 0, 1, 400, 0);
    frame(&s, 1, 0, 1, 200, 0); /* 1000 in all: the bound */
    frame(&s, 0, 2, 1, 900, 0); /* a new message starts from zero */
    frame(&s, 1, 0, 1, 100, 0);
    expect_passed(&s);
}

static void
test_an_unmasked_frame_is_a_protocol_error(void **state)
{
    (void)state;
    stream_t s;
    start(&s);
    frame(&s, 1, 1, 1, 20, 0);
    size_t cut = s.n;
    frame(&s, 1, 1, 0, 20, 0);
    frame(&s, 1, 1, 1, 20, 0);
    expect_refused_at(&s, cut, WS_CLOSE_PROTOCOL_ERROR);
    /* an empty unmasked frame too (lws would act on it at once) */
    start(&s);
    cut = s.n;
    frame(&s, 1, 9, 0, 0, 0);
    expect_refused_at(&s, cut, WS_CLOSE_PROTOCOL_ERROR);
}

static void
test_a_control_frame_with_an_extended_length_is_a_protocol_error(void **state)
{
    (void)state;
    stream_t s;
    start(&s);
    size_t cut = s.n;
    frame(&s, 1, 9, 1, 126, 0);
    expect_refused_at(&s, cut, WS_CLOSE_PROTOCOL_ERROR);
    start(&s);
    cut = s.n;
    frame(&s, 1, 8, 1, 3, 127);
    expect_refused_at(&s, cut, WS_CLOSE_PROTOCOL_ERROR);
}

static void
test_a_frame_over_the_bound_is_too_big_from_its_header(void **state)
{
    (void)state;
    stream_t s;
    start(&s);
    size_t cut = s.n;
    frame(&s, 1, 1, 1, MAX_MSG + 1, 0);
    expect_refused_at(&s, cut, WS_CLOSE_TOO_BIG);
    start(&s);
    cut = s.n;
    frame(&s, 1, 2, 1, (uint64_t)1 << 62, 0); /* no payload follows: the header is enough */
    expect_refused_at(&s, cut, WS_CLOSE_TOO_BIG);
    start(&s);
    cut = s.n;
    frame(&s, 1, 1, 1, (uint64_t)1 << 63, 0); /* top bit set: malformed and too big */
    expect_refused_at(&s, cut, WS_CLOSE_TOO_BIG);
    start(&s);
    cut = s.n;
    frame(&s, 1, 1, 1, UINT64_MAX, 0);
    expect_refused_at(&s, cut, WS_CLOSE_TOO_BIG);
}

static void
test_fragments_adding_up_past_the_bound_are_too_big(void **state)
{
    (void)state;
    stream_t s;
    start(&s);
    frame(&s, 0, 1, 1, 600, 0);
    frame(&s, 1, 10, 1, 3, 0);
    size_t cut = s.n;
    frame(&s, 1, 0, 1, 401, 0);
    expect_refused_at(&s, cut, WS_CLOSE_TOO_BIG);
    /* a huge continuation cannot wrap the sum around */
    start(&s);
    frame(&s, 0, 1, 1, 600, 0);
    cut = s.n;
    frame(&s, 1, 0, 1, UINT64_MAX - 100, 0);
    expect_refused_at(&s, cut, WS_CLOSE_TOO_BIG);
}

static void
test_frames_sent_with_the_request_are_judged(void **state)
{
    (void)state;
    stream_t s;
    s.n = 0;
    /* a stray "\r" before the end of the request does not hide the end */
    static const char req[] = "GET / HTTP/1.1\r\nUpgrade: websocket\r\r\n\r\n";
    put(&s, req, sizeof req - 1);
    size_t cut = s.n;
    frame(&s, 1, 1, 0, 5, 0);
    expect_refused_at(&s, cut, WS_CLOSE_PROTOCOL_ERROR);
}

static void
test_a_request_still_in_progress_is_not_judged_as_frames(void **state)
{
    (void)state;
    ws_frames_t f;
    ws_frames_init(&f, MAX_MSG);
    /* bytes that would be an unmasked frame, inside the request */
    const char *req = "GET / HTTP/1.1\r\nX: \x81\x05hello\r\n";
    assert_int_equal(ws_frames_scan(&f, (const uint8_t *)req, strlen(req)), strlen(req));
    assert_false(ws_frames_failed(&f));
}

/* A plain HTTP request (no Upgrade header: nginx's route lookups, the REST routes a gateway
 * serves) and whatever follows it on the connection (its body, the next requests) pass as
 * they are: nothing there is a frame. */
static void
test_plain_http_requests_pass_unwatched(void **state)
{
    (void)state;
    static const char req[] = "POST /runtime/s-1/execute_action HTTP/1.1\r\nHost: x\r\n"
                              "Content-Length: 2\r\n\r\n{}GET /_sp/route HTTP/1.1\r\n\r\n";
    ws_frames_t f;
    ws_frames_init(&f, MAX_MSG);
    assert_int_equal(ws_frames_scan(&f, (const uint8_t *)req, sizeof req - 1), sizeof req - 1);
    assert_false(ws_frames_failed(&f));
    ws_frames_init(&f, MAX_MSG);
    static const char up[] = "GET /ws/control HTTP/1.1\r\nuPgRaDe: websocket\r\n\r\n\x01\x05";
    assert_int_equal(ws_frames_scan(&f, (const uint8_t *)up, sizeof up - 1), sizeof up - 3);
    assert_true(ws_frames_failed(&f)); /* an unmasked frame behind an upgrade: watched */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_masked_frames_of_every_length_form_pass),
        cmocka_unit_test(test_fragments_and_control_frames_between_them_pass),
        cmocka_unit_test(test_an_unmasked_frame_is_a_protocol_error),
        cmocka_unit_test(test_a_control_frame_with_an_extended_length_is_a_protocol_error),
        cmocka_unit_test(test_a_frame_over_the_bound_is_too_big_from_its_header),
        cmocka_unit_test(test_fragments_adding_up_past_the_bound_are_too_big),
        cmocka_unit_test(test_frames_sent_with_the_request_are_judged),
        cmocka_unit_test(test_a_request_still_in_progress_is_not_judged_as_frames),
        cmocka_unit_test(test_plain_http_requests_pass_unwatched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
