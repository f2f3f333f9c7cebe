/* exec_client.c — executor protocol client: frame parsing, channel table, credit accounting.
 * No I/O (see exec_client.h). Channel ids index a table directly (slot 0 is the connection);
 * freed ids go on a LIFO free list, so ids stay small and lookups of whatever id the server
 * sends are a bounds check. Fuzzed by tests/fuzz/fuzz_exec_client.c. */
#include "exec_client.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "xalloc.h"

#define CREDIT_MAX ((int64_t)1 << 62) /* saturation point of credit sums */

typedef struct {
    bool used;
    bool auto_grant;
    bool eof_sent;
    bool close_sent;
    bool eof_recv;
    int64_t send_credit; /* DATA bytes we may still send */
    int64_t recv_window; /* DATA bytes the server may still send us */
    int64_t ungranted;   /* delivered under auto-grant, not yet granted back */
    uint32_t next_free;  /* free list link (0 = end) */
    void *data;
} chan_t;

struct exec_client {
    exec_client_cbs_t cbs;
    void *ud;
    buf_t in;      /* partial frame carried over between feeds */
    buf_t out;     /* frames waiting to be written */
    uint32_t skip; /* payload bytes of an invalid frame still to discard */
    chan_t *chans;
    uint32_t nslots; /* slots in use or on the free list, including slot 0 */
    uint32_t cap;
    uint32_t free_head;
    uint32_t nopen;
    uint32_t max_frame;        /* receive limit */
    uint32_t server_max_frame; /* send limit, from HELLO */
    uint32_t window;           /* initial credit per channel and direction */
    json_object *hello;
    bool in_feed;
    bool free_pending;
    bool broken;
    err_t fatal;
};

exec_client_t *
exec_client_new(const exec_client_cbs_t *cbs, void *ud)
{
    exec_client_t *c = xcalloc(1, sizeof(*c));
    if (cbs)
        c->cbs = *cbs;
    c->ud = ud;
    c->max_frame = FRAME_MAX_PAYLOAD;
    c->server_max_frame = FRAME_MAX_PAYLOAD;
    c->window = FRAME_DEFAULT_WINDOW;
    c->cap = 16;
    c->chans = xcalloc(c->cap, sizeof(chan_t));
    c->nslots = 1;
    return c;
}

static void
client_destroy(exec_client_t *c)
{
    buf_free(&c->in);
    buf_free(&c->out);
    json_object_put(c->hello);
    free(c->chans);
    free(c);
}

void
exec_client_free(exec_client_t *c)
{
    if (!c)
        return;
    if (c->in_feed) {
        c->free_pending = true;
        return;
    }
    client_destroy(c);
}

void
exec_client_set_max_frame(exec_client_t *c, uint32_t max_payload)
{
    c->max_frame = max_payload;
}

buf_t *
exec_client_out(exec_client_t *c)
{
    return &c->out;
}

json_object *
exec_client_hello(const exec_client_t *c)
{
    return c->hello;
}

/* ---- channel table ---- */

static chan_t *
chan_get(const exec_client_t *c, uint32_t ch)
{
    if (ch == 0 || ch >= c->nslots || !c->chans[ch].used)
        return NULL;
    return &c->chans[ch];
}

static uint32_t
chan_alloc(exec_client_t *c)
{
    uint32_t ch;
    if (c->nopen >= EXEC_CLIENT_MAX_CHANNELS)
        return 0;
    if (c->free_head) {
        ch = c->free_head;
        c->free_head = c->chans[ch].next_free;
    } else {
        if (c->nslots == c->cap) {
            c->cap *= 2;
            c->chans = xrealloc(c->chans, c->cap * sizeof(chan_t));
        }
        ch = c->nslots++;
    }
    c->chans[ch] = (chan_t){
        .used = true,
        .auto_grant = true,
        .send_credit = c->window,
        .recv_window = c->window,
    };
    c->nopen++;
    return ch;
}

