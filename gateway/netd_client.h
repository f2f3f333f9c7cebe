/* netd_client.h — the gateway's side of sandpipe-netd's control socket (netd/control.h): the
 * requests, each on a connection of its own, synchronous and bounded (netd answers from memory
 * and netlink in about a millisecond; a netd that does not answer within NETD_TIMEOUT_MS is
 * an error, never a stalled loop for longer), and one subscription for netd's events, read on
 * the loop (uv_poll) and re-made when netd restarts. */
#ifndef SP_NETD_CLIENT_H
#define SP_NETD_CLIENT_H

#include <json-c/json.h>

#include "err.h"

#define NETD_TIMEOUT_MS 2000

/* One request ({"op", ...}), with fd (a network namespace; -1: none) passed along. Returns
 * the answer's "info" (new ref; an empty object when it has none) or NULL with err set (netd's
 * own error, or why it could not be asked). */
json_object *netd_request(json_object *req, int fd, err_t *err);

/* Starts the subscription: on_event(ev) for each event netd sends (borrowed). */
void netd_subscribe(void (*on_event)(json_object *ev));
void netd_unsubscribe(void);

#endif
