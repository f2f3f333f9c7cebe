/* log_entry.c — one event of a session's stream (redis/README.md "Events") as a line of E2B's
 * sandbox log: what happened to the sandbox, not what its programs printed. See log_entry.h. */
#include "log_entry.h"

#include <stdio.h>
#include <string.h>

#include "e2b.h"
#include "json_util.h"

const char *const e2b_log_types[] = {"status", "process", "network",   "action", "plugin_status",
                                     "port",   "signal",  "truncated", NULL};

#define SHOWN_MAX 200 /* characters of a command or name a message shows */

/* fields[k] = v as a string (E2B's fields are strings); nothing for an absent or null v. */
static void
field(json_object *fields, const char *k, json_object *v)
{
    if (!v || json_object_is_type(v, json_type_null))
        return;
    if (json_object_is_type(v, json_type_string))
        json_set_str(fields, k, json_object_get_string(v));
    else
        json_set_str(fields, k, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

/* The fields of ev named in keys into fields. */
static void
copy_fields(json_object *fields, json_object *ev, const char *const *keys)
{
    for (size_t i = 0; keys[i]; i++)
        field(fields, keys[i], json_get(ev, keys[i]));
}

/* "cmd arg1 arg2", cut at SHOWN_MAX, into out. */
static void
command_line(json_object *ev, char *out, size_t cap)
{
    size_t n = (size_t)snprintf(out, cap, "%.*s", SHOWN_MAX, json_get_str(ev, "cmd", "?"));
    json_object *args = json_get(ev, "args");
    for (size_t i = 0; args && i < json_object_array_length(args) && n < SHOWN_MAX; i++)
        n += (size_t)snprintf(out + n, cap - n, " %.*s", (int)(SHOWN_MAX - n),
                              json_object_get_string(json_object_array_get_idx(args, i)));
}

static const char *
status_level(const char *status)
{
    return !strncmp(status, "ERROR", 5) ? "error" : "info";
}

json_object *
e2b_log_entry(json_object *ev)
{
    const char *type = json_get_str(ev, "type", "");
    const char *level = "info", *logger = "system";
    char msg[512], line[SHOWN_MAX + 64];
    json_object *fields = json_object_new_object();
    msg[0] = '\0';
    if (!strcmp(type, "status")) {
        const char *st = json_get_str(ev, "status", "");
        level = status_level(st);
        snprintf(msg, sizeof msg, "Sandbox %s%s%.300s", st, json_get(ev, "message") ? ": " : "",
                 json_get_str(ev, "message", ""));
        static const char *const keys[] = {"status", "gateway", NULL};
        copy_fields(fields, ev, keys);
    } else if (!strcmp(type, "process")) {
        logger = "process";
        static const char *const keys[] = {"pid", "cwd", "tag", "pty", "exit_code", "status", NULL};
        copy_fields(fields, ev, keys);
        if (!strcmp(json_get_str(ev, "event", ""), "start")) {
            command_line(ev, line, sizeof line);
            snprintf(msg, sizeof msg, "Process %lld started: %s",
                     (long long)json_get_int(ev, "pid", 0), line);
            field(fields, "cmd", json_get(ev, "cmd"));
        } else {
            int64_t code = json_get_int(ev, "exit_code", 0);
            level = code ? "warn" : "info";
            snprintf(msg, sizeof msg, "Process %lld ended: %.100s",
                     (long long)json_get_int(ev, "pid", 0), json_get_str(ev, "status", "?"));
        }
    } else if (!strcmp(type, "network")) {
        logger = "network";
        if (!strcmp(json_get_str(ev, "event", ""), "policy")) {
            json_object *p = json_get(ev, "policy");
            snprintf(msg, sizeof msg, "Network policy: %s", json_get_str(p, "mode", "?"));
            field(fields, "mode", json_get(p, "mode"));
            field(fields, "allow", json_get(p, "allow"));
            field(fields, "deny", json_get(p, "deny"));
        } else {
            level = "warn";
            const char *dest = json_get_str(ev, "dest", json_get_str(ev, "name", "?"));
            snprintf(msg, sizeof msg, "Network refused: %s %.254s (%.100s)",
                     json_get_str(ev, "proto", "?"), dest, json_get_str(ev, "rule", "?"));
            static const char *const keys[] = {"proto", "dest", "name", "rule", "unreported", NULL};
            copy_fields(fields, ev, keys);
        }
    } else if (!strcmp(type, "action")) {
        logger = "action";
        json_object *a = json_get(ev, "action"), *args = json_get(a, "args");
        const char *name = json_get_str(a, "action", "?");
        const char *what = json_get_str(args, "command", json_get_str(args, "path", ""));
        snprintf(msg, sizeof msg, "Action %.64s%s%.*s", name, what[0] ? ": " : "", SHOWN_MAX, what);
        field(fields, "action", json_get(a, "action"));
        static const char *const keys[] = {"origin", "via", NULL};
        copy_fields(fields, ev, keys);
    } else if (!strcmp(type, "plugin_status")) {
        const char *state = json_get_str(ev, "state", "?");
        level = !strcmp(state, "exited") ? "warn" : "info";
        snprintf(msg, sizeof msg, "Plugin %.64s %.64s%s%.300s", json_get_str(ev, "plugin", "?"),
                 state, json_get(ev, "reason") ? ": " : "", json_get_str(ev, "reason", ""));
        static const char *const keys[] = {"plugin", "state", NULL};
        copy_fields(fields, ev, keys);
    } else if (!strcmp(type, "port")) {
        snprintf(msg, sizeof msg, "Port %lld %s%s%.*s", (long long)json_get_int(ev, "port", 0),
                 json_get_str(ev, "state", "?"), json_get(ev, "command") ? ": " : "", SHOWN_MAX,
                 json_get_str(ev, "command", ""));
        static const char *const keys[] = {"port", "state", "address", NULL};
        copy_fields(fields, ev, keys);
    } else if (!strcmp(type, "signal")) {
        logger = "process";
        snprintf(msg, sizeof msg, "Signal %.32s sent", json_get_str(ev, "signal", "?"));
        field(fields, "signal", json_get(ev, "signal"));
    } else if (!strcmp(type, "truncated")) {
        level = "warn";
        snprintf(msg, sizeof msg, "Events %lld to %lld are missing (%.100s)",
                 (long long)json_get_int(ev, "from", json_get_int(ev, "lost_from", 0)),
                 (long long)json_get_int(ev, "to", json_get_int(ev, "lost_to", 0)),
                 json_get_str(ev, "reason", "lost"));
    } else {
        json_object_put(fields); /* output, input, observations: what programs said, not events */
        return NULL;
    }
    json_set_str(fields, "logger", logger);
    field(fields, "seq", json_get(ev, "seq"));
    json_object *o = json_object_new_object();
    json_set(o, "timestamp", e2b_rfc3339(json_get_double(ev, "ts", 0)));
    json_set_str(o, "level", level);
    json_set_str(o, "message", msg);
    json_set(o, "fields", fields);
    return o;
}

int
e2b_log_level_rank(const char *level)
{
    static const char *const levels[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(level, levels[i]))
            return i;
    return -1;
}

json_object *
e2b_log_line(json_object *entry)
{
    json_object *o = json_object_new_object(), *fields = json_get(entry, "fields");
    json_set_str(o, "level", json_get_str(entry, "level", "info"));
    json_set_str(o, "message", json_get_str(entry, "message", ""));
    json_object_object_foreach(fields, k, v)
    {
        json_set(o, k, json_object_get(v));
    }
    json_object *t =
        json_object_new_string(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return t;
}
