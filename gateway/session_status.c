/* session_status.c — status texts and transitions. See session_status.h. */
#include "session_status.h"

#include <string.h>

static const char *const texts[SESSION_STATUS_COUNT] = {
    [SESSION_NEW] = "",
    [SESSION_STARTING] = "STARTING_RUNTIME",
    [SESSION_STARTED] = "RUNTIME_STARTED",
    [SESSION_READY] = "READY",
    [SESSION_PAUSED] = "PAUSED",
    [SESSION_ERROR] = "ERROR",
    [SESSION_DISCONNECTED] = "ERROR_RUNTIME_DISCONNECTED",
    [SESSION_STOPPED] = "STOPPED",
};

#define BIT(st) (1u << (st))

/* For each status, the statuses it may be entered from. */
static const unsigned entered_from[SESSION_STATUS_COUNT] = {
    [SESSION_NEW] = 0, /* only the zero value of a new session */
    [SESSION_STARTING] = BIT(SESSION_NEW),
    [SESSION_STARTED] = BIT(SESSION_STARTING) | BIT(SESSION_PAUSED),
    [SESSION_READY] = BIT(SESSION_STARTED) | BIT(SESSION_PAUSED) | BIT(SESSION_NEW) |
                      BIT(SESSION_ERROR) | BIT(SESSION_DISCONNECTED),
    [SESSION_PAUSED] = BIT(SESSION_READY),
    [SESSION_ERROR] = BIT(SESSION_STARTING) | BIT(SESSION_STARTED),
    [SESSION_DISCONNECTED] = BIT(SESSION_NEW) | BIT(SESSION_STARTING) | BIT(SESSION_STARTED) |
                             BIT(SESSION_READY) | BIT(SESSION_PAUSED) | BIT(SESSION_ERROR),
    [SESSION_STOPPED] = BIT(SESSION_NEW) | BIT(SESSION_STARTING) | BIT(SESSION_STARTED) |
                        BIT(SESSION_READY) | BIT(SESSION_PAUSED) | BIT(SESSION_ERROR) |
                        BIT(SESSION_DISCONNECTED),
};

static bool
valid(session_status_t st)
{
    return (unsigned)st < SESSION_STATUS_COUNT;
}

const char *
session_status_text(session_status_t st)
{
    return valid(st) ? texts[st] : "";
}

session_status_t
session_status_parse(const char *text)
{
    for (int st = SESSION_STARTING; st < SESSION_STATUS_COUNT; st++)
        if (text && strcmp(texts[st], text) == 0)
            return (session_status_t)st;
    return SESSION_NEW;
}

bool
session_status_may_become(session_status_t from, session_status_t to)
{
    return valid(from) && valid(to) && (entered_from[to] & BIT(from));
}

bool
session_status_takes_actions(session_status_t st)
{
    return st == SESSION_STARTING || st == SESSION_STARTED || st == SESSION_READY;
}
