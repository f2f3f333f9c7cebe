/* exec_client_feed.c — the receiving half of the executor protocol client: frames parsed out of
 * whatever bytes the caller feeds (split anywhere), dispatched to the callbacks, credit
 * granted back. See exec_client.h; fuzzed by tests/fuzz/fuzz_exec_client.c. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_client_int.h"
#include "json_util.h"
#include "xalloc.h"

static void
violation(exec_client_t *c, uint32_t ch, const char *what)
{
    if (c->cbs.on_violation)
        c->cbs.on_violation(c->ud, ch, what);
}

/* Parses a JSON payload; NULL (with a violation reported) when it does not parse. Bytes that
 * are not UTF-8 (a hostile executor's, an older one's names) are read as U+FFFD: nothing
 * this client hands on holds them. */
static json_object *
payload_json(exec_client_t *c, const frame_t *f)
{
    err_t e;
    json_object *obj = json_parse_lossy((const char *)f->payload, f->len, &e);
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
    k = ec_chan_get(c, f->channel);
    if (k && k->auto_grant && f->len && !c->free_pending) {
        k->ungranted += f->len;
        ec_flush_ungranted(c, k, f->channel, false);
    }
}

static void
on_credit_frame(exec_client_t *c, chan_t *k, const frame_t *f)
{
    k->send_credit = ec_credit_add(k->send_credit, frame_get_u32(f->payload));
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
    ec_chan_release(c, f->channel);
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
    chan_t *k = ec_chan_get(c, f->channel);
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
        ec_client_destroy(c);
        return 0;
    }
    if (c->broken)
        return err_set(err, c->fatal.code, "%s", c->fatal.msg);
    return 0;
}