static void
chan_release(exec_client_t *c, uint32_t ch)
{
    c->chans[ch] = (chan_t){.next_free = c->free_head};
    c->free_head = ch;
    c->nopen--;
}

bool
exec_client_is_open(const exec_client_t *c, uint32_t ch)
{
    return chan_get(c, ch) != NULL;
}

void
exec_client_set_chan_data(exec_client_t *c, uint32_t ch, void *data)
{
    chan_t *k = chan_get(c, ch);
    if (k)
        k->data = data;
}

void *
exec_client_get_chan_data(const exec_client_t *c, uint32_t ch)
{
    chan_t *k = chan_get(c, ch);
    return k ? k->data : NULL;
}

size_t
exec_client_credit_avail(const exec_client_t *c, uint32_t ch)
{
    chan_t *k = chan_get(c, ch);
    return k && k->send_credit > 0 ? (size_t)k->send_credit : 0;
}

size_t
exec_client_recv_window(const exec_client_t *c, uint32_t ch)
{
    chan_t *k = chan_get(c, ch);
    return k && k->recv_window > 0 ? (size_t)k->recv_window : 0;
}

static int64_t
credit_add(int64_t a, int64_t b)
{
    return a > CREDIT_MAX - b ? CREDIT_MAX : a + b;
}

/* ---- output ---- */

static void
put_frame(exec_client_t *c, uint8_t type, uint8_t flags, uint32_t ch, const void *p, size_t n)
{
    bool was_empty = c->out.len == 0;
    uint8_t *h = (uint8_t *)buf_reserve(&c->out, FRAME_HEADER_LEN + n);
    frame_encode_header(h, type, flags, ch, (uint32_t)n);
    if (n)
        memcpy(h + FRAME_HEADER_LEN, p, n);
    buf_advance(&c->out, FRAME_HEADER_LEN + n);
    if (was_empty && c->cbs.on_output)
        c->cbs.on_output(c->ud);
}

static int
put_json(exec_client_t *c, uint8_t type, uint32_t ch, json_object *obj, err_t *err)
{
    size_t len = 0;
    const char *text = obj ? json_text(obj, &len) : "";
    if (len > c->server_max_frame)
        return err_set(err, ERR_TOO_BIG, "%s of %zu bytes exceeds the server's limit of %u",
                       frame_type_name(type), len, c->server_max_frame);
    put_frame(c, type, 0, ch, text, len);
    return 0;
}

static void
put_credit(exec_client_t *c, chan_t *k, uint32_t ch, uint32_t n)
{
    uint8_t p[4];
    frame_put_u32(p, n);
    put_frame(c, FRAME_CREDIT, 0, ch, p, sizeof(p));
    k->recv_window = credit_add(k->recv_window, n);
}

/* Grants back what auto-grant has collected; all of it when force. */
static void
flush_ungranted(exec_client_t *c, chan_t *k, uint32_t ch, bool force)
{
    int64_t threshold = c->window / 2 ? c->window / 2 : 1;
    if (k->ungranted <= 0 || (!force && k->ungranted < threshold))
        return;
    while (k->ungranted > 0) {
        uint32_t n = k->ungranted > UINT32_MAX ? UINT32_MAX : (uint32_t)k->ungranted;
        put_credit(c, k, ch, n);
        k->ungranted -= n;
    }
}

int
exec_client_send_hello(exec_client_t *c, json_object *req, err_t *err)
{
    return put_json(c, FRAME_HELLO, 0, req, err);
}

uint32_t
exec_client_open(exec_client_t *c, json_object *req, err_t *err)
{
    size_t len = 0;
    const char *text = json_text(req, &len);
    if (len > c->server_max_frame) {
        err_set(err, ERR_TOO_BIG, "request of %zu bytes exceeds the server's limit of %u", len,
                c->server_max_frame);
        return 0;
    }
    uint32_t ch = chan_alloc(c);
    if (!ch) {
        err_set(err, ERR_BUSY, "too many open channels (%u)", c->nopen);
        return 0;
    }
    put_frame(c, FRAME_OPEN, 0, ch, text, len);
    return ch;
}

