/* conn.c — client connections: reading and decoding frames, the channel table, credits, op
 * dispatch. Reads are decoded in place from `in`; how frames leave is conn_out.c. */
#include "conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "buf.h"
#include "conn_int.h"
#include "durable.h"
#include "env.h"
#include "executor.h"
#include "frame.h"
#include "json_util.h"
#include "xalloc.h"

#define READ_CHUNK   (256 * 1024)
#define MAX_CHANNELS 1024

conn_t *g_open;

/* ---- channels ---- */

static channel_t *
chan_find(conn_t *c, uint32_t id)
{
    for (channel_t *ch = c->channels; ch; ch = ch->next)
        if (ch->id == id)
            return ch;
    return NULL;
}

static void
chan_unlink(channel_t *ch)
{
    conn_t *c = ch->conn;
    for (channel_t **pp = &c->channels; *pp; pp = &(*pp)->next)
        if (*pp == ch) {
            *pp = ch->next;
            c->nchannels--;
            break;
        }
}

int64_t
chan_credit(const channel_t *ch)
{
    return ch->dur ? durable_room(ch->dur) : ch->send_credit;
}

static void
send_data(channel_t *ch, uint8_t flags, const void *p, size_t n)
{
    const uint8_t *b = p;
    ch->send_credit -= (int64_t)n;
    if (!ch->conn) /* orphaned: the bytes wait in the durable record */
        return;
    while (n > 0) {
        size_t k = n > FRAME_DATA_CHUNK ? FRAME_DATA_CHUNK : n;
        conn_send_frame(ch->conn, FRAME_DATA, flags, ch->id, b, k);
        b += k;
        n -= k;
    }
}

void
chan_resend(channel_t *ch, const void *p, size_t n)
{
    send_data(ch, 0, p, n);
}

void
chan_send_data(channel_t *ch, uint8_t flags, const void *p, size_t n)
{
    if (ch->dur)
        durable_write(ch->dur, p, n); /* kept, then sent within the credit */
    else
        send_data(ch, flags, p, n);
}

void
chan_send_json(channel_t *ch, json_object *msg)
{
    if (ch->conn)
        conn_send_json(ch->conn, FRAME_JSON, ch->id, msg);
}

void
chan_send_eof(channel_t *ch)
{
    if (ch->conn)
        conn_send_frame(ch->conn, FRAME_EOF, 0, ch->id, NULL, 0);
}

void
chan_grant(channel_t *ch, size_t n)
{
    uint8_t b[4];
    frame_put_u32(b, (uint32_t)n);
    ch->recv_credit += (int64_t)n;
    if (ch->conn)
        conn_send_frame(ch->conn, FRAME_CREDIT, 0, ch->id, b, 4);
}

void
chan_close(channel_t *ch, json_object *result)
{
    if (!result)
        result = json_object_new_object();
    if (ch->dur && !durable_closed(ch->dur, result)) {
        /* kept until the client says it is stored; CLOSE goes once the output before it has */
        json_object_put(result);
        return;
    }
    chan_send_close(ch, result);
}

void
chan_send_close(channel_t *ch, json_object *result)
{
    if (!result)
        result = json_object_new_object();
    ch->dur = NULL;
    if (!ch->conn) { /* orphaned: the result waits in the durable record */
        json_object_put(result);
        free(ch);
        return;
    }
    if (ch->conn->closing) { /* conn_close frees its channels */
        json_object_put(result);
        return;
    }
    conn_send_json(ch->conn, FRAME_CLOSE, ch->id, result);
    json_object_put(result);
    chan_unlink(ch);
    free(ch);
}

void
chan_close_error(channel_t *ch, int code, const char *msg)
{
    chan_close(ch, json_error_new(code, msg));
}

/* ---- frame handling ---- */

static void
on_open(conn_t *c, const frame_t *f)
{
    err_t err = {0};
    if (f->channel == 0 || chan_find(c, f->channel)) {
        char msg[96];
        snprintf(msg, sizeof msg, "channel %u is %s", f->channel,
                 f->channel ? "already open" : "reserved for the connection");
        json_object *e = json_error_new(ERR_PROTO, msg);
        conn_send_json(c, FRAME_CLOSE, f->channel, e);
        json_object_put(e);
        return;
    }
    channel_t *ch = xcalloc(1, sizeof *ch);
    ch->conn = c;
    ch->id = f->channel;
    ch->send_credit = FRAME_DEFAULT_WINDOW;
    ch->recv_credit = FRAME_DEFAULT_WINDOW;
    ch->next = c->channels;
    c->channels = ch;
    c->nchannels++;
    if (c->nchannels > MAX_CHANNELS) {
        chan_close_error(ch, ERR_BUSY, "too many open channels on this connection");
        return;
    }
    json_object *req = json_parse((const char *)f->payload, f->len, &err);
    if (!req) {
        chan_close_error(ch, ERR_PROTO, err.msg);
        return;
    }
    const char *op = json_get_str(req, "op", NULL);
    op_handler_t h = op ? ops_lookup(op) : NULL;
    if (!json_object_is_type(req, json_type_object) || !op) {
        chan_close_error(ch, ERR_BAD_REQ, "OPEN needs a JSON object with a string \"op\"");
    } else if (!h) {
        char msg[160];
        snprintf(msg, sizeof msg, "unknown op \"%.100s\"", op);
        chan_close_error(ch, ERR_BAD_REQ, msg);
    } else {
        h(ch, req);
    }
    json_object_put(req);
}

