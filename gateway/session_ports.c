/* session_ports.c — a session's listening and public ports (session_ports.h). */
#include "session_ports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "session_int.h"

bool
session_port_public(const gw_session_t *s, unsigned port)
{
    for (int i = 0; i < s->npublic; i++)
        if (s->public_ports[i] == port)
            return true;
    return false;
}

void
session_ports_public_text(const gw_session_t *s, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < s->npublic && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%u", i ? "," : "", s->public_ports[i]);
}

void
session_ports_public_parse(gw_session_t *s, const char *text)
{
    s->npublic = 0;
    for (const char *p = text; p && *p && s->npublic < SESSION_PUBLIC_PORTS_MAX;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        if (v > 0 && v <= 65535 && !session_port_public(s, (unsigned)v))
            s->public_ports[s->npublic++] = (uint16_t)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            break;
    }
}

int
session_port_set_public(gw_session_t *s, unsigned port, bool on, err_t *err)
{
    bool is = session_port_public(s, port);
    if (on && !is) {
        if (s->npublic >= SESSION_PUBLIC_PORTS_MAX) {
            err_set(err, ERR_AT_CAPACITY, "a session has at most %d public ports",
                    SESSION_PUBLIC_PORTS_MAX);
            return -1;
        }
        s->public_ports[s->npublic++] = (uint16_t)port;
    } else if (!on && is) {
        for (int i = 0; i < s->npublic; i++)
            if (s->public_ports[i] == port)
                s->public_ports[i] = s->public_ports[--s->npublic];
    }
    char text[SESSION_PUBLIC_PORTS_MAX * 6 + 1];
    session_ports_public_text(s, text, sizeof text);
    session_save_field(s, "public_ports", text[0] ? text : "-");
    return 0;
}

json_object *
session_ports_listening(const gw_session_t *s)
{
    return s->ports;
}

/* ---- the executor's port.watch ---- */

static void
port_event(gw_session_t *s, json_object *entry, const char *state)
{
    json_object *e = session_event_new("port");
    json_set_int(e, "port", json_get_int(entry, "port", 0));
    json_set_str(e, "state", state);
    json_set_str(e, "address", json_get_str(entry, "address", ""));
    const char *cmd = json_get_str(entry, "command", NULL);
    if (cmd)
        json_set_str(e, "command", cmd);
    event_log_append(s->log, e);
}

/* The entry of list with entry's port and address, or -1. */
static int
find(json_object *list, json_object *entry)
{
    int64_t port = json_get_int(entry, "port", 0);
    const char *addr = json_get_str(entry, "address", "");
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *x = json_object_array_get_idx(list, i);
        if (json_get_int(x, "port", -1) == port && !strcmp(json_get_str(x, "address", ""), addr))
            return (int)i;
    }
    return -1;
}

static void
on_watch_json(void *ud, json_object *msg)
{
    gw_session_t *s = ud;
    const char *ev = json_get_str(msg, "event", "");
    json_object *ports = json_get(msg, "ports");
    if (!strcmp(ev, "ports") && json_object_is_type(ports, json_type_array)) {
        /* the first word, or again after a lost link: what changed meanwhile becomes events */
        for (size_t i = 0; s->ports && i < json_object_array_length(s->ports); i++) {
            json_object *x = json_object_array_get_idx(s->ports, i);
            if (find(ports, x) < 0)
                port_event(s, x, "closed");
        }
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
            json_object *x = json_object_array_get_idx(ports, i);
            if (find(s->ports, x) < 0)
                port_event(s, x, "open");
        }
        json_object_put(s->ports);
        s->ports = json_object_get(ports);
        return;
    }
    bool opened = !strcmp(ev, "opened");
    if (!opened && strcmp(ev, "closed") != 0)
        return;
    if (!s->ports)
        s->ports = json_object_new_array();
    int at = find(s->ports, msg);
    json_object *entry = json_object_new_object();
    static const char *const keep[] = {"port", "address", "family", "pid", "command"};
    for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
        json_object *v = json_get(msg, keep[k]);
        if (v)
            json_object_object_add(entry, keep[k], json_object_get(v));
    }
    if (opened && at < 0) {
        json_object_array_add(s->ports, json_object_get(entry));
        port_event(s, entry, "open");
    } else if (!opened && at >= 0) {
        json_object_array_del_idx(s->ports, (size_t)at, 1);
        port_event(s, entry, "closed");
    }
    json_object_put(entry);
}

static const session_stream_cbs_t watch_cbs = {.on_json = on_watch_json};

static void
on_watch_closed(void *ud, json_object *res)
{
    (void)res;
    gw_session_t *s = ud;
    s->ports_watch = NULL; /* opened again when the link is */
}

void
session_ports_watch(gw_session_t *s)
{
    if (s->ports_watch)
        return;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "port.watch");
    err_t err = {0};
    s->ports_watch = session_probe_stream_open(s, req, &watch_cbs, on_watch_closed, s, &err);
    json_object_put(req);
    if (!s->ports_watch)
        GW_LOG("session %s: no port watch: %s", s->id, err.msg);
}

void
session_ports_free(gw_session_t *s)
{
    json_object_put(s->ports);
    s->ports = NULL;
}
