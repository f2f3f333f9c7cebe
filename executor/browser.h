/* browser.h — the browser plugin: OpenHands `browse` and `browse_interactive` actions run in one
 * headless Chromium per sandbox, driven over the DevTools pipe by the sandpipe-browser helper
 * (plugins/browser/), started on the first such action as the executor's child. One action at
 * a time; the BrowserOutputObservation (browser_obs.h) closes the channel. */
#ifndef SP_BROWSER_H
#define SP_BROWSER_H

#include <json-c/json.h>
#include <sys/types.h>

#include "conn.h"

/* Runs a browse (args.url) or browse_interactive (args.browser_actions) action (borrowed); cwd
 * resolves a url without a scheme (file://). */
void browser_run_action(channel_t *ch, json_object *action, const char *cwd);

/* Adds the plugin's figures to its status (plugins.c): "start_ms","actions". */
void browser_status_extras(json_object *o);
void browser_on_child_exit(pid_t pid, int status);
void browser_shutdown(void);

#endif
