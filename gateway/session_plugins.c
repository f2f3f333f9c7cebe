/* session_plugins.c — a session's plugins on its executor: the session's list goes to the
 * executor with the `plugins` op as soon as the link is up (before any action, on the same
 * connection, which the executor reads in order, so no action runs with the wrong list). The
 * session is READY without awaiting the answer (a round trip less in a claim); what answers
 * from a plugin's state waits for it (session_when_plugins_known). The channel stays open and
 * brings each change of a plugin's state, kept in the session (its JSON's plugin_status, the
 * plugin_status field of sp:session:{ID}) and told in the event stream as a plugin_status
 * event per plugin whose state, pid or reason changed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "json_util.h"
#include "session_int.h"
#include "xalloc.h"

chan_kind_t session_kind_plugins = CH_PLUGINS;

struct plugins_wait {
    struct plugins_wait *next;
    session_plugins_cb cb;
    void *ud;
};

void
session_when_plugins_known(gw_session_t *s, session_plugins_cb cb, void *ud)
{
    if (!s->plugins_pending) {
        cb(ud);
        return;
    }
    struct plugins_wait *w = xmalloc(sizeof *w);
    w->cb = cb;
    w->ud = ud;
    w->next = s->plugins_waits;
    s->plugins_waits = w;
}

bool
session_plugins_awaited(const gw_session_t *s)
{
    return s->plugins_pending;
}

void
session_plugins_known(gw_session_t *s)
{
    s->plugins_pending = false;
    while (s->plugins_waits) { /* a callback may add a waiter: it is called at once */
        struct plugins_wait *w = s->plugins_waits;
        s->plugins_waits = w->next;
        w->cb(w->ud);
        free(w);
    }
}

json_object *
session_plugins_default(void)
{
    /* What an absent list means (docs/api.md): vscode is asked for, as OpenHands' command does */
    json_object *a = json_object_new_array();
    json_object_array_add(a, json_object_new_string("agent_skills"));
    json_object_array_add(a, json_object_new_string("jupyter"));
    json_object_array_add(a, json_object_new_string("browser"));
    return a;
}

int
session_plugins_open(gw_session_t *s)
{
    exec_client_t *c = exec_link_client(s->link);
    if (!c)
        return -1;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "plugins");
    json_object *asked = json_get(s->params, "plugins");
    json_set(req, "allowed", asked ? json_object_get(asked) : session_plugins_default());
    err_t err = {0};
    s->plugins_ch = exec_client_open(c, req, &err);
    json_object_put(req);
    if (!s->plugins_ch) {
        GW_LOG("session %s: plugins op: %s", s->id, err.msg);
        return -1;
    }
    exec_client_set_chan_data(c, s->plugins_ch, &session_kind_plugins);
    exec_link_flush(s->link);
    s->plugins_pending = true;
    return 0;
}

static bool
same(json_object *a, json_object *b, const char *key)
{
    json_object *x = json_get(a, key), *y = json_get(b, key);
    if (!x || !y)
        return !x && !y;
    return strcmp(json_object_get_string(x), json_object_get_string(y)) == 0;
}

/* A state worth an event when nothing was known before: one a plugin reaches by being used. */
static bool
eventful(const char *state)
{
    return !strcmp(state, "starting") || !strcmp(state, "running") || !strcmp(state, "exited");
}

/* The executor is inside the sandbox: of what it says, keep the known plugins, fields and
 * states, strings cut short. */
static json_object *
sanitize(json_object *said)
{
    static const char *const plugins[] = {"agent_skills", "jupyter", "browser", "vscode"};
    static const char *const states[] = {"not_started", "starting",    "running",
                                         "exited",      "unavailable", "disabled"};
    static const char *const ints[] = {"pid",      "rss_bytes", "start_ms", "cells",
                                       "restarts", "actions",   "port"};
    static const char *const strs[] = {"reason", "python"};
    json_object *out = json_object_new_object();
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++) {
        json_object *p = json_get(said, plugins[i]);
        const char *state = json_get_str(p, "state", "");
        bool known = false;
        for (size_t k = 0; k < sizeof states / sizeof states[0] && !known; k++)
            known = !strcmp(state, states[k]);
        if (!known)
            continue;
        json_object *o = json_object_new_object();
        json_set_str(o, "state", state);
        for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
            json_object *v = json_get(p, ints[k]);
            if (v && json_object_is_type(v, json_type_int))
                json_set_int(o, ints[k], json_object_get_int64(v));
        }
        for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++) {
            const char *v = json_get_str(p, strs[k], NULL);
            if (v)
                json_set_strn(o, strs[k], v, strnlen(v, 512));
        }
        json_set(out, plugins[i], o);
    }
    return out;
}

void
session_plugins_json(gw_session_t *s, json_object *msg)
{
    json_object *said = json_get(msg, "plugins");
    if (strcmp(json_get_str(msg, "event", ""), "plugins") || !said ||
        !json_object_is_type(said, json_type_object))
        return;
    json_object *now = sanitize(said);
    json_object_object_foreach(now, name, st)
    {
        json_object *before = s->plugin_status ? json_get(s->plugin_status, name) : NULL;
        const char *state = json_get_str(st, "state", "");
        if (before
                ? same(before, st, "state") && same(before, st, "pid") && same(before, st, "reason")
                : !eventful(state))
            continue;
        json_object *e = session_event_new("plugin_status");
        json_set_str(e, "plugin", name);
        json_object_object_foreach(st, k, v) json_set(e, k, json_object_get(v));
        event_log_append(s->log, e);
    }
    json_object_put(s->plugin_status);
    s->plugin_status = now;
    session_save_field(s, "plugin_status",
                       json_object_to_json_string_ext(now, JSON_C_TO_STRING_PLAIN));
}

const char *
session_plugin_state(const gw_session_t *s, const char *plugin)
{
    return json_get_str(json_get(s->plugin_status, plugin), "state", "");
}
