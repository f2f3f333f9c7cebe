/* plugin_texts.h — upstream's texts for an action whose plugin the session did not ask for
 * (OpenHands' action_execution_server.py): the executor answers with them as error
 * observations (executor/plugins.c), and the action server's execute_action
 * (gateway/http_actions.c) turns the jupyter one into the HTTP 500 upstream
 * gives there (its RuntimeError, caught by its route). */
#ifndef SP_PLUGIN_TEXTS_H
#define SP_PLUGIN_TEXTS_H

#define PLUGIN_JUPYTER_MISSING "JupyterRequirement not found. Unable to run IPython action."
#define PLUGIN_BROWSER_MISSING "Browser functionality is not supported or disabled."
/* The detail of that 500: upstream's traceback.format_exc(), its frames (upstream's own files)
 * left out. */
#define PLUGIN_JUPYTER_MISSING_DETAIL                                                              \
    "Traceback (most recent call last):\nRuntimeError: " PLUGIN_JUPYTER_MISSING "\n"

#endif
