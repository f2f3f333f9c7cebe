/* action_decode.c — upstream's event_from_dict, as far as its failures go (see action_decode.h).
 * The tables are OpenHands 0.62's: ACTION_TYPE_TO_CLASS in its order (the order the error text
 * lists them in), each class's dataclass fields in declaration order, the required ones first
 * (a dataclass puts fields without defaults first), and OBSERVATION_TYPE_TO_CLASS's keys. */
#include "action_decode.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json_util.h"
#include "legacy_edit.h"
#include "py_compat.h"

#define FIELDS_MAX 13

typedef struct {
    const char *type; /* ActionType value */
    const char *name; /* ActionType member */
    const char *cls;
    int required; /* the first `required` fields have no default */
    const char *fields[FIELDS_MAX + 1];
} action_class_t;

static const action_class_t classes[] = {
    {"null", "NULL", "NullAction", 0, {"action"}},
    {"run",
     "RUN",
     "CmdRunAction",
     1,
     {"command", "is_input", "thought", "blocking", "is_static", "cwd", "hidden", "action",
      "confirmation_state", "security_risk"}},
    {"run_ipython",
     "RUN_IPYTHON",
     "IPythonRunCellAction",
     1,
     {"code", "thought", "include_extra", "action", "confirmation_state", "security_risk",
      "kernel_init_code"}},
    {"browse",
     "BROWSE",
     "BrowseURLAction",
     1,
     {"url", "thought", "action", "security_risk", "return_axtree"}},
    {"browse_interactive",
     "BROWSE_INTERACTIVE",
     "BrowseInteractiveAction",
     1,
     {"browser_actions", "thought", "browsergym_send_msg_to_user", "action", "security_risk",
      "return_axtree"}},
    {"read",
     "READ",
     "FileReadAction",
     1,
     {"path", "start", "end", "thought", "action", "security_risk", "impl_source", "view_range"}},
    {"write",
     "WRITE",
     "FileWriteAction",
     2,
     {"path", "content", "start", "end", "thought", "action", "security_risk"}},
    {"edit",
     "EDIT",
     "FileEditAction",
     1,
     {"path", "command", "file_text", "old_str", "new_str", "insert_line", "content", "start",
      "end", "thought", "action", "security_risk", "impl_source"}},
    {"think", "THINK", "AgentThinkAction", 0, {"thought", "action"}},
    {"finish", "FINISH", "AgentFinishAction", 0, {"final_thought", "outputs", "thought", "action"}},
    {"reject", "REJECT", "AgentRejectAction", 0, {"outputs", "thought", "action"}},
    {"delegate", "DELEGATE", "AgentDelegateAction", 2, {"agent", "inputs", "thought", "action"}},
    {"recall", "RECALL", "RecallAction", 1, {"recall_type", "query", "thought", "action"}},
    {"change_agent_state",
     "CHANGE_AGENT_STATE",
     "ChangeAgentStateAction",
     1,
     {"agent_state", "thought", "action"}},
    {"message",
     "MESSAGE",
     "MessageAction",
     1,
     {"content", "file_urls", "image_urls", "wait_for_response", "action", "security_risk"}},
    {"system",
     "SYSTEM",
     "SystemMessageAction",
     1,
     {"content", "tools", "openhands_version", "agent_class", "action"}},
    {"condensation",
     "CONDENSATION",
     "CondensationAction",
     0,
     {"action", "forgotten_event_ids", "forgotten_events_start_id", "forgotten_events_end_id",
      "summary", "summary_offset"}},
    {"condensation_request", "CONDENSATION_REQUEST", "CondensationRequestAction", 0, {"action"}},
    {"call_tool_mcp",
     "MCP",
     "MCPAction",
     1,
     {"name", "arguments", "thought", "action", "security_risk"}},
    {"task_tracking",
     "TASK_TRACKING",
     "TaskTrackingAction",
     0,
     {"command", "task_list", "thought", "action"}},
    {"loop_recovery", "LOOP_RECOVERY", "LoopRecoveryAction", 0, {"option", "action"}},
};
#define N_CLASSES (sizeof classes / sizeof classes[0])

static const struct {
    const char *type, *name;
} observations[] = {
    {"null", "NULL"},
    {"run", "RUN"},
    {"run_ipython", "RUN_IPYTHON"},
    {"browse", "BROWSE"},
    {"read", "READ"},
    {"write", "WRITE"},
    {"edit", "EDIT"},
    {"delegate", "DELEGATE"},
    {"success", "SUCCESS"},
    {"error", "ERROR"},
    {"agent_state_changed", "AGENT_STATE_CHANGED"},
    {"user_rejected", "USER_REJECTED"},
    {"condense", "CONDENSE"},
    {"think", "THINK"},
    {"recall", "RECALL"},
    {"mcp", "MCP"},
    {"download", "DOWNLOAD"},
    {"task_tracking", "TASK_TRACKING"},
    {"loop_detection", "LOOP_DETECTION"},
};
#define N_OBSERVATIONS (sizeof observations / sizeof observations[0])

