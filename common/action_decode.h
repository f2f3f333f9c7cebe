/* action_decode.h — what OpenHands 0.62's execute_action makes of the action dict before running
 * it: event_from_dict (openhands/events/serialization/event.py, action.py), then its "is it an
 * Action" check. Upstream answers any exception there with 500 {"detail": "Internal server error:
 * <str(exception)>"}; this module gives that str() for the JSON sandpipe received, so the action
 * server answers the same before anything reaches the sandbox. Pure: no I/O. */
#ifndef SP_ACTION_DECODE_H
#define SP_ACTION_DECODE_H

#include <json-c/json.h>

/* NULL when upstream decodes action (borrowed, a JSON object) into an Action; otherwise the text
 * of the exception it raises (new string, caller frees):
 *   no "action" key and no "observation" key: "Unknown event type: {repr}";
 *   an observation of a known type: "400: Invalid action type" (an unknown one: the KeyError's
 *     repr of "'observation['observation']=...' is not defined. Available observations: ...");
 *   an action type that is not a string or not one of ACTION_TYPE_TO_CLASS:
 *     "'action['action']=<repr>' is not defined. Available actions: dict_keys([...])";
 *   "args" that is not a dict: the AttributeError/TypeError of args.pop(...);
 *   args that the action's dataclass does not take (after upstream's renames and drops: timestamp,
 *     is_confirmed, images_urls, an invalid security_risk, keep_prompt, task_completed,
 *     translated_ipython_code): "action={repr} has the wrong arguments: X.__init__() ...".
 * An observation's extras are not checked (upstream would name a wrong one instead). */
char *oh_action_decode_error(json_object *action);

#endif