static int
chan_sendable(exec_client_t *c, uint32_t ch, chan_t **out)
{
    chan_t *k = chan_get(c, ch);
    if (!k)
        return -ERR_NOT_FOUND;
    if (k->close_sent)
        return -EPIPE;
    *out = k;
    return 0;
}

ssize_t
exec_client_send_data(exec_client_t *c, uint32_t ch, const void *p, size_t n)
{
    chan_t *k;
    int r = chan_sendable(c, ch, &k);
    if (r < 0)
        return r;
    if (k->eof_sent)
        return -EPIPE;
    size_t chunk_max =
        FRAME_DATA_CHUNK < c->server_max_frame ? FRAME_DATA_CHUNK : c->server_max_frame;
    size_t avail = k->send_credit > 0 ? (size_t)k->send_credit : 0;
    size_t total = n < avail ? n : avail;
    if (total > SSIZE_MAX)
        total = SSIZE_MAX;
    const uint8_t *q = p;
    for (size_t off = 0; off < total && chunk_max;) {
        size_t len = total - off < chunk_max ? total - off : chunk_max;
        put_frame(c, FRAME_DATA, 0, ch, q + off, len);
        off += len;
    }
    k->send_credit -= (int64_t)total;
    return (ssize_t)total;
}

int
exec_client_send_eof(exec_client_t *c, uint32_t ch)
{
    chan_t *k;
    int r = chan_sendable(c, ch, &k);
    if (r < 0)
        return r;
    if (k->eof_sent)
        return -EPIPE;
    k->eof_sent = true;
    put_frame(c, FRAME_EOF, 0, ch, NULL, 0);
    return 0;
}

int
exec_client_send_json(exec_client_t *c, uint32_t ch, json_object *msg)
{
    chan_t *k;
    int r = chan_sendable(c, ch, &k);
    if (r < 0)
        return r;
    return put_json(c, FRAME_JSON, ch, msg, NULL);
}

int
exec_client_send_close(exec_client_t *c, uint32_t ch, json_object *payload)
{
    chan_t *k;
    int r = chan_sendable(c, ch, &k);
    if (r < 0)
        return r;
    r = put_json(c, FRAME_CLOSE, ch, payload, NULL);
    if (r == 0)
        k->close_sent = true;
    return r;
}

int
exec_client_grant(exec_client_t *c, uint32_t ch, uint32_t n)
{
    chan_t *k = chan_get(c, ch);
    if (!k)
        return -ERR_NOT_FOUND;
    if (n)
        put_credit(c, k, ch, n);
    return 0;
}

int
exec_client_set_auto_grant(exec_client_t *c, uint32_t ch, bool on)
{
    chan_t *k = chan_get(c, ch);
    if (!k)
        return -ERR_NOT_FOUND;
    if (on && !k->auto_grant) {
        int64_t top = (int64_t)c->window - k->recv_window;
        if (top > 0)
            k->ungranted = top;
    }
    k->auto_grant = on;
    /* Turning it off: what was delivered before has been consumed, grant it now. Turning it
     * on: restore a full window. */
    flush_ungranted(c, k, ch, true);
    return 0;
}

int
exec_client_ping(exec_client_t *c, const void *p, size_t n)
{
    if (n > EXEC_CLIENT_PING_MAX)
        return -ERR_TOO_BIG;
    put_frame(c, FRAME_PING, 0, 0, p, n);
    return 0;
}

/* ---- input ---- */

static void
violation(exec_client_t *c, uint32_t ch, const char *what)
{
    if (c->cbs.on_violation)
        c->cbs.on_violation(c->ud, ch, what);
}

