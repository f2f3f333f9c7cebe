/* exec_client_harness.h — shared by the exec_client unit tests: a callback set that records
 * every callback as a line of text, frame builders, and a decoder for the client's output. */
#ifndef SP_EXEC_CLIENT_HARNESS_H
#define SP_EXEC_CLIENT_HARNESS_H

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
    buf_t log; /* one line per callback */
    exec_client_t *c;
    bool stop_auto_grant_in_data;
    bool free_in_close;
    int nviolations;
    size_t last_writable;
} rec_t;

static inline void
rec_hello(void *ud, json_object *hello)
{
    rec_t *r = ud;
    buf_printf(&r->log, "hello %s\n", json_text(hello, NULL));
}

static inline void
rec_data(void *ud, uint32_t ch, bool is_stderr, const uint8_t *p, size_t n)
{
    rec_t *r = ud;
    buf_printf(&r->log, "data %u %s ", ch, is_stderr ? "err" : "out");
    buf_append(&r->log, p, n);
    buf_puts(&r->log, "\n");
    if (r->stop_auto_grant_in_data)
        exec_client_set_auto_grant(r->c, ch, false);
}

static inline void
rec_json(void *ud, uint32_t ch, json_object *msg)
{
    rec_t *r = ud;
    buf_printf(&r->log, "json %u %s\n", ch, json_text(msg, NULL));
}

static inline void
rec_eof(void *ud, uint32_t ch)
{
    rec_t *r = ud;
    buf_printf(&r->log, "eof %u\n", ch);
}

static inline void
rec_close(void *ud, uint32_t ch, json_object *res)
{
    rec_t *r = ud;
    buf_printf(&r->log, "close %u %s\n", ch, json_text(res, NULL));
    if (r->free_in_close) {
        exec_client_free(r->c);
        r->c = NULL;
    }
}

static inline void
rec_error(void *ud, uint32_t ch, json_object *e)
{
    rec_t *r = ud;
    buf_printf(&r->log, "error %u %s\n", ch, json_text(e, NULL));
}

static inline void
rec_pong(void *ud, const uint8_t *p, size_t n)
{
    rec_t *r = ud;
    buf_puts(&r->log, "pong ");
    buf_append(&r->log, p, n);
    buf_puts(&r->log, "\n");
}

static inline void
rec_writable(void *ud, uint32_t ch, size_t avail)
{
    rec_t *r = ud;
    r->last_writable = avail;
    buf_printf(&r->log, "writable %u %zu\n", ch, avail);
}

static inline void
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

static inline void
rec_init(rec_t *r)
{
    memset(r, 0, sizeof(*r));
    r->c = exec_client_new(&rec_cbs, r);
}

static inline void
rec_done(rec_t *r)
{
    exec_client_free(r->c);
    buf_free(&r->log);
}

static inline void
put(buf_t *b, uint8_t type, uint8_t flags, uint32_t ch, const void *p, size_t n)
{
    uint8_t h[FRAME_HEADER_LEN];
    frame_encode_header(h, type, flags, ch, (uint32_t)n);
    buf_append(b, h, sizeof(h));
    if (n)
        buf_append(b, p, n);
}

static inline void
put_str(buf_t *b, uint8_t type, uint32_t ch, const char *s)
{
    put(b, type, 0, ch, s, strlen(s));
}

static inline void
put_credit(buf_t *b, uint32_t ch, uint32_t n)
{
    uint8_t p[4];
    frame_put_u32(p, n);
    put(b, FRAME_CREDIT, 0, ch, p, 4);
}

static inline void
feed_ok(exec_client_t *c, const void *p, size_t n)
{
    err_t e;
    assert_int_equal(exec_client_feed(c, p, n, &e), 0);
}

static inline void
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
static inline char *
drain_out(exec_client_t *c)
{
    buf_t *out = exec_client_out(c);
    buf_t txt = BUF_INIT;
    size_t off = 0;
    while (off < out->len) {
        frame_t f;
        int r =
            frame_decode((const uint8_t *)out->data + off, out->len - off, UINT32_MAX, &f, NULL);
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

static inline json_object *
req(const char *text)
{
    json_object *o = json_parse(text, strlen(text), NULL);
    assert_non_null(o);
    return o;
}

static inline uint32_t
open_ch(exec_client_t *c, const char *op)
{
    char text[64];
    snprintf(text, sizeof(text), "{\"op\":\"%s\"}", op);
    json_object *o = req(text);
    uint32_t ch = exec_client_open(c, o, NULL);
    json_object_put(o);
    return ch;
}

/* A recorder whose client had HELLO with window and opened one channel with op (its OPEN
 * already drained): the start of most tests. Returns the channel. */
static inline uint32_t
rec_open(rec_t *r, uint32_t window, const char *op)
{
    rec_init(r);
    feed_hello(r->c, window);
    uint32_t ch = open_ch(r->c, op);
    free(drain_out(r->c));
    return ch;
}

#endif
