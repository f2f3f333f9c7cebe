/* exec_client.c — executor protocol client: the client, its channel table, credit accounting
 * and everything it sends; parsing what it receives is exec_client_feed.c. No I/O (see
 * exec_client.h). Channel ids index a table directly (slot 0 is the connection);
 * freed ids go on a LIFO free list, so ids stay small and lookups of whatever id the server
 * sends are a bounds check. Fuzzed by tests/fuzz/fuzz_exec_client.c. */
#include "exec_client.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "xalloc.h"

#include "exec_client_int.h"

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

void
ec_client_destroy(exec_client_t *c)
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
    ec_client_destroy(c);
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

size_t
exec_client_shrink(exec_client_t *c)
{
    size_t freed = 0;
    if (c->in_feed) /* process() is reading c->in */
        return 0;
    buf_t *bufs[] = {&c->in, &c->out};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]->len == 0 && bufs[i]->data) {
            freed += bufs[i]->cap;
            buf_free(bufs[i]);
        }
    return freed;
}

json_object *
exec_client_hello(const exec_client_t *c)
{
    return c->hello;
}

/* ---- channel table ---- */

chan_t *
ec_chan_get(const exec_client_t *c, uint32_t ch)
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

void
ec_chan_release(exec_client_t *c, uint32_t ch)
{
    c->chans[ch] = (chan_t){.next_free = c->free_head};
    c->free_head = ch;
    c->nopen--;
}

bool
exec_client_is_open(const exec_client_t *c, uint32_t ch)
{
    return ec_chan_get(c, ch) != NULL;
}

void
exec_client_set_chan_data(exec_client_t *c, uint32_t ch, void *data)
{
    chan_t *k = ec_chan_get(c, ch);
    if (k)
        k->data = data;
}

void *
exec_client_get_chan_data(const exec_client_t *c, uint32_t ch)
{
    chan_t *k = ec_chan_get(c, ch);
    return k ? k->data : NULL;
}

size_t
exec_client_credit_avail(const exec_client_t *c, uint32_t ch)
{
    chan_t *k = ec_chan_get(c, ch);
    return k && k->send_credit > 0 ? (size_t)k->send_credit : 0;
}

size_t
exec_client_recv_window(const exec_client_t *c, uint32_t ch)
{
    chan_t *k = ec_chan_get(c, ch);
    return k && k->recv_window > 0 ? (size_t)k->recv_window : 0;
}

int64_t
ec_credit_add(int64_t a, int64_t b)
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
    k->recv_window = ec_credit_add(k->recv_window, n);
}

/* Grants back what auto-grant has collected; all of it when force. */
void
ec_flush_ungranted(exec_client_t *c, chan_t *k, uint32_t ch, bool force)
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
    chan_t *k = ec_chan_get(c, ch);
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
    chan_t *k = ec_chan_get(c, ch);
    if (!k)
        return -ERR_NOT_FOUND;
    if (n)
        put_credit(c, k, ch, n);
    return 0;
}

int
exec_client_set_auto_grant(exec_client_t *c, uint32_t ch, bool on)
{
    chan_t *k = ec_chan_get(c, ch);
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
    ec_flush_ungranted(c, k, ch, true);
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
