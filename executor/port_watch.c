/* port_watch.c — port.watch. See port_watch.h. */
#include "port_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "executor.h"
#include "json_util.h"
#include "port_scan.h"
#include "xalloc.h"

typedef struct port_watcher {
    channel_t *ch;
    port_table_t known; /* the listeners its client was told of (no owners kept) */
    struct port_watcher *next;
} port_watcher_t;

static struct {
    port_watcher_t *watchers;
    ltimer_t timer;    /* active only while a watch is open */
    port_table_t last; /* the previous poll's table */
    unsigned quiet;    /* polls in a row without a change */
} pw;

/* t's listeners without their owners, into *into (freed first). */
static void
keep_keys(port_table_t *into, const port_table_t *t)
{
    port_table_free(into);
    into->v = xcalloc(t->n ? t->n : 1, sizeof *t->v);
    into->n = into->cap = t->n;
    for (size_t i = 0; i < t->n; i++) {
        into->v[i] = t->v[i];
        into->v[i].pid = 0;
        into->v[i].command = NULL;
    }
}

static bool
same_listeners(const port_table_t *a, const port_table_t *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (port_sock_cmp(&a->v[i], &b->v[i]))
            return false;
    return true;
}

static bool
client_reads(const port_watcher_t *w)
{
    return conn_pending(w->ch->conn) <= PORT_WATCH_BACKLOG_MAX;
}

/* Calls fn for each listener of was not in now (gone) and of now not in was (came), in port
 * order (a merge of two sorted tables); returns how many. */
typedef void (*change_fn)(void *ctx, const port_sock_t *gone, const port_sock_t *came);

static size_t
each_change(const port_table_t *was, const port_table_t *now, change_fn fn, void *ctx)
{
    size_t i = 0, j = 0, changes = 0;
    while (i < was->n || j < now->n) {
        int c = i == was->n ? 1 : j == now->n ? -1 : port_sock_cmp(&was->v[i], &now->v[j]);
        if (c)
            fn(ctx, c < 0 ? &was->v[i] : NULL, c > 0 ? &now->v[j] : NULL);
        changes += c != 0;
        i += c <= 0;
        j += c >= 0;
    }
    return changes;
}

static void
send_closed(channel_t *ch, const port_sock_t *s)
{
    char addr[INET6_ADDRSTRLEN];
    port_sock_address(s, addr);
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "closed");
    json_set_int(ev, "port", s->port);
    json_set_str(ev, "address", addr);
    json_set_str(ev, "family", s->family == AF_INET ? "ipv4" : "ipv6");
    chan_send_json(ch, ev);
    json_object_put(ev);
}

static void
send_opened(channel_t *ch, const port_sock_t *s)
{
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "opened");
    json_object *fields = port_sock_json(s);
    json_object_object_foreach(fields, key, val) json_set(ev, key, json_object_get(val));
    json_object_put(fields);
    chan_send_json(ch, ev);
    json_object_put(ev);
}

static void
send_change(void *ctx, const port_sock_t *gone, const port_sock_t *came)
{
    if (gone)
        send_closed(ctx, gone);
    else
        send_opened(ctx, came);
}

typedef struct {
    const port_table_t *now;
    bool *fresh;
} fresh_t;

static void
mark_fresh(void *ctx, const port_sock_t *gone, const port_sock_t *came)
{
    fresh_t *f = ctx;
    if (!gone)
        f->fresh[came - f->now->v] = true;
}

static void on_poll(ltimer_t *tm);

static void
schedule(void)
{
    uint64_t after = pw.quiet >= PORT_WATCH_QUIET_POLLS ? PORT_WATCH_SLOW_MS : PORT_WATCH_FAST_MS;
    loop_timer_start(g_exec.loop, &pw.timer, after, on_poll, NULL);
}

static void
on_poll(ltimer_t *tm)
{
    (void)tm;
    port_table_t now = PORT_TABLE_INIT;
    if (port_scan(&now) == 0) {
        /* the owners of what is new to any client that reads, looked up in one pass */
        fresh_t f = {&now, xcalloc(now.n ? now.n : 1, sizeof *f.fresh)};
        size_t changes = 0;
        for (port_watcher_t *w = pw.watchers; w; w = w->next)
            if (client_reads(w))
                changes += each_change(&w->known, &now, mark_fresh, &f);
        port_sock_t **socks = xcalloc(now.n ? now.n : 1, sizeof *socks);
        size_t n = 0;
        for (size_t i = 0; i < now.n; i++)
            if (f.fresh[i])
                socks[n++] = &now.v[i];
        port_scan_owners(socks, n);
        free(socks);
        free(f.fresh);
        for (port_watcher_t *w = pw.watchers; w; w = w->next)
            if (client_reads(w)) {
                each_change(&w->known, &now, send_change, w->ch);
                keep_keys(&w->known, &now);
            }
        pw.quiet = changes || !same_listeners(&pw.last, &now) ? 0 : pw.quiet + 1;
        keep_keys(&pw.last, &now);
    }
    port_table_free(&now);
    schedule();
}

static void
on_client_detach(channel_t *ch)
{
    port_watcher_t *w = ch->owner;
    if (!w)
        return;
    for (port_watcher_t **pp = &pw.watchers; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    port_table_free(&w->known);
    free(w);
    ch->owner = NULL;
    if (!pw.watchers) { /* nothing polls while nobody watches */
        loop_timer_stop(g_exec.loop, &pw.timer);
        port_table_free(&pw.last);
        pw.quiet = 0;
    }
    json_object *r = json_object_new_object();
    json_set_bool(r, "ok", true);
    chan_close(ch, r);
}

static const channel_ops_t watch_ops = {.detach = on_client_detach};

void
port_op_watch(channel_t *ch, json_object *req)
{
    (void)req;
    port_table_t now = PORT_TABLE_INIT;
    err_t err = {0};
    if (port_scan_listed(&now, &err) < 0) {
        chan_close_error(ch, err.code, err.msg);
        return;
    }
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", "ports");
    port_table_to_json(&now, ev);
    chan_send_json(ch, ev);
    json_object_put(ev);

    port_watcher_t *w = xcalloc(1, sizeof *w);
    w->ch = ch;
    keep_keys(&w->known, &now);
    w->next = pw.watchers;
    pw.watchers = w;
    ch->ops = &watch_ops;
    ch->owner = w;
    if (!pw.timer.active)
        keep_keys(&pw.last, &now);
    port_table_free(&now);
    pw.quiet = 0; /* someone new is looking: fast again */
    schedule();
}
