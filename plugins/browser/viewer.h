/* viewer.h — OpenHands' file viewer inside the sandbox (common/file_view.h). /tmp/oh-server-url
 * names FILE_VIEW_URL; nothing listens on that port: Chromium's requests to it (as localhost or
 * 127.0.0.1) are paused by the DevTools Fetch domain and answered here, the page built from the
 * file as the sandbox's user reads it. So the agent's `goto("{url}/view?path=…")` works in every
 * network mode, a sandbox without network included, and no port is taken from the sandbox's own
 * servers (other ports, and other paths' answers on this one, are the viewer's only). */
#ifndef SP_BROWSER_VIEWER_H
#define SP_BROWSER_VIEWER_H

#include "cdp.h"
#include "err.h"

/* Files larger than this are refused (500): the page travels whole over the DevTools pipe. */
#define VIEWER_FILE_MAX (16u << 20)

/* Pauses the page's requests to the viewer's origin (after each cdp_start) and sets c's
 * on_event to answer them. */
int viewer_enable(cdp_t *c, err_t *err);

#endif