static void
on_channel_frame(conn_t *c, const frame_t *f)
{
    channel_t *ch = chan_find(c, f->channel);
    if (!ch) {
        /* A late CREDIT/CLOSE for a channel we just closed is normal; answer the rest. */
        if (f->type != FRAME_CREDIT && f->type != FRAME_CLOSE) {
            char msg[64];
            snprintf(msg, sizeof msg, "channel %u is not open", f->channel);
            conn_send_error(c, f->channel, ERR_NOT_FOUND, msg);
        }
        return;
    }
    switch (f->type) {
    case FRAME_DATA:
        if ((int64_t)f->len > ch->recv_credit) {
            conn_send_error(c, f->channel, ERR_PROTO, "DATA beyond the granted credit; dropped");
            return;
        }
        ch->recv_credit -= f->len;
        if (ch->ops && ch->ops->data)
            ch->ops->data(ch, f->payload, f->len);
        else
            conn_send_error(c, f->channel, ERR_PROTO, "this channel takes no DATA");
        break;
    case FRAME_EOF:
        if (ch->ops && ch->ops->eof)
            ch->ops->eof(ch);
        break;
    case FRAME_JSON: {
        err_t err = {0};
        json_object *msg = json_parse((const char *)f->payload, f->len, &err);
        if (!msg) {
            conn_send_error(c, f->channel, ERR_PROTO, err.msg);
        } else if (ch->ops && ch->ops->json) {
            ch->ops->json(ch, msg);
        } else {
            conn_send_error(c, f->channel, ERR_BAD_REQ, "this channel takes no JSON messages");
        }
        json_object_put(msg);
        break;
    }
    case FRAME_CREDIT:
        ch->send_credit += frame_get_u32(f->payload);
        /* on a durable channel, credit acknowledges stored bytes (may send the CLOSE) */
        if (ch->dur && durable_acked(ch->dur, frame_get_u32(f->payload)) == 0)
            break;
        if (ch->ops && ch->ops->resume)
            ch->ops->resume(ch);
        break;
    case FRAME_CLOSE:
        if (ch->dur) { /* an explicit detach: nothing to keep for this client */
            durable_forget(ch->dur);
            ch->dur = NULL;
        }
        if (ch->ops && ch->ops->detach)
            ch->ops->detach(ch);
        /* detach may already have closed it */
        if (chan_find(c, f->channel) == ch)
            chan_close(ch, NULL);
        break;
    default: conn_send_error(c, f->channel, ERR_PROTO, "frame type not valid on a channel");
    }
}

channel_t *
chan_adopt(channel_t *fresh, channel_t *orphan)
{
    conn_t *c = fresh->conn;
    for (channel_t **pp = &c->channels; *pp; pp = &(*pp)->next)
        if (*pp == fresh) {
            *pp = orphan;
            break;
        }
    orphan->next = fresh->next;
    orphan->conn = c;
    orphan->id = fresh->id;
    orphan->send_credit = fresh->send_credit;
    orphan->recv_credit = fresh->recv_credit;
    free(fresh);
    return orphan;
}

/* A durable channel (already out of its connection's list) without a connection. */
static void
make_orphan(channel_t *ch)
{
    ch->conn = NULL;
    ch->next = NULL;
    ch->id = 0;
    ch->send_credit = 0;
    ch->recv_credit = 0;
    durable_orphaned(ch->dur);
}

void
chan_orphan(channel_t *ch, const char *why)
{
    conn_t *c = ch->conn;
    if (!c)
        return;
    json_object *e = json_error_new(ERR_BUSY, why);
    conn_send_json(c, FRAME_CLOSE, ch->id, e);
    json_object_put(e);
    chan_unlink(ch);
    make_orphan(ch);
}

static void
send_hello(conn_t *c)
{
    json_object *h = json_object_new_object();
    json_set_int(h, "protocol", 1);
    json_set_str(h, "version", SANDPIPE_VERSION);
    json_set_int(h, "max_frame", FRAME_MAX_PAYLOAD);
    json_set_int(h, "window", FRAME_DEFAULT_WINDOW);
    json_set_int(h, "pid", getpid());
    json_set_bool(h, "durable", true); /* action ids, action.attach/release (durable.h) */
    /* the sandbox user's home: E2B's envd resolves relative paths and ~ against it */
    const char *home = env_get(g_exec.base_env, "HOME");
    if (home && home[0] == '/')
        json_set_name(h, "home", home);
    conn_send_json(c, FRAME_HELLO, 0, h);
    json_object_put(h);
}

