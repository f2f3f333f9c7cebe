/* legacy_edit.h — `translated_ipython_code`, the field OpenHands 0.18-0.23 stored on the file
 * actions of its editor tool: `print(file_editor(**{...}))`, the tool call's arguments written as
 * a Python dict literal (the writer was f'print(file_editor(**{arguments}))': repr() of a dict
 * decoded from JSON). Replayed trajectories still carry it, sometimes alone. Upstream's event
 * deserializer (openhands/events/serialization/action.py, handle_action_deprecated_args) evaluates
 * the literal (ast.literal_eval) and merges it into the action's args; this module does the same
 * with a strict parser of what repr() writes. Pure: no I/O. */
#ifndef SP_LEGACY_EDIT_H
#define SP_LEGACY_EDIT_H

#include <json-c/json.h>
#include <stddef.h>

#include "err.h"

/* Parses code (len bytes; NUL bytes are data) of the one shape `print(file_editor(**{DICT}))`,
 * DICT a dict literal with string keys whose values are strings (single or double quoted, with
 * Python's escapes, adjacent literals joined), integers, None, True, False or lists of these.
 * Anything else (other calls, names, f-strings, floats, tuples, triple quotes, comments) is
 * refused. Returns a new object of the dict's items (None as JSON null), or NULL with err set
 * (ERR_BAD_REQ; the message says what was expected and at which byte). */
json_object *legacy_edit_parse(const char *code, size_t len, err_t *err);

/* Upstream's handling of an action's args (borrowed): with no "translated_ipython_code" key,
 * *out = NULL (use args as they are). Otherwise *out is a new copy of args without that key, the
 * decoded dict merged over it (its keys win) when the code is a non-empty string, and "command"
 * dropped when it is "view" (a view is a read action, which has no command). Returns 0, or
 * -ERR_BAD_REQ with err (*out NULL) when the code is not a string or cannot be decoded. */
int legacy_edit_args(json_object *args, json_object **out, err_t *err);

#endif