/* ActionSecurityRisk's members by value (-1..2). */
static const char *const risk_names[] = {"UNKNOWN", "LOW", "MEDIUM", "HIGH"};

/* type(v).__name__ of a JSON value. */
static const char *
py_type_name(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: return "NoneType";
    case json_type_boolean: return "bool";
    case json_type_int: return "int";
    case json_type_double: return "float";
    case json_type_string: return "str";
    case json_type_array: return "list";
    case json_type_object: return "dict";
    }
    return "object";
}

static const action_class_t *
find_class(const char *type)
{
    for (size_t i = 0; i < N_CLASSES; i++)
        if (!strcmp(classes[i].type, type))
            return &classes[i];
    return NULL;
}

static bool
has_field(const action_class_t *c, const char *name)
{
    for (int i = 0; c->fields[i]; i++)
        if (!strcmp(c->fields[i], name))
            return true;
    return false;
}

/* "'<expr>=<repr>' is not defined. Available <what>: dict_keys([<Enum.NAME: 'value'>, ...])",
 * the f-string upstream raises for an unknown type. */
static void
not_defined(buf_t *b, const char *expr, json_object *v, bool actions)
{
    buf_printf(b, "'%s=", expr);
    py_repr(b, v);
    buf_printf(b, "' is not defined. Available %s: dict_keys([",
               actions ? "actions" : "observations");
    size_t n = actions ? N_CLASSES : N_OBSERVATIONS;
    for (size_t i = 0; i < n; i++)
        buf_printf(b, "%s<%s.%s: '%s'>", i ? ", " : "", actions ? "ActionType" : "ObservationType",
                   actions ? classes[i].name : observations[i].name,
                   actions ? classes[i].type : observations[i].type);
    buf_puts(b, "])");
}

/* ActionSecurityRisk(v)'s member index (0..3), or -1 when the enum refuses v (ValueError). */
static int
risk_member(json_object *v)
{
    double d;
    switch (json_object_get_type(v)) {
    case json_type_boolean: d = json_object_get_boolean(v); break;
    case json_type_int: d = (double)json_object_get_int64(v); break;
    case json_type_double: d = json_object_get_double(v); break;
    default: return -1;
    }
    for (int i = 0; i < 4; i++)
        if (d == i - 1)
            return i;
    return -1;
}

/* repr(action) once upstream has edited its args in place: args is the edited copy, risk the
 * security_risk member (-1: none, or left as it was). */
static void
action_repr(buf_t *b, json_object *action, json_object *args, int risk)
{
    bool first = true;
    buf_puts(b, "{");
    json_object_object_foreach(action, key, val)
    {
        buf_puts(b, first ? "" : ", ");
        first = false;
        py_repr_str(b, key, strlen(key));
        buf_puts(b, ": ");
        if (strcmp(key, "args") != 0 || !args) {
            py_repr(b, val);
            continue;
        }
        bool afirst = true;
        buf_puts(b, "{");
        json_object_object_foreach(args, ak, av)
        {
            buf_puts(b, afirst ? "" : ", ");
            afirst = false;
            py_repr_str(b, ak, strlen(ak));
            buf_puts(b, ": ");
            if (risk >= 0 && !strcmp(ak, "security_risk"))
                buf_printf(b, "<ActionSecurityRisk.%s: %d>", risk_names[risk], risk - 1);
            else
                py_repr(b, av);
        }
        buf_puts(b, "}");
    }
    buf_puts(b, "}");
}

/* Renames key to to (dict assignment: an existing `to` keeps its place, else it goes last). */
static void
rename_key(json_object *o, const char *key, const char *to)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return;
    json_object_get(v);
    json_object_object_del(o, key);
    json_object_object_add(o, to, v);
}

/* args edited as action_from_dict edits them before the class sees them; *risk as in
 * action_repr; *undecided when translated_ipython_code is a string legacy_edit cannot decode. NULL
 * (with b holding the text) when the editing itself raises. */