static void
on_frame(conn_t *c, const frame_t *f)
{
    if (c->need_token) {
        err_t err = {0};
        json_object *h =
            f->type == FRAME_HELLO ? json_parse((const char *)f->payload, f->len, &err) : NULL;
        const char *tok = json_get_str(h, "token", "");
        size_t a = strlen(tok), b = strlen(c->token);
        unsigned diff = (unsigned)(a ^ b);
        for (size_t i = 0; i < a && i < b; i++)
            diff |= (unsigned)(tok[i] ^ c->token[i]);
        json_object_put(h);
        if (diff || a != b) {
            conn_send_error(c, 0, EACCES, "the first frame must be HELLO with a valid token");
            conn_flush_out(c);
            conn_close(c);
            return;
        }
        c->need_token = false;
        send_hello(c);
        return;
    }
    switch (f->type) {
    case FRAME_OPEN: on_open(c, f); break;
    case FRAME_PING:
        conn_send_frame(c, FRAME_PONG, 0, 0, f->payload, f->len > 64 ? 64 : f->len);
        break;
    case FRAME_HELLO: break; /* nothing to negotiate on unix sockets */
    default:
        if (f->channel == 0)
            conn_send_error(c, 0, ERR_PROTO, "frame type not valid on channel 0");
        else
            on_channel_frame(c, f);
    }
}

static void
process_input(conn_t *c)
{
    size_t off = 0;
    while (!c->closing) {
        if (c->skip) {
            size_t k = c->in.len - off < c->skip ? c->in.len - off : c->skip;
            off += k;
            c->skip -= k;
            if (c->skip)
                break;
        }
        frame_t f;
        err_t err = {0};
        int n = frame_decode((const uint8_t *)c->in.data + off, c->in.len - off, FRAME_MAX_PAYLOAD,
                             &f, &err);
        if (n == 0)
            break;
        if (n < 0) {
            conn_send_error(c, f.channel, -n, err.msg);
            off += FRAME_HEADER_LEN;
            c->skip = f.len;
            continue;
        }
        off += (size_t)n;
        on_frame(c, &f);
    }
    if (!c->closing)
        buf_consume(&c->in, off);
}

static void
on_io(watch_t *w, uint32_t events)
{
    conn_t *c = w->data;
    if (events & EPOLLOUT)
        conn_flush_out(c);
    if (c->closing)
        return;
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        ssize_t n;
        do
            n = read(w->fd, buf_reserve(&c->in, READ_CHUNK), READ_CHUNK);
        while (n < 0 && errno == EINTR);
        if (n > 0) {
            buf_advance(&c->in, (size_t)n);
            process_input(c);
        } else if (n == 0 || errno != EAGAIN) {
            conn_close(c);
        }
    }
}

static void
conn_free(void *p)
{
    conn_t *c = p;
    buf_free(&c->in);
    buf_free(&c->out);
    free(c->token);
    free(c);
}

void
conn_close(conn_t *c)
{
    if (c->closing)
        return;
    c->closing = true;
    if (c->prev_open)
        c->prev_open->next_open = c->next_open;
    else
        g_open = c->next_open;
    if (c->next_open)
        c->next_open->prev_open = c->prev_open;
    while (c->channels) {
        channel_t *ch = c->channels;
        c->channels = ch->next;
        if (ch->dur) { /* orphaned, not detached: the action goes on, kept in its record */
            make_orphan(ch);
            continue;
        }
        if (ch->ops && ch->ops->lost)
            ch->ops->lost(ch);
        else if (ch->ops && ch->ops->detach)
            ch->ops->detach(ch);
        free(ch);
    }
    int fd = c->w.fd;
    loop_watch_del(g_exec.loop, &c->w);
    close(fd);
    loop_defer_free(g_exec.loop, c, conn_free);
}

void
conn_start(int fd, bool need_token, const char *token)
{
    conn_t *c = xcalloc(1, sizeof *c);
    c->need_token = need_token;
    c->token = xstrdup(token ? token : "");
    int sz = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    if (loop_watch_add(g_exec.loop, &c->w, fd, EPOLLIN, on_io, c) < 0) {
        close(fd);
        conn_free(c);
        return;
    }
    c->next_open = g_open;
    if (g_open)
        g_open->prev_open = c;
    g_open = c;
    if (!need_token)
        send_hello(c);
}

void
conn_close_all(void)
{
    conn_flush_queued(NULL); /* what was said before the end still goes out */
    while (g_open)
        conn_close(g_open);
}
