/* browser_obs.h — the OpenHands BrowserOutputObservation for `browse` and `browse_interactive`
 * from what sandpipe-browser reported, with upstream's texts (openhands/runtime/browser/utils.py
 * get_agent_obs_text, OpenHands 0.62.0) and exactly its 16 extras fields. Pure: no I/O. */
#ifndef SP_BROWSER_OBS_H
#define SP_BROWSER_OBS_H

#include <json-c/json.h>
#include <stdbool.h>

/* trigger: "browse" or "browse_interactive"; step: the helper's answer (borrowed); action_str:
 * the BrowserGym action run; return_axtree: the action's flag (axtree_object stays {} without
 * it, as upstream). */
json_object *browser_obs_build(const char *trigger, json_object *step, const char *action_str);

/* An observation for a failure before the page was reached (no browser, bad action). */
json_object *browser_obs_error(const char *trigger, const char *url, const char *action_str,
                               const char *error);

#endif