static json_object *
edit_args(json_object *args, int *risk, bool *undecided, buf_t *b)
{
    json_object *a = json_object_new_object(), *v;
    json_object_object_foreach(args, k, val)
    {
        json_object_object_add(a, k, json_object_get(val));
    }
    json_object_object_del(a, "timestamp");
    if (json_object_object_get_ex(a, "is_confirmed", &v) && !json_object_is_type(v, json_type_null))
        rename_key(a, "is_confirmed", "confirmation_state");
    else
        json_object_object_del(a, "is_confirmed");
    rename_key(a, "images_urls", "image_urls");
    *risk = -1;
    if (json_object_object_get_ex(a, "security_risk", &v) &&
        !json_object_is_type(v, json_type_null)) {
        *risk = risk_member(v);
        if (*risk < 0)
            json_object_object_del(a, "security_risk");
    }
    json_object_object_del(a, "keep_prompt");
    json_object_object_del(a, "task_completed");
    json_object *code;
    if (!json_object_object_get_ex(a, "translated_ipython_code", &code))
        return a;
    if (code && !json_object_is_type(code, json_type_string)) {
        buf_printf(b, "'%s' object has no attribute 'startswith'", py_type_name(code));
        json_object_put(a);
        return NULL;
    }
    json_object *merged = NULL;
    err_t err = {0};
    if (legacy_edit_args(a, &merged, &err) == 0 && merged) {
        json_object_put(a);
        return merged;
    }
    /* Upstream drops code it cannot evaluate and may then miss the arguments the code held; the
     * executor refuses such code with a message saying why, which serves a replay better. */
    *undecided = true;
    return a;
}

/* The TypeError of cls(**args): an unexpected keyword first, then the missing arguments
 * ("'a'", "'a' and 'b'"). Empty when the class takes args. */
static void
init_error(buf_t *b, const action_class_t *c, json_object *args)
{
    json_object_object_foreach(args, k, v)
    {
        (void)v;
        if (!has_field(c, k)) {
            buf_printf(b, "%s.__init__() got an unexpected keyword argument ", c->cls);
            py_repr_str(b, k, strlen(k));
            return;
        }
    }
    const char *missing[FIELDS_MAX];
    int n = 0;
    for (int i = 0; i < c->required; i++)
        if (!json_object_object_get_ex(args, c->fields[i], NULL))
            missing[n++] = c->fields[i];
    if (!n)
        return;
    buf_printf(b, "%s.__init__() missing %d required positional argument%s: ", c->cls, n,
               n > 1 ? "s" : "");
    for (int i = 0; i < n; i++) {
        buf_puts(b, i == 0 ? "" : i == n - 1 ? (n > 2 ? ", and " : " and ") : ", ");
        py_repr_str(b, missing[i], strlen(missing[i]));
    }
}

static char *
action_error(json_object *action, buf_t *b)
{
    json_object *type = json_get(action, "action");
    const action_class_t *c = json_object_is_type(type, json_type_string)
                                  ? find_class(json_object_get_string(type))
                                  : NULL;
    if (!c) {
        not_defined(b, "action['action']", type, true);
        return buf_steal(b);
    }
    json_object *args = json_get(action, "args"), *none = NULL, *edited;
    bool present = json_object_object_get_ex(action, "args", NULL);
    if (present && !json_object_is_type(args, json_type_object)) {
        if (json_object_is_type(args, json_type_array))
            buf_puts(b, "pop expected at most 1 argument, got 2");
        else
            buf_printf(b, "'%s' object has no attribute 'pop'", py_type_name(args));
        return buf_steal(b);
    }
    if (!args)
        args = none = json_object_new_object();
    int risk;
    bool undecided = false;
    edited = edit_args(args, &risk, &undecided, b);
    json_object_put(none);
    if (!edited)
        return buf_steal(b);
    buf_t why = BUF_INIT;
    if (!undecided)
        init_error(&why, c, edited);
    if (why.len) {
        buf_puts(b, "action=");
        action_repr(b, action, present ? edited : NULL, risk);
        buf_puts(b, " has the wrong arguments: ");
        buf_append(b, why.data, why.len);
    }
    buf_free(&why);
    json_object_put(edited);
    if (!b->len)
        return NULL;
    return buf_steal(b);
}

char *
oh_action_decode_error(json_object *action)
{
    buf_t b = BUF_INIT;
    if (json_object_object_get_ex(action, "action", NULL)) {
        char *e = action_error(action, &b);
        if (!e)
            buf_free(&b);
        return e;
    }
    json_object *type;
    if (!json_object_object_get_ex(action, "observation", &type)) {
        buf_puts(&b, "Unknown event type: ");
        py_repr(&b, action);
        return buf_steal(&b);
    }
    enum json_type t = json_object_get_type(type);
    if (t == json_type_array || t == json_type_object) {
        buf_printf(&b, "unhashable type: '%s'", py_type_name(type));
        return buf_steal(&b);
    }
    for (size_t i = 0; t == json_type_string && i < N_OBSERVATIONS; i++)
        if (!strcmp(observations[i].type, json_object_get_string(type))) {
            buf_puts(&b, "400: Invalid action type");
            return buf_steal(&b);
        }
    /* str(KeyError(msg)) is repr(msg) */
    buf_t msg = BUF_INIT;
    not_defined(&msg, "observation['observation']", type, false);
    py_repr_str(&b, msg.data, msg.len);
    buf_free(&msg);
    return buf_steal(&b);
}
