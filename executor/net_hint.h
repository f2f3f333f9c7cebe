/* net_hint.h — the note a `run` or `run_ipython` observation carries when its output shows a
 * name that did not resolve (or a network that is unreachable) in a sandbox that has no network
 * at all, so that an agent stops retrying pip, apt-get or curl there (issue 30). */
#ifndef SP_NET_HINT_H
#define SP_NET_HINT_H

#include <stdbool.h>
#include <stddef.h>

/* Appended to a `run` observation's metadata suffix (which OpenHands shows after the content),
 * to a `run_ipython` observation's output (it has no suffix). */
#define NET_HINT_NOTE                                                                              \
    "\n[This session has no network access: names do not resolve and nothing outside the "         \
    "sandbox can be reached, so downloads and installs (pip, apt-get, git clone, curl) cannot "    \
    "work here; retrying will not help.]"

/* Whether out holds what resolvers and clients print when a name does not resolve or no route
 * leads out (glibc's gai_strerror texts, curl's, apt's, urllib3's). Pure. */
bool net_hint_failure_shown(const char *out, size_t len);

/* Whether this process's network namespace has no interface but loopback: a sandbox whose
 * network policy is none (bwrap, Docker). False where the host's network is shared (the local
 * provider) or a policy gave the sandbox a link, and when /proc cannot tell. */
bool net_hint_offline(void);

#endif