/* Parses a JSON payload; NULL (with a violation reported) when it does not parse. */
static json_object *
payload_json(exec_client_t *c, const frame_t *f)
{
    err_t e;
    json_object *obj = json_parse((const char *)f->payload, f->len, &e);
    if (!obj) {
        char msg[ERR_MSG_MAX + 32];
        snprintf(msg, sizeof(msg), "%s payload: %s", frame_type_name(f->type), e.msg);
        violation(c, f->channel, msg);
    }
    return obj;
}

static void
on_hello_frame(exec_client_t *c, const frame_t *f)
{
    if (c->hello) {
        violation(c, f->channel, "second HELLO ignored");
        return;
    }
    json_object *hello = payload_json(c, f);
    if (!hello)
        return;
    if (!json_object_is_type(hello, json_type_object)) {
        json_object_put(hello);
        violation(c, f->channel, "HELLO payload is not an object");
        return;
    }
    c->hello = hello;
    int64_t max_frame = json_get_int(hello, "max_frame", FRAME_MAX_PAYLOAD);
    if (max_frame >= FRAME_HEADER_LEN && max_frame <= UINT32_MAX)
        c->server_max_frame = (uint32_t)max_frame;
    int64_t window = json_get_int(hello, "window", FRAME_DEFAULT_WINDOW);
    if (window > 0 && window <= UINT32_MAX && window != c->window) {
        /* Channels opened before HELLO started with the default window: adjust them. */
        int64_t delta = window - (int64_t)c->window;
        for (uint32_t i = 1; i < c->nslots; i++) {
            if (c->chans[i].used) {
                c->chans[i].send_credit += delta;
                c->chans[i].recv_window += delta;
            }
        }
        c->window = (uint32_t)window;
    }
    if (c->cbs.on_hello)
        c->cbs.on_hello(c->ud, hello);
}

static void
on_data_frame(exec_client_t *c, chan_t *k, const frame_t *f)
{
    if (k->eof_recv)
        violation(c, f->channel, "DATA after EOF");
    if ((int64_t)f->len > k->recv_window) {
        violation(c, f->channel, "DATA beyond the granted credit");
        k->recv_window = 0;
    } else {
        k->recv_window -= f->len;
    }
    if (f->len && c->cbs.on_data)
        c->cbs.on_data(c->ud, f->channel, (f->flags & FRAME_FLAG_STDERR) != 0, f->payload, f->len);
    /* on_data may have switched auto-grant off for these very bytes, or opened a channel
     * (which may move the table): look the channel up again. */
    k = chan_get(c, f->channel);
    if (k && k->auto_grant && f->len && !c->free_pending) {
        k->ungranted += f->len;
        flush_ungranted(c, k, f->channel, false);
    }
}

static void
on_credit_frame(exec_client_t *c, chan_t *k, const frame_t *f)
{
    k->send_credit = credit_add(k->send_credit, frame_get_u32(f->payload));
    if (!k->eof_sent && !k->close_sent && c->cbs.on_writable && k->send_credit > 0)
        c->cbs.on_writable(c->ud, f->channel, (size_t)k->send_credit);
}

static void
on_close_frame(exec_client_t *c, const frame_t *f)
{
    json_object *res;
    if (f->len == 0) {
        res = json_object_new_object();
    } else if (!(res = payload_json(c, f))) {
        res = json_error_new(ERR_PROTO, "the server's CLOSE payload is not valid JSON");
    }
    if (c->cbs.on_close)
        c->cbs.on_close(c->ud, f->channel, res);
    json_object_put(res);
    chan_release(c, f->channel);
}

static void
on_error_frame(exec_client_t *c, const frame_t *f)
{
    json_object *e = payload_json(c, f);
    if (!e)
        e = json_error_new(ERR_PROTO, "the server's ERROR payload is not valid JSON");
    if (c->cbs.on_error)
        c->cbs.on_error(c->ud, f->channel, e);
    json_object_put(e);
}

