/* cdp.h — a blocking Chrome DevTools Protocol client over --remote-debugging-pipe: Chromium
 * reads NUL-terminated JSON commands on its fd 3 and writes responses and events on fd 4. One
 * page target, attached with flatten sessions. Events that matter for waiting (page load,
 * navigation start) are counted as they pass. */
#ifndef SP_BROWSER_CDP_H
#define SP_BROWSER_CDP_H

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#include "buf.h"
#include "err.h"

typedef struct cdp cdp_t;
struct cdp {
    pid_t pid;
    int to, from; /* our ends of Chromium's fd 3 and fd 4 */
    buf_t in;
    int next_id;
    char session[128]; /* the page's flat session id */
    unsigned loads;    /* Page.loadEventFired seen */
    unsigned starts;   /* Page.frameStartedLoading seen */
    unsigned stops;    /* Page.frameStoppedLoading seen (also after a back/forward cache hit) */
    char log[4096];    /* Chromium's stderr file */
    /* Sees every event as it passes (NULL: none), after the counters; may cdp_send, never
     * cdp_call (it runs inside one). */
    void (*on_event)(cdp_t *c, json_object *m);
};

/* Starts Chromium (headless, its profile in dir) and attaches to its first page. */
int cdp_start(cdp_t *c, const char *chromium, const char *dir, err_t *err);
void cdp_stop(cdp_t *c);
bool cdp_alive(cdp_t *c);

/* Sends method(params) (params taken; NULL for {}), on the page's session when page is true,
 * and waits up to timeout_ms for its answer: the "result" object (caller puts) or NULL with err
 * (the protocol's error message, a timeout, or Chromium gone). */
json_object *cdp_call(cdp_t *c, const char *method, json_object *params, bool page, int timeout_ms,
                      err_t *err);
/* Sends method(params) (params taken) without waiting: its answer is read, and dropped, as an
 * event. The message's id, or -1 with err once Chromium is gone. */
int cdp_send(cdp_t *c, const char *method, json_object *params, bool page, err_t *err);
/* Between requests, when Chromium's pipe is readable: takes in what it sent (events) without
 * waiting. -1 once Chromium is gone (its pipe closed). */
int cdp_pump(cdp_t *c);
/* Reads events for up to timeout_ms, returning early once *counter (one of the counters above,
 * or NULL: never) is past `past`. */
void cdp_wait(cdp_t *c, int timeout_ms, const unsigned *counter, unsigned past);

#endif
