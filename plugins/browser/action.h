/* action.h — BrowserGym's action strings as agents write them (`click("12")`,
 * `fill('5', "text")`, `goto("http://…")`, several calls on separate lines), parsed without I/O
 * into [{"name","args":[…]}]. Arguments are Python literals: strings ('…' or "…" with
 * escapes), numbers, True/False/None and lists of those; keyword arguments (`button="left"`) are
 * kept by position. Untrusted (an agent's text): fuzzed. */
#ifndef SP_BROWSER_ACTION_H
#define SP_BROWSER_ACTION_H

#include <json-c/json.h>
#include <stddef.h>

#include "err.h"

#define BA_MAX_CALLS 64

/* Returns the array of calls (caller puts), or NULL with err set (what was expected, where). */
json_object *ba_parse(const char *text, size_t n, err_t *err);

#endif