/* Dispatches one well-formed frame. */
static void
dispatch(exec_client_t *c, const frame_t *f)
{
    chan_t *k = chan_get(c, f->channel);
    bool needs_chan = f->type == FRAME_DATA || f->type == FRAME_CREDIT || f->type == FRAME_EOF ||
                      f->type == FRAME_CLOSE || (f->type == FRAME_JSON && f->channel != 0);
    if (needs_chan && !k) {
        char msg[64];
        snprintf(msg, sizeof(msg), "%s for channel %u, which is not open", frame_type_name(f->type),
                 f->channel);
        violation(c, f->channel, msg);
        return;
    }
    if (f->flags & ~(f->type == FRAME_DATA ? FRAME_FLAG_STDERR : 0))
        violation(c, f->channel, "unknown flag bits set");
    json_object *obj;
    switch (f->type) {
    case FRAME_HELLO: on_hello_frame(c, f); break;
    case FRAME_DATA: on_data_frame(c, k, f); break;
    case FRAME_JSON:
        if ((obj = payload_json(c, f))) {
            if (c->cbs.on_json)
                c->cbs.on_json(c->ud, f->channel, obj);
            json_object_put(obj);
        }
        break;
    case FRAME_CREDIT: on_credit_frame(c, k, f); break;
    case FRAME_EOF:
        if (k->eof_recv) {
            violation(c, f->channel, "second EOF");
            break;
        }
        k->eof_recv = true;
        if (c->cbs.on_eof)
            c->cbs.on_eof(c->ud, f->channel);
        break;
    case FRAME_CLOSE: on_close_frame(c, f); break;
    case FRAME_ERROR: on_error_frame(c, f); break;
    case FRAME_PONG:
        if (c->cbs.on_pong)
            c->cbs.on_pong(c->ud, f->payload, f->len);
        break;
    default: /* OPEN, PING: client-to-server only */
        violation(c, f->channel, "frame type not sent by servers");
        break;
    }
}

/* Handles the complete frames in p[0..n); returns the bytes used (the rest is a partial frame,
 * or the stream is broken). */
static size_t
process(exec_client_t *c, const uint8_t *p, size_t n)
{
    size_t off = 0;
    if (c->skip) {
        size_t drop = n < c->skip ? n : c->skip;
        c->skip -= (uint32_t)drop;
        off = drop;
    }
    while (off < n && !c->free_pending && !c->broken) {
        frame_t f;
        err_t e;
        int r = frame_decode(p + off, n - off, c->max_frame, &f, &e);
        if (r == 0)
            break;
        if (r > 0) {
            off += (size_t)r;
            dispatch(c, &f);
            continue;
        }
        if (r == -ERR_TOO_BIG) {
            c->broken = true;
            err_set(&c->fatal, ERR_TOO_BIG, "server sent a %s frame on channel %u: %s",
                    frame_type_name(f.type), f.channel, e.msg);
            break;
        }
        /* Invalid header of a sane size: skip the frame, stay in sync. */
        violation(c, f.channel, e.msg);
        off += FRAME_HEADER_LEN;
        size_t drop = n - off < f.len ? n - off : f.len;
        off += drop;
        c->skip = f.len - (uint32_t)drop;
    }
    return off;
}

int
exec_client_feed(exec_client_t *c, const void *p, size_t n, err_t *err)
{
    if (c->in_feed)
        return err_set(err, EBUSY, "exec_client_feed called from a callback");
    if (c->broken)
        return err_set(err, c->fatal.code, "%s", c->fatal.msg);
    c->in_feed = true;
    if (c->in.len == 0) {
        size_t used = process(c, p, n);
        if (used < n && !c->broken && !c->free_pending)
            buf_append(&c->in, (const uint8_t *)p + used, n - used);
    } else if (n) {
        buf_append(&c->in, p, n);
        size_t used = process(c, (const uint8_t *)c->in.data, c->in.len);
        buf_consume(&c->in, used);
    }
    c->in_feed = false;
    if (c->free_pending) {
        client_destroy(c);
        return 0;
    }
    if (c->broken)
        return err_set(err, c->fatal.code, "%s", c->fatal.msg);
    return 0;
}
